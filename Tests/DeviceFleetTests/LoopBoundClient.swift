import AdobePassClient
import Logging
import NIOCore

/// A client of the simulator at `baseURL` whose connections live on `loops`, as the daemon builds it for its fleet:
/// a call made on one of them is carried by that loop's connections.
struct LoopBoundClient {
    let client: AdobePassClient
    private let pools: ConnectionPools

    init(baseURL: String, loops: [any EventLoop]) {
        pools = ConnectionPools(loops: loops)
        var configuration = AdobePassClientConfiguration(baseURL: baseURL)
        configuration.requestTimeout = .seconds(5)
        client = AdobePassClient(configuration: configuration, connectionPools: pools, logger: Logger(label: "test"))
    }

    /// Closes the pools' connections.
    func shutdown() async throws {
        pools.shutdown()
    }
}
