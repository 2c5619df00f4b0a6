/// Performs the engine's backend calls: the I/O side of a ``DeviceAction/send(_:_:_:)``.
/// `AdobePassClient` is the production executor; tests answer from a script.
public protocol BackendExecutor: Sendable {
    /// Performs `request`; cancelling the calling task abandons the call.
    func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure>
}
