import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on SIGHUP.
struct ReloadService: Service {
    /// Reads the configuration again and applies what changed.
    let reload: @Sendable () async -> Void

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload()
        }
    }
}
