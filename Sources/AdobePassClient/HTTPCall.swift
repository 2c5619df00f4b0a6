import Foundation
import NIOHTTP1
import RegcodeSupport

/// One HTTP exchange as the request builders describe it, before it is bound to an HTTP client.
struct HTTPCall: Sendable {
    enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case delete = "DELETE"

        var httpMethod: HTTPMethod {
            switch self {
            case .get: .GET
            case .post: .POST
            case .delete: .DELETE
            }
        }
    }

    var method: Method
    /// Already percent-encoded path, starting with `/`.
    var path: String
    var query: [(String, String)] = []
    /// Header name/value pairs in sending order.
    var headers: [(String, String)] = []
    var body: Data?

    init(method: Method, path: String, query: [(String, String)] = [], headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// Path plus encoded query string.
    var target: String {
        query.isEmpty ? path : path + "?" + FormEncoding.encode(query)
    }
}

/// The one percent-encoding, shared with the engine (login URLs).
typealias FormEncoding = RegcodeSupport.FormEncoding
