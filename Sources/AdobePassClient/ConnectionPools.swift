import AsyncHTTPClient
import RegcodeEngine
import Synchronization

/// The HTTP clients behind the fleets' connection models (``ConnectionModel``): the caller's common client,
/// one client per `shared` pool and one per device for `perDevice`, created on first use.
///
/// AsyncHTTPClient pools connections per client and host, so a separate client is how a set of devices gets
/// connections of its own. Every client created here shares the common client's event loops.
public final class ConnectionPools: Sendable {
    private enum Key: Hashable {
        case pool(String)
        case device(String)
    }

    private let common: HTTPClient
    private let configuration: HTTPClient.Configuration
    private let clients = Mutex<[Key: HTTPClient]>([:])

    /// - Parameters:
    ///   - common: Carries calls without a model and `perRequest` calls; the caller shuts it down.
    ///   - configuration: The settings every created client starts from (timeouts, redirects).
    public init(common: HTTPClient, configuration: HTTPClient.Configuration) {
        self.common = common
        self.configuration = configuration
    }

    /// The client that carries a call of `context`.
    func client(for context: RequestContext) -> HTTPClient {
        switch context.connections {
        case nil, .perRequest:
            return common
        case .shared(let pool, let connections):
            return client(.pool(pool), connections: connections)
        case .perDevice:
            return client(.device(context.deviceID), connections: 1)
        }
    }

    private func client(_ key: Key, connections: Int) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[key] { return client }
            var configuration = self.configuration
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, connections)
            let client = HTTPClient(eventLoopGroup: common.eventLoopGroup, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Shuts down every client created here (not the common one).
    public func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        await withTaskGroup(of: Void.self) { group in
            for client in all {
                group.addTask { try? await client.shutdown() }
            }
        }
    }
}
