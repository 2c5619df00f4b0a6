import RegcodeEngine

/// A backend that never answers (registry and control tests drive no scenario); a removed device's call ends with it.
package struct SilentBackend: BackendExecutor {
    package init() {}

    nonisolated(nonsending) package func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure>
    {
        let (never, continuation) = AsyncStream<Void>.makeStream()
        for await _ in never {}
        continuation.finish()
        return .failure(.transport("cancelled"))
    }
}
