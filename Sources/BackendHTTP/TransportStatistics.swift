import Synchronization

/// Connections a process's pools opened, by wire, and TLS handshakes: for `/metrics` and the soak report.
///
/// Every TLS handshake is a full one: swift-nio-ssl keeps no client session cache to resume from.
package final class TransportStatistics: Sendable {
    private let plainHTTP1 = Atomic<Int>(0)
    private let tlsHTTP1 = Atomic<Int>(0)
    private let tlsHTTP2 = Atomic<Int>(0)
    private let failedHandshakes = Atomic<Int>(0)
    private let retained = Atomic<Int>(0)

    package init() {}

    /// A snapshot of the counters.
    package struct Counts: Sendable, Equatable {
        /// Plain HTTP/1.1 connections opened.
        package var plainHTTP1: Int
        /// TLS connections that negotiated HTTP/1.1.
        package var tlsHTTP1: Int
        /// TLS connections that negotiated HTTP/2.
        package var tlsHTTP2: Int
        /// Completed TLS handshakes (all full: nothing is resumed).
        package var fullHandshakes: Int { tlsHTTP1 + tlsHTTP2 }
        /// TLS connections that failed in or right after the handshake.
        package var failedHandshakes: Int

        package init(plainHTTP1: Int, tlsHTTP1: Int, tlsHTTP2: Int, failedHandshakes: Int) {
            self.plainHTTP1 = plainHTTP1
            self.tlsHTTP1 = tlsHTTP1
            self.tlsHTTP2 = tlsHTTP2
            self.failedHandshakes = failedHandshakes
        }
    }

    package var counts: Counts {
        Counts(
            plainHTTP1: plainHTTP1.load(ordering: .relaxed),
            tlsHTTP1: tlsHTTP1.load(ordering: .relaxed),
            tlsHTTP2: tlsHTTP2.load(ordering: .relaxed),
            failedHandshakes: failedHandshakes.load(ordering: .relaxed)
        )
    }

    func opened(_ version: NegotiatedHTTPVersion, tls: Bool) {
        switch (version, tls) {
        case (.http1, false): plainHTTP1.add(1, ordering: .relaxed)
        case (.http1, true): tlsHTTP1.add(1, ordering: .relaxed)
        case (.http2, _): tlsHTTP2.add(1, ordering: .relaxed)
        }
    }

    func handshakeFailed() {
        failedHandshakes.add(1, ordering: .relaxed)
    }

    /// Connections of the pools still held in memory: the open ones and those closing. Once every pool is shut down
    /// and its closes are done it is 0; a count that grows while the open connections stay few is a leak (each
    /// keeps its channel and buffers).
    package var retainedConnections: Int { retained.load(ordering: .relaxed) }

    func connectionMade() {
        retained.add(1, ordering: .relaxed)
    }

    func connectionFreed() {
        retained.subtract(1, ordering: .relaxed)
    }
}
