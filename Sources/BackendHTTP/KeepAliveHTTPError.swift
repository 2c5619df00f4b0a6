/// Why an exchange produced no answer.
package enum KeepAliveHTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The exchange's deadline passed (waiting for a connection, connecting, or waiting for the answer).
    case deadlineExceeded
    /// The TCP (or TLS) connection could not be made before the connect timeout.
    case connectTimeout
    /// The connection could not be made (refused, unreachable, name not resolved, TLS failure).
    case connectFailed(String)
    /// The server closed the connection before the answer was complete.
    case closedByServer
    /// The calling task was cancelled.
    case cancelled
    /// The pool was shut down.
    case shutdown
    /// The request could not be sent (an invalid header) or the answer was not valid HTTP.
    case protocolError(String)
    /// The TLS handshake failed (or the server refused the client certificate right after it).
    case tls(TLSHandshakeFailure)
    /// Every connection the process may open (its ``ConnectionBudget``) is open, and none of this pool's will free up.
    case connectionBudgetExhausted(limit: Int)

    package var description: String {
        switch self {
        case .deadlineExceeded: "deadline exceeded"
        case .connectTimeout: "connect timeout"
        case .connectFailed(let reason): "connect failed: \(reason)"
        case .closedByServer: "connection closed by the server"
        case .cancelled: "cancelled"
        case .shutdown: "client shut down"
        case .protocolError(let reason): "protocol error: \(reason)"
        case .tls(let failure): failure.description
        case .connectionBudgetExhausted(let limit): "no connection: all \(limit) the process may open (its open-file limit) are open"
        }
    }
}
