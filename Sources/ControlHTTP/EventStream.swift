import AsyncAlgorithms
import ControlRPC
import EventLoopExecutor
import Hummingbird
import Logging
import NIOCore
import RegcodeSupport

/// One `GET /events` response: a subscription's events as server-sent events, with keep-alive comments, until the
/// client leaves or the server ends the stream.
///
/// Events go out as the frames their publisher encoded once for every stream; events already waiting when the
/// client takes one are gathered into one write. A client that stops reading is treated as a socket subscriber is:
/// its subscription's bounded buffer fills, it is cut off (counted with the broadcaster's cut-offs), and if it has
/// not taken its `cutoff` event within the grace period, its connection is closed.
struct EventStream: Sendable {
    let subscription: Subscription
    let slot: OpenStreams.Slot
    let channel: any Channel
    let keepAliveInterval: Duration
    /// The least time between two writes of events: what arrives meanwhile waits in the subscription's buffer.
    let writeInterval: Duration
    let cutOffGracePeriod: Duration
    let logger: Logger

    /// The most bytes of waiting events gathered into one write.
    static let maxBatchBytes = 64 * 1024

    private enum Chunk: Sendable {
        /// The frames of one or more events.
        case frames(ByteBuffer)
        case keepAlive
        case cutOff(reason: String, lastSeq: Int64?)
    }

    func write(to writer: inout any ResponseBodyWriter) async throws {
        // The stream's tasks (taking events, gathering frames) run on the streams' low-priority loop (see
        // `EventStreamLoop`), not on the threads that carry the fleet's work and the listener's other requests; only
        // the writes themselves go to the connection's loop.
        try await withTaskExecutorPreference(EventLoopTaskExecutor(EventStreamLoop.group.next())) {
            try await self.writeHere(to: &writer)
        }
    }

    private func writeHere(to writer: inout any ResponseBodyWriter) async throws {
        guard self.slot.attach(self.subscription) else { return }
        defer { self.slot.release() }
        // One writer, several producers: the channel hands chunks over one at a time, so a client that reads
        // slowly holds the producer back and the subscription's own buffer (and its cut-off rule) does the rest.
        let chunks = AsyncChannel<Chunk>()
        let departed = self.channel.eventLoop.makePromise(of: Void.self)
        let watcher = ClientDepartureHandler(departed: departed)
        try? await self.channel.pipeline.addHandler(watcher, position: .first).get()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.produce(into: chunks) }
            group.addTask { await self.endWhenTheClientLeaves(departed.futureResult, chunks) }
            group.addTask {
                while true {
                    try await Task.sleep(for: self.keepAliveInterval)
                    await chunks.send(.keepAlive)
                }
            }
            group.addTask { try await self.disconnectIfStalled(chunks) }
            defer {
                self.subscription.cancel()
                // Ends the departure watch too: awaiting a future is not cancellable.
                departed.succeed()
                self.channel.pipeline.removeHandler(watcher, promise: nil)
                group.cancelAll()
            }
            try await writer.write(ServerSentEvents.retry(milliseconds: 1000))
            for await chunk in chunks {
                switch chunk {
                case .frames(let frames):
                    try await writer.write(frames)
                case .keepAlive:
                    try await writer.write(ServerSentEvents.keepAlive)
                case .cutOff(let reason, let lastSeq):
                    let data: JSONValue = ["reason": .string(reason), "lastSeq": lastSeq.map { .int($0) } ?? .null]
                    try await writer.write(ServerSentEvents.event(name: "cutoff", data: data, id: nil))
                }
            }
            try await writer.finish(nil)
        }
    }

    /// Hands the subscription's frames to the writer, gathering those already waiting, then its cut-off if any.
    private func produce(into chunks: AsyncChannel<Chunk>) async {
        var lastSeq = self.subscription.since
        var pending = ByteBuffer()
        let end = await self.subscription.streamEventFrames { frame, seq, more in
            if let seq { lastSeq = seq }
            if pending.readableBytes == 0 && !more {
                // A lone event: the publisher's bytes, not a copy.
                await chunks.send(.frames(frame))
                await self.pace()
                return
            }
            pending.writeImmutableBuffer(frame)
            if !more || pending.readableBytes >= Self.maxBatchBytes {
                await chunks.send(.frames(pending))
                pending = ByteBuffer()
                if !more { await self.pace() }
            }
        }
        if pending.readableBytes > 0 { await chunks.send(.frames(pending)) }
        if case .cutOff(let reason) = end {
            self.logger.info("Event stream ended by the server", metadata: ["control.reason": "\(reason)"])
            await chunks.send(.cutOff(reason: reason, lastSeq: lastSeq))
        }
        chunks.finish()
    }

    /// A client that left ends its stream at once, freeing its place under the limit and its subscription.
    private func endWhenTheClientLeaves(_ departure: EventLoopFuture<Void>, _ chunks: AsyncChannel<Chunk>) async {
        try? await departure.get()
        guard self.channel.isActive else { return chunks.finish() }
        self.logger.debug("Event stream client left")
        chunks.finish()
        self.channel.close(promise: nil)
    }

    /// Waits ``writeInterval`` after a write, so that a busy stream takes its events in batches.
    ///
    /// Without it every event woke every stream: a publisher with 1,000 streams resumed 1,000 waiting tasks per event,
    /// and the streams' tasks and writes took the cores the fleet's polls need. Waiting here, a stream is asleep when
    /// most events are published (publishing then only appends to its buffer, bounded by the cut-off rule), and wakes
    /// at most once per interval to write what gathered: its wake-ups and writes no longer grow with the event rate.
    private func pace() async {
        try? await Task.sleep(for: self.writeInterval)
    }

    /// A writer stuck on a client that does not read never gets to its cut-off: close the connection for it.
    private func disconnectIfStalled(_ chunks: AsyncChannel<Chunk>) async throws {
        guard await self.subscription.waitUntilCutOff() else { return }
        try await Task.sleep(for: self.cutOffGracePeriod)
        self.logger.info("Disconnecting an event stream that stopped reading")
        chunks.finish()
        self.channel.close(promise: nil)
    }
}
