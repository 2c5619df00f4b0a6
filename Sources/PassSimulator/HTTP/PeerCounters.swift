import Hummingbird
import NIOCore
import Synchronization

/// The distinct peer (TCP remote) addresses of the accepted connections, and the requests that carried
/// `X-Forwarded-For`: `peers` in `GET /_sim/stats`, so a test or a lab sees how many clients the backend could tell
/// apart, and whether any client invented a header.
final class PeerCounters: Sendable {
    private let addresses = Mutex<Set<String>>([])
    private let forwardedFor = Atomic<Int>(0)

    /// A connection was accepted from `address`.
    func accepted(from address: SocketAddress?) {
        guard let ip = address?.ipAddress else { return }
        _ = self.addresses.withLock { $0.insert(ip) }
    }

    /// A request carried `X-Forwarded-For`.
    func sawForwardedFor() {
        self.forwardedFor.add(1, ordering: .relaxed)
    }

    var snapshot: PeerStats {
        PeerStats(distinct: self.addresses.withLock { $0.count }, forwardedForRequests: self.forwardedFor.load(ordering: .relaxed))
    }

    /// Forgets the addresses and the count (`DELETE /_sim/stats`).
    func reset() {
        self.addresses.withLock { $0.removeAll() }
        self.forwardedFor.store(0, ordering: .relaxed)
    }
}

/// Counts the requests that carry `X-Forwarded-For` in ``PeerCounters``.
struct ForwardedForCountingMiddleware: RouterMiddleware {
    typealias Context = SimulatorRequestContext

    let peers: PeerCounters

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.headers[.xForwardedFor] != nil { self.peers.sawForwardedFor() }
        return try await next(request, context)
    }
}
