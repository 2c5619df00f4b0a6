import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// Collects one backend answer: status, `Retry-After` and a body of at most `maxBytes`.
///
/// AsyncHTTPClient's own `ResponseAccumulator` fails a too-large answer without its status, and the
/// status still decides what a too-large answer means (a malformed success versus an error status).
final class ResponseCollector: HTTPClientResponseDelegate, @unchecked Sendable {
    // Unchecked: AsyncHTTPClient calls a delegate on its task's event loop only, one call at a time,
    // and the collected answer leaves through the task's future, which orders the accesses.

    struct Answer: Sendable {
        var status: Int
        var retryAfter: String?
        /// nil when the body was larger than the limit.
        var body: ByteBuffer?
    }

    /// The request was stopped because its body passed the limit; the head had arrived.
    struct BodyTooLarge: Error {
        var status: Int
        var retryAfter: String?
    }

    private let maxBytes: Int
    private var status = 0
    private var retryAfter: String?
    private var body: ByteBuffer?

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    func didReceiveHead(task: HTTPClient.Task<Answer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        retryAfter = head.headers.first(name: "Retry-After")
        if let length = head.headers.first(name: "Content-Length").flatMap(Int.init), length > maxBytes {
            return task.eventLoop.makeFailedFuture(BodyTooLarge(status: status, retryAfter: retryAfter))
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Answer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var part = buffer
        if body == nil {
            body = part
        } else {
            body!.writeBuffer(&part)
        }
        if body!.readableBytes > maxBytes {
            body = nil
            return task.eventLoop.makeFailedFuture(BodyTooLarge(status: status, retryAfter: retryAfter))
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Answer>) throws -> Answer {
        Answer(status: status, retryAfter: retryAfter, body: body ?? ByteBuffer())
    }
}
