import BackendHTTP
import NIOCore
import NIOPosix
import RegcodeEngine
import RegcodeSupport
import Synchronization

/// The connections behind the fleets' connection models (``ConnectionModel``): a common pool, one pool per `shared`
/// pool name and one per device for `perDevice`, created on first use, for `http://` and `https://` origins alike.
///
/// The pools live on `loops`, a set per loop: a call made on one of them (a fleet partition's actor runs on its loop)
/// gets connections of that loop, so its answer is read on the thread that asked. A pool's connections are split over
/// the loops (at least one each); a device's own connection (`perDevice`) lives on the loop of its first call, which
/// is its partition's.
package final class ConnectionPools: Sendable {
    private enum Key: Hashable {
        case common
        case perRequest
        case pool(String)
        case device(String)
    }

    private struct PoolKey: Hashable {
        var origin: Origin
        var key: Key
        /// Index into `loops`.
        var loop: Int
    }

    /// Where pool `PoolKey.loop` lives: the fleet's loops, or (without them) the whole group as one.
    private let loops: [any EventLoopGroup]
    /// The fleet's loops (empty without them), to find the caller's.
    private let fleetLoops: [any EventLoop]
    private let commonConnections: Int
    private let connectTimeout: TimeAmount
    /// How `https://` origins are spoken to (nil: the defaults).
    package let tls: TLSClientContext?
    /// Connections opened by wire and TLS handshakes, over every pool.
    package let statistics = TransportStatistics()
    /// Bounds the connections of every pool together (nil: only each pool's own bound).
    package let connectionBudget: ConnectionBudget?
    private let pools = Mutex<[PoolKey: KeepAliveConnectionPool]>([:])

    /// - Parameters:
    ///   - commonConnections: The size of the common pool (calls without a model) and of the `perRequest` bound.
    ///   - connectTimeout: The longest wait for a TCP connection, and then for a TLS handshake.
    ///   - loops: Where the connections live; the daemon gives its fleet partitions' loops, so a device's call and its
    ///     answer stay on one thread. Default: NIO's shared group, as one.
    ///   - connectionBudget: The connections all pools may hold open together; the daemon sizes it from its open-file
    ///     limit, so `per-device` fleets larger than the limit fail connects instead of the process.
    ///   - tls: How to speak TLS to `https://` origins (nil: the system's roots, HTTP/2 when offered).
    package init(
        commonConnections: Int = 8,
        connectTimeout: TimeAmount = .seconds(3),
        loops: [any EventLoop]? = nil,
        connectionBudget: ConnectionBudget? = nil,
        tls: TLSClientContext? = nil
    ) {
        self.commonConnections = max(1, commonConnections)
        self.connectTimeout = connectTimeout
        self.connectionBudget = connectionBudget
        self.fleetLoops = loops ?? []
        self.loops = fleetLoops.isEmpty ? [MultiThreadedEventLoopGroup.singleton] : fleetLoops.map { $0 }
        self.tls = tls
    }

    /// The pool that carries a call of `context` to `origin`, on the caller's loop when it runs on one of the fleet's
    /// loops (else on the first).
    func pool(for context: RequestContext, origin: Origin) -> KeepAliveConnectionPool {
        let loop = callerLoop
        let share = { (total: Int) in EvenSplit.share(of: total, part: loop, count: self.loops.count) }
        switch context.connections {
        case nil:
            return pool(PoolKey(origin: origin, key: .common, loop: loop), on: loop, connections: share(commonConnections))
        case .perRequest:
            // Every call opens (and closes) its own connection; the bound only caps how many at once.
            return pool(PoolKey(origin: origin, key: .perRequest, loop: loop), on: loop, connections: share(commonConnections))
        case .shared(let name, let connections):
            return pool(PoolKey(origin: origin, key: .pool(name), loop: loop), on: loop, connections: share(connections))
        case .perDevice:
            // One pool per device whichever loop asks (its calls all come from its partition's loop).
            return pool(PoolKey(origin: origin, key: .device(context.deviceID), loop: 0), on: loop, connections: 1)
        }
    }

    /// The common pool to `origin` on the caller's loop: calls that belong to no device's connection model.
    func commonPool(origin: Origin) -> KeepAliveConnectionPool {
        let loop = callerLoop
        let connections = EvenSplit.share(of: commonConnections, part: loop, count: loops.count)
        return pool(PoolKey(origin: origin, key: .common, loop: loop), on: loop, connections: connections)
    }

    /// The index of the fleet loop the caller runs on (else the first).
    private var callerLoop: Int {
        fleetLoops.count < 2 ? 0 : fleetLoops.firstIndex { $0.inEventLoop } ?? 0
    }

    private func pool(_ key: PoolKey, on loop: Int, connections: Int) -> KeepAliveConnectionPool {
        pools.withLock { pools in
            if let pool = pools[key] { return pool }
            let pool = KeepAliveConnectionPool(
                origin: key.origin,
                eventLoopGroup: loops[loop],
                maxConnections: connections,
                connectTimeout: connectTimeout,
                budget: connectionBudget,
                tls: tls,
                statistics: statistics
            )
            pools[key] = pool
            return pool
        }
    }

    /// Closes every pool's connections; later calls fail.
    package func shutdown() {
        let allPools = pools.withLock { pools in
            defer { pools.removeAll() }
            return Array(pools.values)
        }
        for pool in allPools { pool.shutdown() }
    }
}
