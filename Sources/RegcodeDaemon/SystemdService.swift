import DeviceFleet
import Logging
import RegcodeEngine
import ServiceLifecycle
import Synchronization

/// Talks to systemd: `READY=1` once the database is open, the socket listens and every device
/// is resumed; `STATUS=` with a one-line fleet summary kept current; `WATCHDOG=1` at half of
/// `WATCHDOG_USEC`; `STOPPING=1` as soon as shutdown starts (it is the last service of the
/// group, so the first to hear of the shutdown).
final class SystemdService: Service {
    enum Milestone: Sendable { case socketListening, devicesResumed }

    private struct State {
        var milestones: Set<Milestone> = []
        var readySent = false
        var lastStatus: String?
        var override: String?
        /// Storage trouble, shown until storage recovers.
        var storage: String?
        /// `STOPPING=1` went out: no fleet summary after it (one computed meanwhile would read as if the daemon ran on).
        var stopping = false
    }

    private let notifier: SystemdNotifier
    private let watchdogInterval: Duration?
    private let fleet: PartitionedFleet
    /// Trouble with the wire to the backend (TLS), appended to the fleet summary.
    private let transportStatus: @Sendable () -> String?
    private let logger: Logger
    private let state = Mutex(State())
    private let refresh: Duration = .seconds(2)

    init(
        notifier: SystemdNotifier,
        watchdogInterval: Duration?,
        fleet: PartitionedFleet,
        transportStatus: @escaping @Sendable () -> String? = { nil },
        logger: Logger
    ) {
        self.notifier = notifier
        self.watchdogInterval = watchdogInterval
        self.fleet = fleet
        self.transportStatus = transportStatus
        self.logger = logger
    }

    /// Records a readiness milestone; the first time all are reached, `READY=1` goes out.
    func reached(_ milestone: Milestone) async {
        let sendReady = state.withLock { state -> Bool in
            state.milestones.insert(milestone)
            guard !state.readySent, state.milestones.count == 2 else { return false }
            state.readySent = true
            return true
        }
        guard sendReady else { return }
        // Not the phase summary: that reads every device on the fleet's actor, busy with the devices it just
        // started (0.1 s of a 50,000-device restart). The next refresh, within seconds, brings it.
        let status = Self.devices(await fleet.count) + ": starting"
        state.withLock { $0.lastStatus = status }
        notifier.notify("READY=1\nSTATUS=\(status)")
        logger.debug("notified systemd: ready", metadata: ["status": "\(status)"])
    }

    /// Shows a message (e.g. a failed reload) in `STATUS=` until the next change clears it.
    func setStatusOverride(_ message: String?) {
        state.withLock { $0.override = message }
        if let message { notifier.notify("STATUS=\(message)") }
    }

    /// Shows storage trouble in `STATUS=` (nil once it is over), at once and on every refresh.
    func setStorageStatus(_ message: String?) {
        let changed = state.withLock { state -> Bool in
            defer { state.storage = message }
            return state.storage != message
        }
        guard changed else { return }
        if let message { notifier.notify("STATUS=\(message)") }
    }

    func run() async throws {
        guard notifier.isEnabled else {
            try? await gracefulShutdown()
            return
        }
        let tick = min(watchdogInterval ?? refresh, refresh)
        var sinceWatchdog = Duration.zero
        await withGracefulShutdownHandler {
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    try await Task.sleep(for: tick)
                } catch {
                    return
                }
                if let watchdogInterval {
                    sinceWatchdog += tick
                    if sinceWatchdog >= watchdogInterval {
                        sinceWatchdog = .zero
                        notifier.notify("WATCHDOG=1")
                    }
                }
                await updateStatus()
            }
        } onGracefulShutdown: {
            self.state.withLock { state in
                state.stopping = true
                self.notifier.notify("STOPPING=1\nSTATUS=stopping")
            }
        }
    }

    private func updateStatus() async {
        guard state.withLock({ $0.readySent }) else { return }
        let summary = await summary()
        let transport = transportStatus()
        // Sent under the lock, so a summary computed while the shutdown began cannot follow `STOPPING=1`.
        state.withLock { state in
            let text = [summary, transport, state.storage, state.override].compactMap { $0 }.joined(separator: "; ")
            guard !state.stopping, text != state.lastStatus else { return }
            state.lastStatus = text
            notifier.notify("STATUS=\(text)")
        }
    }

    /// "12 devices: 3 polling, 9 authenticated".
    func summary() async -> String {
        let counts = await fleet.phaseCounts()
        let parts = DevicePhase.allCases.compactMap { phase in counts[phase].map { "\($0) \(phase.rawValue)" } }
        return Self.devices(counts.values.reduce(0, +)) + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
    }

    /// "1 device", "12 devices".
    private static func devices(_ count: Int) -> String {
        "\(count) device\(count == 1 ? "" : "s")"
    }
}
