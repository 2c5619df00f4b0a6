import NIOCore
import NIOHTTP1

/// One request as a pool sends it: the target is appended to the origin's path prefix.
package struct KeepAliveRequest: Sendable {
    package var method: HTTPMethod
    /// Path and query, already percent-encoded, starting with `/`.
    package var target: String
    /// Header name/value pairs in sending order; `Host` and `Content-Length` are added by the pool.
    package var headers: [(String, String)]
    package var body: ByteBuffer?
    /// Asks the server to close the connection after this answer (and the pool does, whatever it says).
    package var closeConnection: Bool
    /// The local address the request's connection is bound to (port 0), so the server sees it as the peer; nil: the
    /// host's own choice. A pool runs it only on a connection bound to the same address.
    package var sourceAddress: SocketAddress?

    package init(
        method: HTTPMethod,
        target: String,
        headers: [(String, String)] = [],
        body: ByteBuffer? = nil,
        closeConnection: Bool = false,
        sourceAddress: SocketAddress? = nil
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.closeConnection = closeConnection
        self.sourceAddress = sourceAddress
    }
}

/// An answer: status, `Retry-After`, and the body unless it passed the exchange's size limit.
package struct KeepAliveResponse: Sendable {
    package var status: Int
    package var retryAfter: String?
    /// nil when the body was larger than the limit (the connection is then closed, not drained).
    package var body: ByteBuffer?

    package init(status: Int, retryAfter: String?, body: ByteBuffer?) {
        self.status = status
        self.retryAfter = retryAfter
        self.body = body
    }
}

extension HTTPMethod {
    /// RFC 9110 §9.2.2: repeating the request has the effect of sending it once.
    var isIdempotent: Bool {
        switch self {
        case .GET, .HEAD, .OPTIONS, .TRACE, .PUT, .DELETE: true
        default: false
        }
    }
}
