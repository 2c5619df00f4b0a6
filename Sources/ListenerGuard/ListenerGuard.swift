import Logging
import NIOCore
import RegcodeSupport

/// What bounds one listener: its cap and counts, its timeouts and the rate-limited log its handlers share.
///
/// Its listening channel gets ``serverHandlers()`` in front of everything else (NIO's accept back-off on EMFILE and
/// ENFILE, the cap, the accept-error sink); each connection gets a ``ReadDeadlineHandler``.
package struct ListenerGuard: Sendable {
    package let limits: ListenerLimits
    package let counters: ListenerCounters
    let log: RepeatLimitedLog<ContinuousClock>

    package init(name: String, limits: ListenerLimits, logger: Logger) {
        self.limits = limits
        self.counters = ListenerCounters(name: name, cap: limits.maxConnections)
        self.log = RepeatLimitedLog(logger: logger)
    }

    /// The listening channel's handlers, in order: accept back-off, the cap, and a sink for accept errors (EMFILE and
    /// friends, which NIO reports without closing the listener, must not end an async accept sequence).
    package func serverHandlers() -> [any ChannelHandler] {
        [
            // Stops accepting for a moment when the process is out of descriptors, instead of spinning on the error.
            AcceptBackoffHandler(),
            ConnectionCapHandler(counters: self.counters, log: self.log),
            AcceptErrorHandler(name: self.counters.name, log: self.log),
        ]
    }

    /// Puts ``serverHandlers()`` first in a listening channel that is already running (a server built by a framework
    /// that hands out its channel only once it listens).
    package func install(on serverChannel: any Channel) async throws {
        try await serverChannel.eventLoop.submit {
            try serverChannel.pipeline.syncOperations.addHandlers(self.serverHandlers(), position: .first)
        }.get()
    }

    /// Counts and logs a connection closed by a timeout.
    func timedOut(_ kind: ReadDeadlineHandler.Expiry) {
        self.counters.countTimeout()
        self.log.log(
            .info,
            reason: "timeout \(kind.rawValue)",
            kind.message,
            metadata: ["listener": "\(self.counters.name)"]
        )
    }
}
