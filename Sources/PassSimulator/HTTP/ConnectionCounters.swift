import Synchronization

/// Accepted connections by wire, counted as they are set up (and TLS ones again when their handshake completes).
///
/// Atomics rather than the stats lock: every connection touches them, possibly on every event loop at once.
final class ConnectionCounters: Sendable {
    private let plain = Atomic<Int>(0)
    private let tlsAccepted = Atomic<Int>(0)
    private let tlsHTTP1 = Atomic<Int>(0)
    private let tlsH2 = Atomic<Int>(0)
    /// The peers' addresses, counted as their connections are accepted.
    let peers = PeerCounters()

    /// A plain HTTP connection was accepted.
    func acceptedPlain() {
        self.plain.add(1, ordering: .relaxed)
    }

    /// A connection was accepted on the TLS listener; its handshake has not started yet.
    func acceptedTLS() {
        self.tlsAccepted.add(1, ordering: .relaxed)
    }

    /// A TLS handshake completed with `negotiatedProtocol` (`nil`: the client offered no ALPN, so HTTP/1.1).
    func completedHandshake(negotiatedProtocol: String?) {
        if negotiatedProtocol == "h2" {
            self.tlsH2.add(1, ordering: .relaxed)
        } else {
            self.tlsHTTP1.add(1, ordering: .relaxed)
        }
    }

    /// The counts so far.
    var snapshot: ConnectionStats {
        let http1 = self.tlsHTTP1.load(ordering: .relaxed)
        let h2 = self.tlsH2.load(ordering: .relaxed)
        return ConnectionStats(
            plain: self.plain.load(ordering: .relaxed),
            tlsAccepted: self.tlsAccepted.load(ordering: .relaxed),
            tlsHandshakes: http1 + h2,
            tlsHTTP1: http1,
            tlsH2: h2
        )
    }

    /// Zeroes the counts (`DELETE /_sim/stats`).
    func reset() {
        self.plain.store(0, ordering: .relaxed)
        self.tlsAccepted.store(0, ordering: .relaxed)
        self.tlsHTTP1.store(0, ordering: .relaxed)
        self.tlsH2.store(0, ordering: .relaxed)
        self.peers.reset()
    }
}
