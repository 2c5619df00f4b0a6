import ServiceLifecycle

/// Waits for the backend address, then brings the devices up; stays until shutdown so the
/// group treats it as a service like the others.
struct Starter: Service {
    let daemon: Daemon
    let backendURLs: AsyncStream<String>

    func run() async throws {
        var iterator = backendURLs.makeAsyncIterator()
        guard let url = await iterator.next() else { return }
        try await daemon.start(backendURL: url)
        try? await gracefulShutdown()
    }
}
