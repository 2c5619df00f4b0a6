import AdobePassClient
import ServiceLifecycle

/// Closes the backend's connections once the fleet has stopped (it shuts down just before this service) and before
/// the embedded simulator does (just after). The simulator's graceful shutdown waits for its open connections, and the
/// fleet's idle keep-alive ones held it until the simulator's 60 s idle timeout closed them: a timed run then ended a
/// minute late, now and then.
struct BackendConnectionsService: Service {
    let pools: ConnectionPools

    func run() async throws {
        // Cancelled instead of shut down: the connections close all the same.
        try? await gracefulShutdown()
        pools.shutdown()
    }
}
