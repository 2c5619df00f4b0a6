import ControlRPC
import DequeModule
import NIOCore
import NIOPosix
import RegcodeSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why talking to the daemon failed (error replies arrive as ``RPCError`` instead).
///
/// ``description`` is the short form; ``explanation`` is the message for a person at a terminal: it
/// names the socket path and how to fix the problem.
package enum ControlClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the path (no file, or a stale socket file).
    case daemonNotRunning(path: String)
    /// The socket file (or a directory above it) does not let us connect.
    case permissionDenied(path: String)
    /// Something other than a socket is at the path (a regular file, a directory).
    case notASocket(path: String)
    case connectFailed(path: String, reason: String)
    /// The daemon closed the connection before answering.
    case connectionClosed
    case malformedReply(String)
    /// A reply longer than the client's line limit; it was discarded.
    case replyTooLong(limit: Int)

    package var description: String {
        switch self {
        case .daemonNotRunning(let path): "daemon not running at \(path)"
        case .permissionDenied(let path): "permission denied: \(path)"
        case .notASocket(let path): "not a socket: \(path)"
        case .connectFailed(let path, let reason): "cannot connect to \(path): \(reason)"
        case .connectionClosed: "the daemon closed the connection"
        case .malformedReply(let reason): "malformed reply from the daemon: \(reason)"
        case .replyTooLong(let limit): "a reply exceeded the \(describeByteCount(limit)) line limit"
        }
    }

    /// What went wrong, at which path, and what to do about it.
    ///
    /// Looks at the path again when asked, so a missing file and a stale socket file are told apart.
    package var explanation: String {
        let elsewhere = "pass --socket PATH / set REGCODED_SOCKET"
        switch self {
        case .daemonNotRunning(let path):
            let why = SocketPathKind(path) == .missing ? "no such file" : "connection refused"
            return "no daemon at \(path) (\(why)): start one with 'regcoded', or \(elsewhere)"
        case .permissionDenied(let path):
            guard let group = SocketPathKind.groupName(of: path) else {
                return "permission denied at \(path) (a directory above it is closed to this user): "
                    + "run as the daemon's user or root, or \(elsewhere)"
            }
            return "permission denied at \(path): the socket admits the daemon's user, root and its group '\(group)' "
                + "(regcoded --socket-group); run as one of them or join the group (usermod -aG \(group) $USER, then log in again)"
        case .notASocket(let path):
            let what = SocketPathKind(path) == .directory ? "a directory" : "a file"
            return "\(path) is \(what), not a socket: point at the daemon's socket, \(elsewhere)"
        case .connectFailed(let path, let reason):
            return "cannot connect to \(path) (\(reason)): \(elsewhere)"
        case .connectionClosed, .malformedReply, .replyTooLong:
            return self.description
        }
    }

    /// Classifies a failed `connect()`.
    static func connect(errno code: CInt, path: String) -> ControlClientError {
        switch code {
        case ENOENT, ENOTDIR: .daemonNotRunning(path: path)
        // Linux refuses a connection to a regular file or a directory the same way as to a stale socket.
        case ECONNREFUSED, ENOTSOCK:
            switch SocketPathKind(path) {
            case .file, .directory: .notASocket(path: path)
            case .socket, .missing: .daemonNotRunning(path: path)
            }
        case EACCES, EPERM: .permissionDenied(path: path)
        default: .connectFailed(path: path, reason: String(cString: strerror(code)))
        }
    }
}

/// What is at a socket path, as `lstat` sees it.
private enum SocketPathKind: Equatable {
    case missing
    case socket
    case directory
    case file

    init(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            self = .missing
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: self = .socket
        case S_IFDIR: self = .directory
        default: self = .file
        }
    }

    /// The name of the group owning `path` (its number if it has no name); nil when it cannot be read.
    static func groupName(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        guard let entry = getgrgid(info.st_gid), let name = entry.pointee.gr_name else { return String(info.st_gid) }
        return String(cString: name)
    }
}

/// A notification from the daemon, e.g. `event` or `cutoff` after `subscribe`.
package struct ControlNotification: Sendable, Hashable {
    /// `event` for subscribed events, `cutoff` when the daemon ends a subscription.
    package var method: String
    package var params: JSONValue?

    package init(method: String, params: JSONValue?) {
        self.method = method
        self.params = params
    }
}

/// A control-socket client (for `regcodectl` and tests): calls, and the notifications of subscriptions.
///
/// Calls may be issued concurrently; replies are matched by id. Notifications are buffered up to
/// `notificationBufferSize`; beyond that the client stops reading the socket until they are consumed, so a
/// subscriber that does not consume its notifications also stalls its calls (and is eventually cut off by the
/// daemon), but memory stays bounded.
package final class ControlClient: Sendable {
    private struct PendingCall {
        var id: Int64
        var continuation: CheckedContinuation<JSONValue, any Error>
    }

    private struct State {
        var nextID: Int64 = 1
        var pending: Deque<PendingCall> = []
        var isClosed = false
        /// An error reply no call was waiting for (the daemon refusing the peer); reported to later calls.
        var unsolicitedError: RPCError?

        var terminalError: any Error { self.unsolicitedError ?? ControlClientError.connectionClosed }
    }

    private let channel: any Channel
    private let state = Mutex(State())
    private let notificationBuffer: NotificationBuffer

    private init(channel: any Channel, notificationBufferSize: Int) {
        self.channel = channel
        self.notificationBuffer = NotificationBuffer(capacity: notificationBufferSize)
    }

    /// Connects to the daemon at `path`, runs `body`, then disconnects.
    ///
    /// - Throws: ``ControlClientError/daemonNotRunning(path:)`` or ``ControlClientError/permissionDenied(path:)``
    ///   when the connection cannot be made, and whatever `body` throws.
    package static func withConnection<Result: Sendable>(
        to path: String,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maxLineLength: Int = 64 << 20,
        notificationBufferSize: Int = 1024,
        _ body: (ControlClient) async throws -> Result
    ) async throws -> Result {
        let connection = try await self.connect(path: path, eventLoopGroup: eventLoopGroup, maxLineLength: maxLineLength)
        let client = ControlClient(channel: connection.channel, notificationBufferSize: notificationBufferSize)
        return try await connection.executeThenClose { inbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await client.readReplies(inbound, maxLineLength: maxLineLength)
                }
                do {
                    let result = try await body(client)
                    client.close()
                    return result
                } catch {
                    client.close()
                    throw error
                }
            }
        }
    }

    /// Calls `method` and returns its result.
    ///
    /// - Throws: ``RPCError`` for an error reply, ``ControlClientError`` when the connection fails.
    package func call(method: String, params: JSONValue? = nil) async throws -> JSONValue {
        let id = self.state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let line = JSONLine.encode(RPCMessage.request(id: .int(id), method: method, params: params), allocator: self.channel.allocator)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                let refusal = self.state.withLock { state -> (any Error)? in
                    if state.isClosed { return state.terminalError }
                    if Task.isCancelled { return CancellationError() }
                    state.pending.append(PendingCall(id: id, continuation: continuation))
                    return nil
                }
                if let refusal {
                    continuation.resume(throwing: refusal)
                    return
                }
                // A failed write closes the channel, and the read loop then fails this call with the reason.
                self.channel.writeAndFlush(line, promise: nil)
            }
        } onCancel: {
            let call = self.state.withLock { state -> PendingCall? in
                guard let index = state.pending.firstIndex(where: { $0.id == id }) else { return nil }
                return state.pending.remove(at: index)
            }
            call?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Sends a notification (a call without id, which gets no reply).
    package func notify(method: String, params: JSONValue? = nil) async throws {
        let line = JSONLine.encode(RPCMessage.request(id: nil, method: method, params: params), allocator: self.channel.allocator)
        let written = self.channel.eventLoop.makePromise(of: Void.self)
        self.channel.writeAndFlush(line, promise: written)
        try await written.futureResult.get()
    }

    /// Notifications from the daemon, in order; ends when the connection closes. Single consumer.
    package var notifications: Notifications {
        Notifications(buffer: self.notificationBuffer)
    }

    /// Closes the connection; pending calls fail with ``ControlClientError/connectionClosed``.
    package func close() {
        self.channel.close(promise: nil)
        // Also releases a read loop blocked on a full notification buffer, so it can see the end of input.
        self.notificationBuffer.finish()
    }

    /// The notifications of one connection; see ``ControlClient/notifications``.
    package struct Notifications: AsyncSequence, Sendable {
        package typealias Element = ControlNotification
        package typealias Failure = Never
        fileprivate let buffer: NotificationBuffer

        package func makeAsyncIterator() -> Iterator {
            Iterator(buffer: self.buffer)
        }

        /// Sendable: it only refers to the connection's buffer, so a copy reads the same notifications.
        package struct Iterator: AsyncIteratorProtocol, Sendable {
            package typealias Failure = Never
            fileprivate let buffer: NotificationBuffer

            /// The next notification; nil once the connection has closed and all were consumed, or when the
            /// waiting task is cancelled.
            package mutating func next() async -> ControlNotification? {
                await self.buffer.next()
            }
        }
    }

    // MARK: Reading

    private static func connect(
        path: String,
        eventLoopGroup: any EventLoopGroup,
        maxLineLength: Int
    ) async throws -> NIOAsyncChannel<LineFrame, Never> {
        guard UnixSocketFile.fitsSocketAddress(path) else {
            throw ControlClientError.connectFailed(path: path, reason: "path too long for a Unix-domain socket address")
        }
        do {
            return try await ClientBootstrap(group: eventLoopGroup)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineLength: maxLineLength)))
                        return try NIOAsyncChannel<LineFrame, Never>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch let error as IOError {
            throw ControlClientError.connect(errno: error.errnoCode, path: path)
        } catch {
            throw ControlClientError.connectFailed(path: path, reason: "\(error)")
        }
    }

    private func readReplies(_ inbound: NIOAsyncChannelInboundStream<LineFrame>, maxLineLength: Int) async {
        do {
            for try await frame in inbound {
                switch frame {
                case .tooLong:
                    self.resolve(id: .null, with: .failure(ControlClientError.replyTooLong(limit: maxLineLength)))
                case .line(let line):
                    await self.dispatch(line)
                }
            }
        } catch {
            // The connection broke; pending calls learn it below.
        }
        let (calls, error) = self.state.withLock { state in
            state.isClosed = true
            defer { state.pending = [] }
            return (Array(state.pending), state.terminalError)
        }
        self.notificationBuffer.finish()
        for call in calls {
            call.continuation.resume(throwing: error)
        }
    }

    private func dispatch(_ line: ByteBuffer) async {
        guard line.readableBytesView.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { return }
        let message: [String: JSONValue]
        do {
            guard case .object(let object) = try JSONLine.decode(line) else {
                self.resolve(id: .null, with: .failure(ControlClientError.malformedReply("not a JSON object")))
                return
            }
            message = object
        } catch {
            self.resolve(id: .null, with: .failure(ControlClientError.malformedReply(error.reason)))
            return
        }
        if message["id"] == nil, case .string(let method)? = message["method"] {
            await self.notificationBuffer.send(ControlNotification(method: method, params: message["params"]))
            return
        }
        let id = message["id"] ?? .null
        if let error = message["error"] {
            self.resolve(id: id, with: .failure(RPCError(jsonValue: error) ?? ControlClientError.malformedReply("unreadable error object")))
        } else if let result = message["result"] {
            self.resolve(id: id, with: .success(result))
        } else {
            self.resolve(id: id, with: .failure(ControlClientError.malformedReply("neither a result, an error nor a notification")))
        }
    }

    /// Completes the call `id` answers; an answer with a null id goes to the oldest call (replies come in call order).
    private func resolve(id: JSONValue, with outcome: Result<JSONValue, any Error>) {
        let call = self.state.withLock { state -> PendingCall? in
            let index: Int?
            if case .int(let number) = id {
                index = state.pending.firstIndex { $0.id == number }
            } else {
                index = state.pending.isEmpty ? nil : state.pending.startIndex
            }
            guard let index else {
                // Answers to calls cancelled meanwhile land here too; only an unclaimed error is worth keeping.
                if case .failure(let error as RPCError) = outcome, id == .null {
                    state.unsolicitedError = error
                }
                return nil
            }
            return state.pending.remove(at: index)
        }
        call?.continuation.resume(with: outcome)
    }
}

/// A bounded single-producer, single-consumer queue whose producer waits for room: the client's read loop stops
/// reading the socket while notifications pile up, instead of buffering without limit.
private final class NotificationBuffer: Sendable {
    private struct State {
        var items: Deque<ControlNotification> = []
        var consumer: CheckedContinuation<ControlNotification?, Never>?
        var producer: CheckedContinuation<Void, Never>?
        var isFinished = false
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        precondition(capacity >= 1, "the notification buffer holds at least one notification")
        self.capacity = capacity
    }

    func send(_ item: ControlNotification) async {
        while true {
            enum Step {
                case handedOver(CheckedContinuation<ControlNotification?, Never>)
                case done
                case full
            }
            let step = self.state.withLock { state -> Step in
                if state.isFinished { return .done }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .handedOver(consumer)
                }
                guard state.items.count < self.capacity else { return .full }
                state.items.append(item)
                return .done
            }
            switch step {
            case .handedOver(let consumer):
                consumer.resume(returning: item)
                return
            case .done:
                return
            case .full:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let wait = self.state.withLock { state -> Bool in
                        guard !state.isFinished, state.items.count >= self.capacity else { return false }
                        state.producer = continuation
                        return true
                    }
                    if !wait { continuation.resume() }
                }
            }
        }
    }

    func next() async -> ControlNotification? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ControlNotification?, Never>) in
                enum Step {
                    case item(ControlNotification, CheckedContinuation<Void, Never>?)
                    case end
                    case parked
                }
                let step = self.state.withLock { state -> Step in
                    if let item = state.items.popFirst() {
                        defer { state.producer = nil }
                        return .item(item, state.producer)
                    }
                    if state.isFinished || Task.isCancelled { return .end }
                    precondition(state.consumer == nil, "ControlClient.notifications supports a single consumer")
                    state.consumer = continuation
                    return .parked
                }
                switch step {
                case .item(let item, let producer):
                    producer?.resume()
                    continuation.resume(returning: item)
                case .end:
                    continuation.resume(returning: nil)
                case .parked:
                    break
                }
            }
        } onCancel: {
            let consumer = self.state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    func finish() {
        let (consumer, producer) = self.state.withLock { state in
            state.isFinished = true
            defer {
                state.consumer = nil
                state.producer = nil
            }
            return (state.consumer, state.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }
}
