import NIOCore
import RegcodeSupport

/// What the daemon implements to answer control calls, whichever transport brings them.
package protocol ControlHandler: Sendable {
    /// Handles one method call; throw RPCError for errors.
    ///
    /// Unknown methods should throw ``RPCError/methodNotFound(_:)``; bad parameters ``RPCError/invalidParams(_:data:)``.
    /// Calls from one connection arrive one at a time, in order.
    func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue

    /// Handles the `subscribe` method: the server sends ``Subscription/result`` as the reply, then streams the
    /// subscription's events as `event` notifications on the same connection.
    ///
    /// The default refuses with "unknown method".
    func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription
}

extension ControlHandler {
    package func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        throw .methodNotFound("subscribe")
    }
}

/// The answer to `subscribe`: a reply plus the events to stream after it.
///
/// The server sends stored events from `replay` first, then live events from `live`, skipping any live event whose
/// sequence number is not above the highest one already sent (or `since`): see ``EventBroadcaster`` for why that
/// makes replay-then-live gap-free and duplicate-free. Register `live` **before** starting the replay query.
///
/// The stream ends with the connection, or when the server cuts it off; it then writes
/// `{"jsonrpc":"2.0","method":"cutoff","params":{"reason":…,"lastSeq":…}}` if it can, and closes the connection.
/// `lastSeq` is the last sequence number sent (or `since`, or null): a client resumes with `since` = `lastSeq`.
package struct Subscription: Sendable {
    /// The JSON-RPC result of the `subscribe` call, e.g. `{"subscribed":true}`.
    package var result: JSONValue
    package let source: any NotificationSource

    /// A subscription over any stored event type.
    ///
    /// - Parameters:
    ///   - result: The reply to `subscribe`.
    ///   - live: Registered before the replay query runs.
    ///   - replay: Stored events after `since`, in sequence order; read lazily, so it can page through a database.
    ///   - since: The sequence number the client already has, if any.
    ///   - sequenceNumber: An event's gap-free sequence number (nil for events outside the numbering, never skipped).
    ///   - params: The `params` of the `event` notification for an event.
    package init<Element: Sendable, Replay: AsyncSequence & Sendable>(
        result: JSONValue,
        live: EventSubscription<Element>,
        replay: Replay,
        since: Int64? = nil,
        sequenceNumber: @escaping @Sendable (Element) -> Int64?,
        params: @escaping @Sendable (Element) -> JSONValue
    ) where Replay.Element == Element {
        self.result = result
        self.source = ReplayThenLive(live: live, replay: replay, since: since, sequenceNumber: sequenceNumber) { element in
            EventNotification(unencoded: params(element))
        }
    }

    /// A subscription over notifications encoded once by their publisher, numbered by their params' `seq` member.
    package init<Replay: AsyncSequence & Sendable>(
        result: JSONValue,
        live: EventSubscription<EventNotification>,
        replay: Replay,
        since: Int64? = nil
    ) where Replay.Element == EventNotification {
        self.result = result
        self.source = ReplayThenLive(
            live: live,
            replay: replay,
            since: since,
            sequenceNumber: { $0.seq },
            notification: { $0 }
        )
    }

    /// A live-only subscription over notifications encoded once by their publisher.
    package init(result: JSONValue, live: EventSubscription<EventNotification>, since: Int64? = nil) {
        self.init(result: result, live: live, replay: NoReplay<EventNotification>(), since: since)
    }

    /// A subscription over events that already are notification params, numbered by their `seq` member.
    package init<Replay: AsyncSequence & Sendable>(
        result: JSONValue,
        live: EventSubscription<JSONValue>,
        replay: Replay,
        since: Int64? = nil
    ) where Replay.Element == JSONValue {
        self.init(result: result, live: live, replay: replay, since: since, sequenceNumber: { $0["seq"]?.intValue }, params: { $0 })
    }

    /// A live-only subscription over events that already are notification params, numbered by their `seq` member.
    package init(result: JSONValue, live: EventSubscription<JSONValue>, since: Int64? = nil) {
        self.init(result: result, live: live, replay: NoReplay<JSONValue>(), since: since)
    }
}

/// How a subscription's stream ended, as far as the connection is concerned.
package enum NotificationStreamEnd: Sendable, Equatable {
    /// The server ended it (slow consumer, failed replay, shutdown); the client should be told and disconnected.
    case cutOff(reason: String)
    /// The consumer side went away (connection closing, task cancelled).
    case cancelled
    /// Writing to the connection failed.
    case writeFailed
}

extension Subscription {
    /// The sequence number the client already had when it subscribed, if any.
    package var since: Int64? { self.source.since }

    /// Sends replayed then live events through `emit` as server-sent events (frame, seq, more) until the stream ends:
    /// for HTTP's event stream. A live event's frame is the one its publisher encoded, shared by every stream; `more`
    /// says another live event is already waiting, so a transport may gather them into one write. A throwing `emit`
    /// ends the stream with `writeFailed`.
    package func streamEventFrames(_ emit: (ByteBuffer, Int64?, _ more: Bool) async throws -> Void) async -> NotificationStreamEnd {
        await self.source.run { notification, seq, more in try await emit(notification.eventStreamFrame(id: seq), seq, more) }
    }

    /// Returns when the live part ends; true if it was cut off for falling behind.
    package func waitUntilCutOff() async -> Bool {
        await self.source.waitUntilCutOff()
    }

    /// Ends the subscription and unregisters it; idempotent.
    package func cancel() {
        self.source.cancel()
    }

    /// Ends the live part after what is already buffered (shutdown): the stream then ends as cut off, so the client
    /// is told the last sequence number it got and resumes from there.
    package func finish() {
        self.source.finish()
    }
}

/// The type-erased event source behind a ``Subscription``.
package protocol NotificationSource: Sendable {
    var since: Int64? { get }
    /// Sends replayed then live notifications through `emit` (notification, seq, more) until the stream ends;
    /// `more` says another live event is already waiting, so a transport may hold its flush until the last one.
    func run(emit: (EventNotification, Int64?, _ more: Bool) async throws -> Void) async -> NotificationStreamEnd
    /// Returns when the live part ends; true if it was cut off for falling behind. False if the caller is cancelled.
    func waitUntilCutOff() async -> Bool
    func cancel()
    func finish()
}

private struct ReplayThenLive<Element: Sendable, Replay: AsyncSequence & Sendable>: NotificationSource where Replay.Element == Element {
    let live: EventSubscription<Element>
    let replay: Replay
    let since: Int64?
    let sequenceNumber: @Sendable (Element) -> Int64?
    let notification: @Sendable (Element) -> EventNotification

    func run(emit: (EventNotification, Int64?, _ more: Bool) async throws -> Void) async -> NotificationStreamEnd {
        var highestSent = self.since
        do {
            for try await element in self.replay {
                // Cut off while replaying: stop, the live part is gone and the client must come back with `since`.
                if let termination = self.live.termination { return self.end(termination) }
                let seq = self.sequenceNumber(element)
                do {
                    try await emit(self.notification(element), seq, false)
                } catch {
                    return .writeFailed
                }
                if let seq { highestSent = max(highestSent ?? seq, seq) }
            }
        } catch {
            if Task.isCancelled { return .cancelled }
            return .cutOff(reason: "replay failed: \(error)")
        }
        for await element in self.live {
            let seq = self.sequenceNumber(element)
            if let seq, let highestSent, seq <= highestSent { continue }
            do {
                try await emit(self.notification(element), seq, self.live.bufferedCount > 0)
            } catch {
                return .writeFailed
            }
        }
        return self.end(self.live.termination ?? .cancelled)
    }

    private func end(_ termination: EventSubscription<Element>.Termination) -> NotificationStreamEnd {
        switch termination {
        case .cutOff, .finished: .cutOff(reason: termination.description)
        case .cancelled: .cancelled
        }
    }

    func waitUntilCutOff() async -> Bool {
        if case .cutOff? = await self.live.waitForTermination() { return true }
        return false
    }

    func finish() {
        self.live.finish()
    }

    func cancel() {
        self.live.cancel()
    }
}

/// The empty replay of a live-only subscription.
struct NoReplay<Element: Sendable>: AsyncSequence, Sendable {
    typealias Failure = Never

    struct AsyncIterator: AsyncIteratorProtocol {
        typealias Failure = Never
        mutating func next() async -> Element? { nil }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
}
