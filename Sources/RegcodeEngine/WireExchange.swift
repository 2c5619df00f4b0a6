/// An HTTP request a protocol state machine built whole (the OAuth device grant's): method, absolute URL, headers
/// and body are sent as they are, to whatever origin the URL names. Headers and body carry credentials: never log
/// them.
package struct WireRequest: Sendable, Equatable {
    package enum Method: String, Sendable, Equatable {
        case get = "GET"
        case post = "POST"
    }

    package struct Header: Sendable, Equatable {
        package var name: String
        package var value: String
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A short stable name for logs, metrics and the request log (`oauth.token`, `oauth.device_authorization`).
    package var name: String
    package var method: Method
    /// Absolute `http://` or `https://` URL.
    package var url: String
    package var headers: [Header]
    package var body: [UInt8]

    package init(name: String, method: Method, url: String, headers: [Header], body: [UInt8]) {
        self.name = name
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The answer to a ``WireRequest``, whatever its status: the state machine that built the request reads it.
package struct WireResponse: Sendable, Equatable {
    package var status: Int
    /// `Retry-After` as sent.
    package var retryAfter: String?
    package var body: [UInt8]

    package init(status: Int, retryAfter: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.retryAfter = retryAfter
        self.body = body
    }
}
