import ControlRPC
import ListenerGuard
import Logging
import NIOCore
import NIOPosix
import RegcodeSupport
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the control server could not start.
package enum ControlServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A live process already accepts connections on the socket path.
    case socketInUse(String)
    /// Something other than a socket is at the socket path; it is left alone.
    case notASocket(String)
    /// The path does not fit in a `sockaddr_un`.
    case pathTooLong(String)
    case socketSetupFailed(path: String, operation: String, errno: CInt)
    /// An inherited descriptor that is not a Unix-domain stream socket.
    case unsupportedListeningSocket(fd: CInt, reason: String)
    /// `run()` was called more than once.
    case alreadyStarted

    package var description: String {
        switch self {
        case .socketInUse(let path):
            "control socket \(path) is in use: another daemon is listening on it"
        case .notASocket(let path):
            "control socket path \(path) exists and is not a socket; refusing to replace it"
        case .pathTooLong(let path):
            "control socket path \(path) is too long for a Unix-domain socket address"
        case .socketSetupFailed(let path, let operation, let code):
            "control socket \(path): \(operation) failed: \(String(cString: strerror(code)))"
        case .unsupportedListeningSocket(let fd, let reason):
            "inherited control socket (fd \(fd)) is unusable: \(reason)"
        case .alreadyStarted:
            "the control server was already started"
        }
    }
}

/// The control socket: JSON-RPC 2.0 over a Unix stream socket, one JSON object per line.
///
/// - Requests on one connection are handled one at a time and answered in order; connections are independent.
/// - Framing: lines end with `\n` (`\r\n` accepted), at most ``Configuration/maxLineLength`` bytes; a longer line is
///   discarded and answered with -32600 (`id` null), and the connection carries on. Blank lines are ignored.
/// - A line is parsed in one pass over its bytes that stops at the first break of the JSON grammar (-32700 if it is
///   not JSON) or of ``Configuration/inputLimits`` (nesting depth, string and number length, members and elements
///   per container; -32600 naming the limit). Either way `id` is null and the connection carries on. Lines are
///   parsed and handled in the connection's task, never on the event loop that does other connections' I/O.
/// - Back-pressure, not refusal, bounds a connection that pipelines requests without reading the replies: once
///   ``Configuration/maxPendingRequests`` lines wait unanswered, the server stops reading that socket until the
///   backlog drains, so the peer's writes block in its kernel buffer. Nothing is dropped and no error is sent.
/// - Errors: -32700 parse error and -32600 invalid request (`id` null when it could not be read; batches are refused
///   with -32600), -32601/-32602 and application codes from the ``ControlHandler``. Notifications get no reply.
///   Only a broken connection ends a session.
/// - Peers are checked with `SO_PEERCRED` against ``Configuration/peerPolicy``; a refused peer gets one error line
///   (code 1005, "permission denied") and is disconnected.
/// - Closing the write side of a connection ends its session: pending calls are still answered, subscriptions end.
/// - Graceful shutdown stops accepting, removes the socket file (only one this server created), lets every
///   connection finish the calls it already sent, and ends subscriptions.
package final class ControlServer: Service, Sendable {
    /// Where the server listens.
    package enum Listener: Sendable, Hashable {
        /// Create a socket file at this path (replacing a stale one) and remove it on shutdown.
        case path(String)
        /// Adopt an already bound, listening Unix stream socket, e.g. from systemd socket activation. Its file, if
        /// any, belongs to whoever created it and is left in place.
        case fileDescriptor(CInt)
    }

    /// How the server listens, whom it serves, and its limits.
    package struct Configuration: Sendable {
        package var listener: Listener
        /// Mode of a socket file the server creates.
        package var socketMode: mode_t = 0o660
        /// Group given the socket file the server creates, and allowed by the default peer policy.
        package var group: gid_t?
        /// Who may connect; nil means ``PeerPolicy/ownerRootOrGroup(_:ownerUID:)`` with ``group``.
        package var peerPolicy: PeerPolicy?
        /// The longest line accepted, in bytes, without its newline.
        package var maxLineLength = 1 << 20
        /// How long a cut-off subscriber gets to take its final `cutoff` notification before it is disconnected.
        package var cutOffGracePeriod: Duration = .seconds(2)
        /// Shape limits every request line must meet before it is parsed.
        package var inputLimits = InputLimits()
        /// Where request lines are parsed and answered: off the event loops, a bounded number at once.
        package var inputWorkers = InputWorkers.shared
        /// How many received lines one connection may have waiting to be answered before the server stops reading
        /// from it (plus at most one socket read's worth, 64 KiB, already in hand). Requests are handled one at a
        /// time, so a deeper queue buys a pipelining client nothing; it bounds a connection's input memory at about
        /// this many lines of ``maxLineLength``. Default 64.
        package var maxPendingRequests = 64
        /// `listen()` backlog of a socket the server creates: the system's maximum (`net.core.somaxconn`), so a burst
        /// of clients connecting at once is not refused.
        package var backlog: CInt = ListenBacklog.system
        /// How many connections the server holds (past it, a new one is accepted and closed at once, and counted), how
        /// long a connection with no subscription and no call in progress may stay silent, and how long a line may
        /// take to arrive once begun. A subscriber that only reads events is never idled out.
        package var limits = ListenerLimits(maxConnections: 1024)

        package init(listener: Listener, group: gid_t? = nil) {
            self.listener = listener
            self.group = group
        }

        var effectivePeerPolicy: PeerPolicy {
            self.peerPolicy ?? .ownerRootOrGroup(self.group)
        }
    }

    private struct State {
        enum Phase {
            case idle
            case starting
            case running(any Channel)
            case stopped
        }

        var phase = Phase.idle
        var shutdownRequested = false
        var connections: [UInt64: any Channel] = [:]
        var nextConnectionID: UInt64 = 0
    }

    /// A swift-log logger that drops everything; the default when the caller passes none.
    package static let silentLogger = Logger(label: "regcoded.control", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The configuration the server was created with.
    package let configuration: Configuration
    private let handler: any ControlHandler
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let onListening: @Sendable () async -> Void
    private let state = Mutex(State())
    private let listenerGuard: ListenerGuard

    /// - Parameters:
    ///   - onListening: Called once the socket accepts connections (e.g. to send systemd `READY=1`).
    package init(
        configuration: Configuration,
        handler: some ControlHandler,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = ControlServer.silentLogger,
        onListening: @escaping @Sendable () async -> Void = {}
    ) {
        self.configuration = configuration
        self.handler = handler
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.onListening = onListening
        self.listenerGuard = ListenerGuard(name: "control", limits: configuration.limits, logger: logger)
    }

    /// A server that creates its socket file at `socketPath`.
    package convenience init(socketPath: String, group: gid_t? = nil, handler: some ControlHandler, logger: Logger = ControlServer.silentLogger) {
        self.init(configuration: Configuration(listener: .path(socketPath), group: group), handler: handler, logger: logger)
    }

    /// A server on an inherited listening socket (systemd socket activation passes it as fd 3).
    package convenience init(listeningFD: CInt, group: gid_t? = nil, handler: some ControlHandler, logger: Logger = ControlServer.silentLogger) {
        self.init(configuration: Configuration(listener: .fileDescriptor(listeningFD), group: group), handler: handler, logger: logger)
    }

    /// The id of the group called `name`, for ``Configuration/group``; nil if there is none.
    package static func groupID(named name: String) -> gid_t? {
        UserDatabase.groupID(named: name)
    }

    /// Open control connections (for metrics).
    package var connectionCount: Int {
        self.state.withLock { $0.connections.count }
    }

    /// The listener's cap and counts: open, accepted, refused over the cap, closed by a timeout.
    package var listenerCounters: ListenerCounters { self.listenerGuard.counters }

    /// Listens and serves until graceful shutdown (or cancellation, which closes connections at once).
    package func run() async throws {
        try self.state.withLock { state throws(ControlServerError) in
            guard case .idle = state.phase else { throw .alreadyStarted }
            state.phase = .starting
        }
        var logger = self.logger
        let fd: CInt
        var ownedFile: (path: String, identity: UnixSocketFile.Identity)?
        do {
            switch self.configuration.listener {
            case .path(let path):
                logger[metadataKey: "control.socket"] = "\(path)"
                let listener = try UnixSocketFile.createListener(
                    path: path,
                    mode: self.configuration.socketMode,
                    group: self.configuration.group,
                    backlog: self.configuration.backlog
                )
                if listener.replacedStale {
                    logger.info("Replaced a stale control socket file left by a daemon that is gone")
                }
                fd = listener.fd
                ownedFile = (path, listener.identity)
            case .fileDescriptor(let inherited):
                logger[metadataKey: "control.socket.fd"] = "\(inherited)"
                try UnixSocketFile.validateInherited(fd: inherited)
                fd = inherited
            }
        } catch {
            self.state.withLock { $0.phase = .stopped }
            throw error
        }

        let serverChannel: NIOAsyncChannel<AcceptedConnection, Never>
        do {
            serverChannel = try await ServerBootstrap(group: self.eventLoopGroup)
                .serverChannelInitializer { [listenerGuard = self.listenerGuard] channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(listenerGuard.serverHandlers())
                    }
                }
                .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                .bind(fd) { channel in
                    self.initializeConnection(channel)
                }
        } catch {
            if let ownedFile { UnixSocketFile.remove(path: ownedFile.path, ifIdentity: ownedFile.identity) }
            self.state.withLock { $0.phase = .stopped }
            throw error
        }
        // NIO calls listen() again on a socket it is handed, with a backlog of 128 whatever the channel options say
        // (`ServerSocketChannel.init(socket:)`), and a burst of a few hundred clients connecting at once was refused
        // with EAGAIN. Listening once more restores the backlog asked for (on a socket systemd passed too, whose own
        // backlog NIO has replaced by then).
        _ = listen(fd, self.configuration.backlog)

        let stopAtOnce = self.state.withLock { state in
            state.phase = .running(serverChannel.channel)
            return state.shutdownRequested
        }
        if stopAtOnce { serverChannel.channel.close(promise: nil) }
        logger.info("Control socket listening")
        await self.onListening()

        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                do {
                    try await serverChannel.executeThenClose { inbound in
                        for try await connection in inbound {
                            group.addTask { await self.serve(connection) }
                        }
                    }
                } catch {
                    logger.debug("Control socket accept loop ended", metadata: ["error": "\(error)"])
                }
                // Stop advertising the socket as soon as nobody accepts on it, not after the last connection drained.
                if let ownedFile { UnixSocketFile.remove(path: ownedFile.path, ifIdentity: ownedFile.identity) }
            }
        } onGracefulShutdown: {
            self.triggerGracefulShutdown()
        }
        self.state.withLock { $0.phase = .stopped }
        logger.info("Control socket closed")
    }

    /// Starts a graceful shutdown: stop accepting, let every connection finish the calls it already sent, end
    /// subscriptions. ``run()`` returns once all connections are closed. Called by the service group on shutdown;
    /// callable directly when the server runs outside one.
    package func triggerGracefulShutdown() {
        let (server, connections) = self.state.withLock { state -> ((any Channel)?, [any Channel]) in
            guard !state.shutdownRequested else { return (nil, []) }
            state.shutdownRequested = true
            guard case .running(let channel) = state.phase else { return (nil, []) }
            return (channel, Array(state.connections.values))
        }
        guard let server else { return }
        self.logger.debug("Control socket shutting down", metadata: ["control.connections": "\(connections.count)"])
        server.close(promise: nil)
        for connection in connections {
            // Closing the read side ends the request loop after what was already received, and the replies still go out.
            connection.close(mode: .input, promise: nil)
        }
    }

    // MARK: Connections

    private func initializeConnection(_ channel: any Channel) -> EventLoopFuture<AcceptedConnection> {
        let maxLineLength = self.configuration.maxLineLength
        let pending = max(self.configuration.maxPendingRequests, 1)
        let asyncConfiguration = NIOAsyncChannel<LineFrame, Never>.Configuration(
            backPressureStrategy: .init(lowWatermark: pending / 2, highWatermark: pending)
        )
        let listenerGuard = self.listenerGuard
        return PeerCredentials.of(channel)
            .map { Optional($0) }
            .recover { _ in nil }
            .flatMapThrowing { peer in
                let activity = ConnectionActivity()
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(ReadDeadlineHandler(framing: .lines, listener: listenerGuard, activity: activity))
                try pipeline.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineLength: maxLineLength)))
                let wrapped = try NIOAsyncChannel<LineFrame, Never>(wrappingChannelSynchronously: channel, configuration: asyncConfiguration)
                return AcceptedConnection(channel: wrapped, peer: peer, activity: activity)
            }
    }

    private func serve(_ connection: AcceptedConnection) async {
        let channel = connection.channel.channel
        let id = self.register(channel)
        defer { self.unregister(id) }
        var logger = self.logger
        logger[metadataKey: "control.connection"] = "\(id)"
        let writer = LineWriter(channel: channel)

        guard let peer = connection.peer else {
            logger.info("Refused a control connection: its peer credentials could not be read")
            await self.refuse(connection, writer: writer)
            return
        }
        logger[metadataKey: "control.peer.pid"] = "\(peer.pid)"
        logger[metadataKey: "control.peer.uid"] = "\(peer.uid)"
        logger[metadataKey: "control.peer.gid"] = "\(peer.gid)"
        guard self.configuration.effectivePeerPolicy.allows(peer) else {
            logger.info("Refused a control connection from a peer the policy does not allow")
            await self.refuse(connection, writer: writer)
            return
        }

        logger.debug("Control connection opened")
        let session = ConnectionSession(
            channel: channel,
            writer: writer,
            peer: peer,
            handler: self.handler,
            activity: connection.activity,
            maxLineLength: self.configuration.maxLineLength,
            inputLimits: self.configuration.inputLimits,
            workers: self.configuration.inputWorkers,
            cutOffGracePeriod: self.configuration.cutOffGracePeriod,
            logger: logger
        )
        do {
            try await connection.channel.executeThenClose { inbound in
                await session.run(inbound)
            }
        } catch {
            logger.debug("Control connection failed", metadata: ["error": "\(error)"])
        }
        logger.debug("Control connection closed")
    }

    private func refuse(_ connection: AcceptedConnection, writer: LineWriter) async {
        try? await connection.channel.executeThenClose { _ in
            try await writer.write(RPCMessage.error(id: .null, .permissionDenied))
        }
    }

    private func register(_ channel: any Channel) -> UInt64 {
        let (id, closeInput) = self.state.withLock { state in
            let id = state.nextConnectionID
            state.nextConnectionID += 1
            state.connections[id] = channel
            return (id, state.shutdownRequested)
        }
        // Accepted just as shutdown began: treat it like the others.
        if closeInput { channel.close(mode: .input, promise: nil) }
        return id
    }

    private func unregister(_ id: UInt64) {
        self.state.withLock { _ = $0.connections.removeValue(forKey: id) }
    }
}

/// An accepted connection with the peer credentials read at accept time (nil when they could not be read).
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<LineFrame, Never>
    let peer: PeerCredentials?
    /// Calls in progress and subscriptions, which keep a quiet connection open.
    let activity: ConnectionActivity
}

/// Writes whole lines and waits until the kernel has them.
///
/// Waiting for each write (rather than only for channel writability) is what turns a peer that does not read into
/// back-pressure on its own writer, so its subscription buffer fills and it gets cut off, while other connections
/// are unaffected; it also means a reply is on the wire before the connection is closed.
struct LineWriter: Sendable {
    let channel: any Channel

    /// Queues `message` behind earlier lines; the next ``write(_:)`` flushes it and reports a failure of either.
    func writeWithoutFlush(_ message: JSONValue) {
        self.writeWithoutFlush(line: JSONLine.encode(message, allocator: self.channel.allocator))
    }

    func write(_ message: JSONValue) async throws {
        try await self.write(line: JSONLine.encode(message, allocator: self.channel.allocator))
    }

    /// Queues an encoded line (ending in `\n`) behind earlier lines.
    func writeWithoutFlush(line: ByteBuffer) {
        self.channel.write(line, promise: nil)
    }

    /// Writes an encoded line (ending in `\n`) and waits until the kernel has it.
    func write(line: ByteBuffer) async throws {
        let written = self.channel.eventLoop.makePromise(of: Void.self)
        self.channel.writeAndFlush(line, promise: written)
        try await withTaskCancellationHandler {
            try await written.futureResult.get()
        } onCancel: {
            // A line cannot be taken back once partly written; closing is the only way to keep the framing honest.
            self.channel.close(promise: nil)
        }
    }
}
