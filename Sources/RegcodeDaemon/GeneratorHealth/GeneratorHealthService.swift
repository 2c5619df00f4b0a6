import DeviceEvents
import DeviceFleet
import Foundation
import Logging
import RegcodeEngine
import ServiceLifecycle
import Synchronization

/// Samples the emulator's own health once a second into a ``GeneratorHealthTracker``: late polls from the live
/// figures, the fleet's hold, calls waiting for a slot, and the process's CPU share. Logs when the emulator falls
/// behind and when it catches up (once each, not every second).
struct GeneratorHealthService: Service {
    let health: GeneratorHealth
    let liveStats: LiveStats
    let fleet: PartitionedFleet
    let pipeline: EventPipeline<ContinuousClock>
    let logger: Logger
    /// Seconds the late-poll share and the CPU share are taken over.
    static let windowSeconds = 10

    func run() async throws {
        var cpu = CPUShare(windowSeconds: Self.windowSeconds)
        while !Task.isCancelled {
            let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            let recent = liveStats.recentTotals(nowSecond: nowMs / 1000, seconds: Self.windowSeconds)
            let sample = GeneratorHealthTracker.Sample(
                polls: recent.polls,
                latePolls: recent.late,
                held: pipeline.health.holding,
                callsWaitingForSlot: await fleet.callsWaitingForSlot,
                cpuShare: cpu.read(atMs: nowMs)
            )
            let (before, after) = health.observe(sample, atMs: nowMs)
            if !before && !after.isEmpty {
                logger.warning(
                    "the emulator is falling behind its own schedule: figures from now on measure it, not the backend",
                    metadata: ["reasons": "\(after.map { $0.rawValue }.joined(separator: ","))"]
                )
            } else if before && after.isEmpty {
                logger.notice("the emulator is back on schedule")
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            } catch {
                return
            }
        }
    }
}

/// The tracker behind a lock: the sampling service writes it, `daemon.status` and `/metrics` read it.
final class GeneratorHealth: Sendable {
    private let tracker = Mutex(GeneratorHealthTracker())

    /// Observes `sample`; whether the emulator was behind before, and the reasons after.
    func observe(_ sample: GeneratorHealthTracker.Sample, atMs nowMs: Int64) -> (wasBehind: Bool, reasons: [GeneratorHealthTracker.Reason]) {
        tracker.withLock { tracker in
            let before = tracker.isBehind
            return (before, tracker.observe(sample, atMs: nowMs))
        }
    }

    var snapshot: GeneratorHealthTracker { tracker.withLock { $0 } }
}

/// The process's CPU time over wall time across the last readings, as a share of the cores it may use.
struct CPUShare {
    let windowSeconds: Int
    private var readings: [(wallMs: Int64, cpuMs: Int64)] = []
    private let cores = Double(max(1, ProcessInfo.processInfo.activeProcessorCount))

    init(windowSeconds: Int) {
        self.windowSeconds = windowSeconds
    }

    mutating func read(atMs nowMs: Int64) -> Double? {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return nil }
        let cpuMs = Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        readings.append((nowMs, cpuMs))
        while let first = readings.first, nowMs - first.wallMs > Int64(windowSeconds) * 1000 { readings.removeFirst() }
        guard let first = readings.first, nowMs > first.wallMs else { return nil }
        return Double(cpuMs - first.cpuMs) / Double(nowMs - first.wallMs) / cores
    }
}
