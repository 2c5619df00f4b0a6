import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import ListenerGuard
import NIOCore

extension HTTPServerBuilder {
    /// The simulator's server: plain HTTP/1.1, or HTTPS with `h2` and `http/1.1` by ALPN (or `http/1.1` only), each
    /// connection on its event loop and counted in `counters`, and bounded by `listener` (its idle timeout; its read
    /// deadline on HTTP/1.1).
    ///
    /// The TLS channels are the ones Hummingbird's `.http2Upgrade(tlsConfiguration:)` and `.tls(.http1(), …)` build,
    /// made here because those builders do not hand out the channel the wrappers need. The PEM files are read when
    /// the server starts; a bad file stops the start with a ``SimulatorTLSError``.
    static func simulator(tls: SimulatorTLS?, counters: ConnectionCounters, listener: ListenerGuard? = nil) -> HTTPServerBuilder {
        // HTTP/1.1 idles out in the listener's own handler (counted); a connection that settles its protocol by ALPN
        // (HTTP/2, or HTTP/1.1 after the handshake) also in Hummingbird's. Every connection owes its handshake and
        // first request within the listener's read timeout (see `TLSHandshakeCounter`).
        let http1 = HTTP1Channel.Configuration()
        let negotiated = HTTP1Channel.Configuration(idleTimeout: listener?.limits.idleTimeout.map { TimeAmount($0) })
        guard let tls else {
            return .init { responder in
                ConnectionCountingChannel(
                    base: ConnectionLoopChannel(base: HTTP1Channel(responder: responder, configuration: http1)),
                    wire: .plain,
                    counters: counters,
                    listener: listener
                )
            }
        }
        let http2 = HTTP2ChannelConfiguration(idleTimeout: listener?.limits.idleTimeout, streamConfiguration: negotiated)
        return .init { responder in
            let configuration = try tls.serverConfiguration()
            switch tls.protocols {
            case .http2AndHTTP1:
                return ConnectionCountingChannel(
                    base: ConnectionLoopChannel(
                        base: try HTTP2UpgradeChannel(tlsConfiguration: configuration, configuration: http2, responder: responder)
                    ),
                    wire: .tls,
                    counters: counters,
                    listener: listener
                )
            case .http1Only:
                return ConnectionCountingChannel(
                    base: ConnectionLoopChannel(
                        base: try TLSChannel(HTTP1Channel(responder: responder, configuration: http1), tlsConfiguration: configuration)
                    ),
                    wire: .tls,
                    counters: counters,
                    listener: listener
                )
            }
        }
    }
}
