import AdobePassClient
import AsyncHTTPClient
import Logging
import NIOCore

/// A client of the simulator at `baseURL` whose keep-alive connections live on `loops`, as the daemon builds it
/// for its fleet: a call made on one of them is carried by that loop's connections.
struct LoopBoundClient {
    let client: AdobePassClient
    private let pools: ConnectionPools
    private let httpClient: HTTPClient

    init(baseURL: String, loops: [any EventLoop]) {
        httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        pools = ConnectionPools(common: httpClient, configuration: HTTPClient.Configuration(), keepAliveLoops: loops)
        var configuration = AdobePassClientConfiguration(baseURL: baseURL)
        configuration.requestTimeout = .seconds(5)
        client = AdobePassClient(configuration: configuration, httpClient: httpClient, connectionPools: pools, logger: Logger(label: "test"))
    }

    /// Closes the pools' connections, then the HTTP client.
    func shutdown() async throws {
        await pools.shutdown()
        try await httpClient.shutdown()
    }
}
