import Synchronization

/// The simulator's state as every request reaches it: one lock around ``SimulatorState``.
///
/// A lock rather than an actor: each request's work on the state is a few dictionary operations with no suspension
/// point, and an actor hop per request (two thread switches, and under NIO's executor takeover a handler left on
/// whichever loop ran the actor) cost more than the work itself.
package final class SharedSimulatorState: Sendable {
    /// The configuration the state was created with.
    package let configuration: SimulatorConfiguration
    private let state: Mutex<SimulatorState>

    /// Creates empty state governed by `configuration` (TTLs, MVPDs, deny lists, clock).
    package init(configuration: SimulatorConfiguration = .init()) {
        self.configuration = configuration
        self.state = Mutex(SimulatorState(configuration: configuration))
    }

    /// Runs `body` with the state, holding the lock; `body` must not block or wait.
    package func withLock<Result, Failure: Error>(
        _ body: (SimulatorState) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try self.state.withLock { (state) throws(Failure) -> sending Result in try body(state) }
    }
}
