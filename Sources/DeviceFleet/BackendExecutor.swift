import AdobePassClient
import RegcodeEngine

/// Performs the engine's backend calls. ``AdobePassClient`` is the production executor.
public protocol BackendExecutor: Sendable {
    func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure>
}

extension AdobePassClient: BackendExecutor {}
