import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on SIGHUP.
struct ReloadService: Service {
    let daemon: Daemon

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await daemon.reload()
        }
    }
}
