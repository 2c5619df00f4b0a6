import DequeModule
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import Synchronization

/// HTTP exchanges with one origin over at most `maxConnections` persistent connections; callers beyond that wait in
/// order for a connection (or an HTTP/2 stream) to come free.
///
/// `http://` origins speak HTTP/1.1. `https://` origins speak TLS (``TLSClientContext``) and, when the server offers
/// it by ALPN, HTTP/2: such a connection carries up to the server's stream limit of exchanges at once, and is held in
/// the idle list once per free stream. Both wires share the deadlines, the descriptor budget, the retry of an
/// idempotent request after an idle close (a GOAWAY or a refused stream on HTTP/2), and never follow a redirect.
///
/// A request with a ``KeepAliveRequest/sourceAddress`` runs only on a connection bound to that local address, so the
/// server sees each source as its own client. `maxConnections` still bounds the pool: when it is reached and a caller
/// needs an address no open connection has, an idle connection of another address is closed to make room (a
/// connection in use is never closed for it). Requests without a source address take the first idle connection as
/// before, at no extra cost.
///
/// Written on SwiftNIO's HTTP codec instead of going through AsyncHTTPClient because a device's poll is
/// the daemon's hot path: AsyncHTTPClient's per-request machinery (its pool manager's lock and state
/// machine, a `RequestBag` with a tracing span, URL parsing, a chain of futures) took about a quarter of the
/// daemon's CPU per poll in `perf`, and the fleet needs none of what it buys (redirects, proxies,
/// decompression, streaming). Here an exchange is one object, one timer and one write; every deadline,
/// cancellation and close still ends it exactly once.
package final class KeepAliveConnectionPool: Sendable {
    private struct State {
        var idle: [PooledConnection] = []
        var open = 0
        var waiters = Deque<Exchange>()
        var connections: [ObjectIdentifier: PooledConnection] = [:]
        /// Idle connections being closed to make room for a waiter of another source address.
        var evicted: Set<ObjectIdentifier> = []
        var isShutdown = false

        /// Takes a fully idle connection bound to another address than `source` off the idle list for a waiter that
        /// needs a connection of its own (at most one such close pending per waiter); nil when there is none.
        mutating func evictIdle(except source: SocketAddress?) -> PooledConnection? {
            guard !idle.isEmpty, evicted.count < waiters.count else { return nil }
            if let candidate = idle.last(where: { $0.slots == 1 && $0.source != source }) { return evict(candidate) }
            // HTTP/2: a connection whose every stream is free (counted in one pass over the list).
            var free: [ObjectIdentifier: Int] = [:]
            for connection in idle where connection.source != source { free[ObjectIdentifier(connection), default: 0] += 1 }
            guard let candidate = idle.last(where: { free[ObjectIdentifier($0)] == $0.slots }) else { return nil }
            return evict(candidate)
        }

        /// Whether every slot of `connection` is free once `releasing` more come back (an HTTP/2 connection is in the
        /// idle list once per free stream; an HTTP/1.1 one in the list or being released is free).
        func isFullyIdle(_ connection: PooledConnection, releasing: Int = 0) -> Bool {
            connection.slots == 1 || idle.lazy.filter { $0 === connection }.count + releasing == connection.slots
        }

        mutating func evict(_ connection: PooledConnection) -> PooledConnection {
            idle.removeAll { $0 === connection }
            evicted.insert(ObjectIdentifier(connection))
            connection.stopAccepting()
            return connection
        }
    }

    /// What becomes of a connection an exchange has finished with.
    private enum Released {
        case hand(Exchange)
        case close
        /// Closed so that the first waiter, of another source address, gets a connection of its own.
        case evict
        case keep
        /// The connection left the pool (closed, or retired by a GOAWAY).
        case gone
    }

    private enum Next {
        case run(PooledConnection)
        case connect
        case wait
        /// Wait while `PooledConnection` (idle, of another source address) closes to make room.
        case evict(PooledConnection)
        case refuse
        case overBudget(limit: Int)
    }

    package let origin: Origin
    package let maxConnections: Int
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    /// Shared with the process's other pools: every connection counts against it from connect to close.
    private let budget: ConnectionBudget?
    /// Required for an `https://` origin.
    private let tls: TLSClientContext?
    let statistics: TransportStatistics?
    private let state = Mutex(State())

    /// - Parameters:
    ///   - maxConnections: Connections open at once (at least 1).
    ///   - connectTimeout: Longest wait for a TCP connection, and then for the TLS handshake (the exchange's
    ///     deadline may end either sooner).
    ///   - budget: The connections all pools of the process may hold together (nil: no bound beyond `maxConnections`).
    ///   - tls: How to speak TLS; an `https://` origin without it uses ``TLSClientSettings``' defaults.
    ///   - statistics: Where connections and handshakes are counted (shared by the process's pools).
    package init(
        origin: Origin,
        eventLoopGroup: any EventLoopGroup,
        maxConnections: Int,
        connectTimeout: TimeAmount = .seconds(3),
        budget: ConnectionBudget? = nil,
        tls: TLSClientContext? = nil,
        statistics: TransportStatistics? = nil
    ) {
        self.origin = origin
        self.group = eventLoopGroup
        self.maxConnections = max(1, maxConnections)
        self.connectTimeout = connectTimeout
        self.budget = budget
        self.tls = origin.usesTLS ? (tls ?? TLSClientContext.systemDefault) : nil
        self.statistics = statistics
    }

    /// Sends `request` and returns its answer, all of it before `deadline`.
    ///
    /// - Throws: ``KeepAliveHTTPError``: deadline, connect failure, close, cancellation, shutdown.
    nonisolated(nonsending) package func execute(
        _ request: KeepAliveRequest,
        deadline: NIODeadline,
        maxBodyBytes: Int
    ) async throws -> KeepAliveResponse {
        if let invalid = request.headers.first(where: { !HeaderField.isValid(name: $0.0, value: $0.1) }) {
            throw KeepAliveHTTPError.protocolError("header \(HeaderField.printable(invalid.0)) is not a valid HTTP field")
        }
        let exchange = Exchange(request: request, maxBodyBytes: maxBodyBytes)
        // One timer per exchange covers the wait for a connection, the connect and the answer.
        let timer = group.any().scheduleTask(deadline: deadline) { exchange.abort(.deadlineExceeded) }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if exchange.install(continuation) { submit(exchange) }
            }
        } onCancel: {
            exchange.abort(.cancelled)
        }
    }

    /// The loops its connections are opened on.
    package var eventLoopGroup: any EventLoopGroup { group }

    /// Connections open now (idle or busy).
    package var openConnections: Int { state.withLock { $0.open } }

    /// Closes every connection and fails the callers still waiting; later calls fail with ``KeepAliveHTTPError/shutdown``.
    package func shutdown() {
        let (connections, waiters) = state.withLock { state in
            state.isShutdown = true
            defer {
                state.idle = []
                state.waiters = []
            }
            return (Array(state.connections.values), state.waiters)
        }
        for waiter in waiters { waiter.finish(.failure(.shutdown)) }
        for connection in connections { connection.channel.close(promise: nil) }
    }

    func submit(_ exchange: Exchange) {
        let next: Next = state.withLock { state in
            guard !state.isShutdown else { return .refuse }
            let source = exchange.request.sourceAddress
            // Without source addresses every idle connection matches: the last one, as it always was.
            if let connection = state.idle.last, connection.source == source {
                state.idle.removeLast()
                return .run(connection)
            }
            if !state.idle.isEmpty, let index = state.idle.lastIndex(where: { $0.source == source }) {
                return .run(state.idle.remove(at: index))
            }
            if state.open < maxConnections {
                if budget?.acquire() ?? true {
                    state.open += 1
                    return .connect
                }
                // Nothing of this pool's will come free to wait for.
                if state.open == 0, let budget { return .overBudget(limit: budget.limit) }
            }
            state.waiters.append(exchange)
            if state.open >= maxConnections, let victim = state.evictIdle(except: source) { return .evict(victim) }
            return .wait
        }
        switch next {
        case .run(let connection): run(exchange, on: connection)
        case .connect: connect(for: exchange)
        case .wait: break
        case .evict(let victim): victim.channel.close(promise: nil)
        case .refuse: exchange.finish(.failure(.shutdown))
        case .overBudget(let limit): exchange.finish(.failure(.connectionBudgetExhausted(limit: limit)))
        }
    }

    private func run(_ exchange: Exchange, on connection: PooledConnection) {
        // On HTTP/2 a deadline closes the exchange's stream, never the connection its neighbours share.
        if exchange.attach(to: connection.version == .http1 ? connection.channel : nil) {
            connection.start(exchange)
        } else {
            // It ended (deadline, cancellation) while it waited: the connection goes to the next caller.
            release(connection)
        }
    }

    /// An exchange on `connection` is complete (or an HTTP/2 stream's slot came free) and the connection stays open.
    func release(_ connection: PooledConnection) {
        let next: Released = state.withLock { state in
            // Closed meanwhile, or draining after a GOAWAY: the slot goes nowhere.
            guard state.connections[ObjectIdentifier(connection)] != nil, connection.isAccepting else { return .gone }
            while let waiter = state.waiters.first {
                guard waiter.isQueued else {
                    state.waiters.removeFirst()
                    continue
                }
                if waiter.request.sourceAddress == connection.source {
                    state.waiters.removeFirst()
                    return .hand(waiter)
                }
                // The first waiter needs another source address: once this connection is wholly idle it makes room.
                if state.evicted.count < state.waiters.count, state.isFullyIdle(connection, releasing: 1) {
                    _ = state.evict(connection)
                    return .evict
                }
                break
            }
            if state.isShutdown { return .close }
            state.idle.append(connection)
            return .keep
        }
        switch next {
        case .hand(let waiter): run(waiter, on: connection)
        case .close, .evict: connection.channel.close(promise: nil)
        case .keep, .gone: break
        }
    }

    /// Sends `exchange` once more on another connection when it is idempotent and has not been retried yet
    /// (RFC 9110 §9.2.2); false when it may not be.
    func retry(_ exchange: Exchange) -> Bool {
        guard exchange.request.method.isIdempotent, exchange.claimRetry(), exchange.detach() else { return false }
        submit(exchange)
        return true
    }

    /// `connection` closed (by either side), or will take no new exchange (an HTTP/2 GOAWAY): its place goes to the
    /// next waiting caller, on a new connection.
    func closed(_ connection: PooledConnection) {
        let next: NextForWaiters? = state.withLock { state in
            guard state.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return nil }
            state.evicted.remove(ObjectIdentifier(connection))
            state.idle.removeAll { $0 === connection }
            state.open -= 1
            budget?.release()
            return takeWaiterForNewConnection(&state)
        }
        next?.proceed(self)
    }

    /// What the callers still waiting get once a connection of the pool is gone.
    private enum NextForWaiters {
        /// The first of them, with a connection counted for it.
        case connect(Exchange)
        /// All of them: the budget is spent and the pool has no connection left to hand on.
        case refuse([Exchange], limit: Int)
        case none

        func proceed(_ pool: KeepAliveConnectionPool) {
            switch self {
            case .connect(let waiter): pool.connect(for: waiter)
            case .refuse(let waiters, let limit):
                for waiter in waiters { waiter.finish(.failure(.connectionBudgetExhausted(limit: limit))) }
            case .none: break
            }
        }
    }

    private func takeWaiterForNewConnection(_ state: inout State) -> NextForWaiters {
        guard !state.isShutdown, state.open < maxConnections, state.waiters.contains(where: \.isQueued) else { return .none }
        guard budget?.acquire() ?? true else {
            guard state.open == 0, let budget else { return .none }
            defer { state.waiters.removeAll() }
            return .refuse(Array(state.waiters), limit: budget.limit)
        }
        while let waiter = state.waiters.popFirst() {
            if waiter.isQueued {
                state.open += 1
                return .connect(waiter)
            }
        }
        budget?.release()
        return .none
    }

    private func connect(for exchange: Exchange) {
        let origin = self.origin
        let tls = self.tls
        let handshakeTimeout = connectTimeout
        let loop = group.next()
        let ready = loop.makePromise(of: ConnectionReady.self)
        let source = exchange.request.sourceAddress
        var bootstrap = ClientBootstrap(group: loop)
        if let source { bootstrap = bootstrap.bind(to: source) }
        bootstrap
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                do {
                    let sync = channel.pipeline.syncOperations
                    if origin.usesTLS {
                        // The system's trust store could not be read: nothing may go out in the clear instead.
                        guard let tls else { throw KeepAliveHTTPError.tls(.other("no TLS context: the system's trust store cannot be read")) }
                        let verdict = HandshakeVerdict()
                        try sync.addHandler(tls.makeHandler(host: origin.host, verdict: verdict))
                        try sync.addHandler(
                            TLSConnectionSetupHandler(
                                origin: origin,
                                preference: tls.settings.httpVersion,
                                verdict: verdict,
                                handshakeTimeout: handshakeTimeout,
                                ready: ready
                            )
                        )
                    } else {
                        // Fields are checked once per request in `execute`, before anything is queued or sent.
                        try sync.addHTTPClientHandlers(enableOutboundHeaderValidation: false)
                        try sync.addHandler(ExchangeHandler(origin: origin))
                        ready.succeed(ConnectionReady(version: .http1, slots: 1))
                    }
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .connect(host: origin.host, port: origin.port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    ready.futureResult.whenComplete { readiness in
                        switch readiness {
                        case .success(let ready):
                            self.connected(channel, ready: ready, source: source, for: exchange)
                        case .failure(let error):
                            channel.close(promise: nil)
                            self.connectFailed(error, for: exchange)
                        }
                    }
                case .failure(let error):
                    ready.fail(error)
                    self.connectFailed(error, for: exchange)
                }
            }
    }

    /// On the new channel's event loop, once it speaks HTTP (after the TLS handshake and, on HTTP/2, the server's
    /// first SETTINGS).
    private func connected(_ channel: any Channel, ready: ConnectionReady, source: SocketAddress?, for exchange: Exchange) {
        let sync = channel.pipeline.syncOperations
        let wire: PooledConnection.Wire
        let http1Handler = try? sync.handler(type: ExchangeHandler.self)
        let http2Handler = try? sync.handler(type: HTTP2ConnectionHandler.self)
        switch ready.version {
        case .http1:
            guard let http1Handler else { return setUpFailed(channel, for: exchange) }
            wire = .http1(http1Handler)
        case .http2:
            guard let multiplexer = try? sync.handler(type: NIOHTTP2Handler.self).syncMultiplexer(), http2Handler != nil else {
                return setUpFailed(channel, for: exchange)
            }
            wire = .http2(multiplexer)
        }
        let connection = PooledConnection(channel: channel, wire: wire, slots: ready.slots, source: source, pool: self)
        statistics?.opened(connection.version, tls: origin.usesTLS)
        let isShutdown = state.withLock { state in
            if !state.isShutdown { state.connections[ObjectIdentifier(connection)] = connection }
            return state.isShutdown
        }
        guard !isShutdown, channel.isActive else {
            // Shut down meanwhile, or closed before the pool knew it (channelInactive saw no connection yet).
            if !isShutdown { state.withLock { _ = $0.connections.removeValue(forKey: ObjectIdentifier(connection)) } }
            channel.close(promise: nil)
            connectFailed(isShutdown ? KeepAliveHTTPError.shutdown : .closedByServer, for: exchange)
            return
        }
        http1Handler?.connection = connection
        http2Handler?.connection = connection
        let alone = exchange.request.closeConnection
        // A connection for one call (`per-request`) carries no other, whatever its stream limit.
        if alone { connection.stopAccepting() }
        run(exchange, on: connection)
        // An HTTP/2 connection's other streams go to the callers waiting, or to the idle list.
        if !alone {
            for _ in 1..<connection.slots { release(connection) }
        }
    }

    private func setUpFailed(_ channel: any Channel, for exchange: Exchange) {
        channel.close(promise: nil)
        connectFailed(KeepAliveHTTPError.protocolError("connection set-up failed"), for: exchange)
    }

    private func connectFailed(_ error: any Error, for exchange: Exchange) {
        let failure: KeepAliveHTTPError =
            switch error {
            case let error as KeepAliveHTTPError: error
            case ChannelError.connectTimeout: .connectTimeout
            default: TLSHandshakeFailure.classify(error).map { .tls($0) } ?? .connectFailed("\(error)")
            }
        if case .tls = failure { statistics?.handshakeFailed() }
        exchange.finish(.failure(failure))
        let next = state.withLock { state in
            state.open -= 1
            budget?.release()
            return takeWaiterForNewConnection(&state)
        }
        next.proceed(self)
    }
}
