import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// Who may use the control listener.
///
/// - With a token (required when the listener is not on loopback): every request must carry `Authorization: Bearer
///   <token>` (or `access_token=<token>` in the query, for the browser's `EventSource`, which cannot send headers).
///   A missing or wrong token gets `401` with an empty body and nothing else, and the connection is closed
///   without reading the request's body (``AccessGate``). The console page itself (`GET /`) is
///   static and holds no data, so it loads without a token unless a wrong one is presented; it then asks for one.
/// - Without a token (loopback only): requests must name a loopback `Host`, so a web page on another site cannot
///   reach the API through the browser by rebinding a DNS name to 127.0.0.1.
struct AccessRule: Sendable {
    let token: String?

    enum Verdict: Equatable {
        case allowed
        case unauthorized
        case forbiddenHost
    }

    func verdict(path: String, authorization: String?, queryToken: String?, host: String?) -> Verdict {
        guard let token else {
            return Self.isLoopbackHost(host) ? .allowed : .forbiddenHost
        }
        let presented: String?
        if let authorization {
            guard authorization.hasPrefix("Bearer ") else { return .unauthorized }
            presented = String(authorization.dropFirst("Bearer ".count))
        } else {
            presented = queryToken
        }
        guard let presented else {
            return path == "/" ? .allowed : .unauthorized
        }
        return Self.constantTimeEqual(presented, token) ? .allowed : .unauthorized
    }

    /// Compares digests so the time taken says nothing about how much of the token matched.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = SHA256.hash(data: Data(a.utf8))
        let right = SHA256.hash(data: Data(b.utf8))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `127.0.0.1:8081`, `localhost`, `[::1]:8081`, … (HTTP/1.1 requires a Host header; none is refused).
    static func isLoopbackHost(_ host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        let name: Substring
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            name = host[host.index(after: host.startIndex)..<close]
        } else {
            name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        }
        let lowered = name.lowercased()
        if lowered == "localhost" || lowered.hasSuffix(".localhost") || lowered == "::1" { return true }
        // 127.0.0.0/8 as a dotted quad only: `127.0.0.1.evil.example` is a name anyone can point anywhere.
        let parts = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) && Int($0).map { $0 < 256 } == true }
    }
}
