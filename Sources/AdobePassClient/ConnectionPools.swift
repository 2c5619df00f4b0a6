import AsyncHTTPClient
import KeepAliveHTTP
import NIOCore
import RegcodeEngine
import RegcodeSupport
import Synchronization

/// The connections behind the fleets' connection models (``ConnectionModel``): a common pool, one pool per
/// `shared` pool name and one per device for `perDevice`, created on first use.
///
/// A plain-HTTP backend is reached through ``KeepAliveConnectionPool``s (the hot path of a fleet); a TLS
/// backend through AsyncHTTPClient, whose pools are per client and host, so a separate client is how a set of
/// devices gets connections of its own there. The clients created here share the common client's event loops.
///
/// The keep-alive pools live on `keepAliveLoops`, a set per loop: a call made on one of them (a fleet partition's
/// actor runs on its loop) gets connections of that loop, so its answer is read on the thread that asked. A pool's
/// connections are split over the loops (at least one each); a device's own connection (`perDevice`) lives on the
/// loop of its first call, which is its partition's.
public final class ConnectionPools: Sendable {
    private enum Key: Hashable {
        case common
        case perRequest
        case pool(String)
        case device(String)
    }

    private struct PoolKey: Hashable {
        var origin: Origin
        var key: Key
        /// Index into `keepAliveLoops`.
        var loop: Int
    }

    private let common: HTTPClient
    /// Where pool `PoolKey.loop` lives: the fleet's loops, or (without them) the common client's whole group as one.
    private let keepAliveLoops: [any EventLoopGroup]
    /// The fleet's loops (empty without them), to find the caller's.
    private let fleetLoops: [any EventLoop]
    private let configuration: HTTPClient.Configuration
    /// Bounds the keep-alive connections of every pool together (nil: only each pool's own bound).
    public let connectionBudget: ConnectionBudget?
    private let clients = Mutex<[Key: HTTPClient]>([:])
    private let pools = Mutex<[PoolKey: KeepAliveConnectionPool]>([:])

    /// - Parameters:
    ///   - common: Carries TLS calls without a model and `perRequest` TLS calls; the caller shuts it down.
    ///   - configuration: The settings every created client and pool starts from (connect timeout, the
    ///     common pool's size).
    ///   - keepAliveLoops: Where the plain-HTTP connections live; the daemon gives its fleet partitions' loops, so a
    ///     device's call and its answer stay on one thread. Default: the common client's loops.
    ///   - connectionBudget: The keep-alive connections all pools may hold open together; the daemon sizes it from its
    ///     open-file limit, so `per-device` fleets larger than the limit fail connects instead of the process.
    public init(
        common: HTTPClient,
        configuration: HTTPClient.Configuration,
        keepAliveLoops: [any EventLoop]? = nil,
        connectionBudget: ConnectionBudget? = nil
    ) {
        self.common = common
        self.connectionBudget = connectionBudget
        self.fleetLoops = keepAliveLoops ?? []
        self.keepAliveLoops = fleetLoops.isEmpty ? [common.eventLoopGroup] : fleetLoops.map { $0 }
        self.configuration = configuration
    }

    /// The AsyncHTTPClient that carries a TLS call of `context`.
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

    /// The keep-alive pool that carries a plain-HTTP call of `context` to `origin`, on the caller's loop when it
    /// runs on one of `keepAliveLoops` (else on the first).
    func pool(for context: RequestContext, origin: Origin) -> KeepAliveConnectionPool {
        let loop = fleetLoops.count < 2 ? 0 : fleetLoops.firstIndex { $0.inEventLoop } ?? 0
        let share = { (total: Int) in EvenSplit.share(of: total, part: loop, count: self.keepAliveLoops.count) }
        let commonSize = configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit
        switch context.connections {
        case nil:
            return pool(PoolKey(origin: origin, key: .common, loop: loop), on: loop, connections: share(commonSize))
        case .perRequest:
            // Every call opens (and closes) its own connection; the bound only caps how many at once.
            return pool(PoolKey(origin: origin, key: .perRequest, loop: loop), on: loop, connections: share(commonSize))
        case .shared(let name, let connections):
            return pool(PoolKey(origin: origin, key: .pool(name), loop: loop), on: loop, connections: share(connections))
        case .perDevice:
            // One pool per device whichever loop asks (its calls all come from its partition's loop).
            return pool(PoolKey(origin: origin, key: .device(context.deviceID), loop: 0), on: loop, connections: 1)
        }
    }

    private func pool(_ key: PoolKey, on loop: Int, connections: Int) -> KeepAliveConnectionPool {
        pools.withLock { pools in
            if let pool = pools[key] { return pool }
            let pool = KeepAliveConnectionPool(
                origin: key.origin,
                eventLoopGroup: keepAliveLoops[loop],
                maxConnections: connections,
                connectTimeout: configuration.timeout.connect ?? .seconds(10),
                budget: connectionBudget
            )
            pools[key] = pool
            return pool
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

    /// Closes every pool and shuts down every client created here (not the common client).
    public func shutdown() async {
        let allPools = pools.withLock { pools in
            defer { pools.removeAll() }
            return Array(pools.values)
        }
        for pool in allPools { pool.shutdown() }
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
