/// Performs the engine's backend calls: the I/O side of a ``DeviceAction/send(_:_:_:)``.
/// `AdobePassClient` is the production executor; tests answer from a script.
package protocol BackendExecutor: Sendable {
    /// Performs `request`; cancelling the calling task abandons the call.
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`): the fleet calls it from its actor, on the event loop
    /// its connections use, so the call and its answer need no hop to another executor and back.
    nonisolated(nonsending) func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure>
}
