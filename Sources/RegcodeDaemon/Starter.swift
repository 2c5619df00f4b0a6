import ServiceLifecycle

/// Waits for the backend address, then brings the devices up; stays until shutdown so the
/// group treats it as a service like the others.
struct Starter: Service {
    let backendURLs: AsyncStream<String>
    /// Brings the devices up against the backend at the URL given.
    let start: @Sendable (String) async throws -> Void

    func run() async throws {
        var iterator = backendURLs.makeAsyncIterator()
        guard let url = await iterator.next() else { return }
        try await start(url)
        try? await gracefulShutdown()
    }
}
