import ControlRPC
import EventLoopExecutor
import ListenerGuard
import Logging
import NIOCore
import RegcodeSupport

/// One accepted, authorised control connection: a sequential request loop plus one task per subscription.
struct ConnectionSession: Sendable {
    let channel: any Channel
    let writer: LineWriter
    let peer: PeerCredentials
    let handler: any ControlHandler
    /// Held while a call is answered and while a subscription runs: the connection is busy, not idle.
    let activity: ConnectionActivity
    let maxLineLength: Int
    let inputLimits: InputLimits
    let workers: InputWorkers
    let cutOffGracePeriod: Duration
    let logger: Logger

    /// Reads, decodes and answers requests one at a time.
    ///
    /// The pipeline only splits lines; each line is parsed and answered on the ``InputWorkers``, beside the event
    /// loops (which also run this task when Swift concurrency runs on them, as in the daemon), so however long one
    /// line takes to check and decode, other connections' I/O goes on. While this loop is busy
    /// (or waits for a peer to take its replies) unread lines queue in `inbound` up to its high watermark, and then
    /// the channel stops reading from the socket.
    func run(_ inbound: NIOAsyncChannelInboundStream<LineFrame>) async {
        await withDiscardingTaskGroup { group in
            do {
                for try await frame in inbound {
                    self.activity.hold()
                    defer { self.activity.release() }
                    switch frame {
                    case .tooLong(let byteCount):
                        self.logger.debug("Discarded an over-long control line", metadata: ["control.line.bytes": "\(byteCount)"])
                        try await self.writer.write(RPCMessage.error(id: .null, .lineTooLong(limit: self.maxLineLength)))
                    case .line(let line):
                        switch await self.process(line) {
                        case .none:
                            break
                        case .reply(let reply):
                            try await self.writer.write(reply)
                        case .subscribed(let reply, let subscription):
                            if let reply {
                                do {
                                    try await self.writer.write(reply)
                                } catch {
                                    subscription.source.cancel()
                                    throw error
                                }
                            }
                            // On the connection's loop an event costs one hand-over between threads (publisher to
                            // loop) instead of three: the write completes and resumes the task in place.
                            self.activity.hold()
                            group.addTask(executorPreference: EventLoopTaskExecutor(self.channel.eventLoop)) {
                                defer { self.activity.release() }
                                await self.stream(subscription)
                            }
                        }
                    }
                }
            } catch {
                self.logger.debug("Control connection input ended with an error", metadata: ["error": "\(error)"])
            }
            // No more input (peer closed its side, shutdown, or I/O error): the session ends, subscriptions with it.
            group.cancelAll()
        }
    }

    func process(_ line: ByteBuffer) async -> RPCDispatcher.Answer {
        await RPCDispatcher(handler: self.handler, inputLimits: self.inputLimits, workers: self.workers, logger: self.logger)
            .answer(line, peer: .unixSocket(self.peer))
    }

    /// Streams one subscription until it ends; when the server ends it, says so and closes the connection.
    func stream(_ subscription: Subscription) async {
        let source = subscription.source
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // A writer stuck on a peer that does not read never gets to see its cut-off; close for it.
                guard await source.waitUntilCutOff() else { return }
                do {
                    try await Task.sleep(for: self.cutOffGracePeriod)
                } catch {
                    return
                }
                self.logger.info("Disconnecting a subscriber that stopped reading")
                self.channel.close(promise: nil)
            }

            var lastSeq = source.since
            // Events already waiting go out in one flush rather than a write, a flush and a wait each; the
            // subscriber's buffer bounds what is written unawaited.
            let end = await source.run { notification, seq, more in
                let line = notification.line(allocator: self.channel.allocator)
                if more {
                    self.writer.writeWithoutFlush(line: line)
                } else {
                    try await self.writer.write(line: line)
                }
                if let seq { lastSeq = seq }
            }
            if case .cutOff(let reason) = end {
                self.logger.info(
                    "Subscription ended by the server",
                    metadata: ["control.reason": "\(reason)", "control.lastSeq": "\(lastSeq.map(String.init) ?? "none")"]
                )
                let params: JSONValue = ["reason": .string(reason), "lastSeq": lastSeq.map { .int($0) } ?? .null]
                await self.writeWithDeadline(RPCMessage.notification(method: "cutoff", params: params))
                self.channel.close(promise: nil)
            }
            source.cancel()
            group.cancelAll()
        }
    }

    /// Writes `message` if the peer takes it within the grace period; cancelling the write closes the connection.
    private func writeWithDeadline(_ message: JSONValue) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.writer.write(message) }
            group.addTask { try? await Task.sleep(for: self.cutOffGracePeriod) }
            await group.next()
            group.cancelAll()
        }
    }
}
