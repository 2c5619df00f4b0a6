import Hummingbird
import HummingbirdCore
import ListenerGuard
import Logging
import NIOCore

/// An HTTP/1.1 connection bounded by its listener's ``ListenerGuard``: its idle timeout (a connection with no request
/// in progress; an open event stream is one) and its read deadline (a request must arrive whole once begun), both
/// counted in the listener's `timedOut`.
package struct GuardedHTTP1Channel: ServerChildChannel {
    package typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let listenerGuard: ListenerGuard

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        self.base.setup(channel: channel, logger: logger).flatMapThrowing { [listenerGuard] value in
            try listenerGuard.addHTTPReadDeadline(to: channel)
            return value
        }
    }

    package func handle(value: Value, logger: Logger) async {
        await self.base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 connections bounded by `listenerGuard` (see ``GuardedHTTP1Channel``).
    package static func guarded(by listenerGuard: ListenerGuard, configuration: HTTP1Channel.Configuration = .init()) -> HTTPServerBuilder {
        .init { responder in
            GuardedHTTP1Channel(
                base: HTTP1Channel(responder: responder, configuration: configuration),
                listenerGuard: listenerGuard
            )
        }
    }
}

extension ApplicationConfiguration {
    /// A configuration listening on `host:port` with the guard's backlog.
    package static func guarded(host: String, port: Int, serverName: String, by listenerGuard: ListenerGuard) -> ApplicationConfiguration {
        ApplicationConfiguration(
            address: .hostname(host, port: port),
            serverName: serverName,
            backlog: Int(listenerGuard.limits.backlog)
        )
    }
}
