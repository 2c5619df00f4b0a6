import Hummingbird
import ListenerGuard
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Counters reported by `GET /_sim/stats`.
package struct SimulatorStats: Sendable, Equatable, Codable {
    /// Requests by endpoint class, then by HTTP status (`"dropped"` for dropped connections).
    package var requests: [EndpointClass: [String: Int]]
    /// Injected faults by kind (every kind present, zeros included).
    package var faults: [FaultKind: Int]
    /// Injected faults by endpoint class, then kind.
    package var faultsByClass: [EndpointClass: [FaultKind: Int]]
    /// Accepted connections by wire.
    package var connections: ConnectionStats
    /// The clients' addresses as the simulator saw them.
    package var peers = PeerStats()
    /// The listener's cap and what it turned away or timed out.
    package var listener = ListenerStats()
    /// The OAuth device flow's polls, early polls and `slow_down`s, tokens issued, refreshed and revoked.
    package var oauth = OAuthStats()

    static var empty: SimulatorStats {
        SimulatorStats(
            requests: [:],
            faults: Dictionary(uniqueKeysWithValues: FaultKind.allCases.map { ($0, 0) }),
            faultsByClass: [:],
            connections: ConnectionStats()
        )
    }
}

/// The listener's connection cap and counts; `listener` in `GET /_sim/stats`. `open` is now; the others count since
/// start (or the last `DELETE /_sim/stats`).
package struct ListenerStats: Sendable, Equatable, Codable {
    /// Connections held at once, at most.
    package var cap: Int
    package var open: Int
    /// Connections accepted past the cap and closed at once.
    package var refused: Int
    /// Connections closed for idling, or for sending a request too slowly.
    package var timedOut: Int

    package init(cap: Int = 0, open: Int = 0, refused: Int = 0, timedOut: Int = 0) {
        self.cap = cap
        self.open = open
        self.refused = refused
        self.timedOut = timedOut
    }

    init(_ snapshot: ListenerCounters.Snapshot) {
        self.init(cap: snapshot.cap, open: snapshot.open, refused: snapshot.refused, timedOut: snapshot.timedOut)
    }

    private enum CodingKeys: String, CodingKey {
        case cap, open, refused
        case timedOut = "timed_out"
    }
}

/// Peer addresses since start (or the last `DELETE /_sim/stats`); `peers` in `GET /_sim/stats`.
package struct PeerStats: Sendable, Equatable, Codable {
    /// Distinct TCP peer addresses of the accepted connections.
    package var distinct: Int
    /// Requests that carried `X-Forwarded-For` (trusted or not).
    package var forwardedForRequests: Int

    package init(distinct: Int = 0, forwardedForRequests: Int = 0) {
        self.distinct = distinct
        self.forwardedForRequests = forwardedForRequests
    }

    private enum CodingKeys: String, CodingKey {
        case distinct
        case forwardedForRequests = "forwarded_for_requests"
    }
}

/// Connections accepted since start (or the last `DELETE /_sim/stats`), by wire; `connections` in `GET /_sim/stats`.
///
/// A client that keeps one connection per device shows up as one connection per device here.
package struct ConnectionStats: Sendable, Equatable, Codable {
    /// Plain HTTP/1.1 connections.
    package var plain: Int
    /// Connections accepted on the TLS listener, whether or not their handshake completed.
    package var tlsAccepted: Int
    /// Completed TLS handshakes: ``tlsHTTP1`` plus ``tlsH2``. Fewer than ``tlsAccepted`` when handshakes failed
    /// (say, a refused client certificate) or are still going on.
    package var tlsHandshakes: Int
    /// TLS connections that negotiated HTTP/1.1 (or no ALPN).
    package var tlsHTTP1: Int
    /// TLS connections that negotiated HTTP/2.
    package var tlsH2: Int

    /// Counts, all zero by default.
    package init(plain: Int = 0, tlsAccepted: Int = 0, tlsHandshakes: Int = 0, tlsHTTP1: Int = 0, tlsH2: Int = 0) {
        self.plain = plain
        self.tlsAccepted = tlsAccepted
        self.tlsHandshakes = tlsHandshakes
        self.tlsHTTP1 = tlsHTTP1
        self.tlsH2 = tlsH2
    }

    private enum CodingKeys: String, CodingKey {
        case plain
        case tlsAccepted = "tls_accepted"
        case tlsHandshakes = "tls_handshakes"
        case tlsHTTP1 = "tls_http1"
        case tlsH2 = "tls_h2"
    }
}
