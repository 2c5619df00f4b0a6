import AdobePassClient
import DeviceFleet
import RegcodeEngine
import Synchronization

/// The fleet's backend, bound once its address is known: the in-process simulator only learns
/// its port after it starts listening, and devices are added only after that.
final class DeferredBackend: BackendExecutor {
    private let client = Mutex<AdobePassClient?>(nil)

    func bind(_ client: AdobePassClient) {
        self.client.withLock { $0 = client }
    }

    nonisolated(nonsending) func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure> {
        guard let client = client.withLock({ $0 }) else { return .failure(.transport("backend not bound yet")) }
        return await client.execute(request, context: context)
    }
}
