import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import RegcodeSupport

/// Applies ``AccessRule`` to each request's head as the HTTP decoder delivers it, before any of its body is read: a
/// refused request is answered (401 or 403, empty, `Connection: close`) and its connection closed, whatever body it
/// announced.
///
/// A route-level check runs only once Hummingbird has handed the request over and, after answering, drains the body
/// to reach the next request, or half-closes and waits for the peer: either way the connection stays as long as an
/// unauthenticated peer keeps sending, past the read timeout (the server holding back is not counted against it).
final class AccessGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let rule: AccessRule
    private let log: RepeatLimitedLog<ContinuousClock>
    /// Set once a request is refused: nothing more is read from or written for the connection but the refusal.
    private var refused = false

    init(rule: AccessRule, log: RepeatLimitedLog<ContinuousClock>) {
        self.rule = rule
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.refused else { return }
        guard case .head(let head) = Self.unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let uri = URI(head.path ?? "/")
        let verdict = self.rule.verdict(
            path: uri.path,
            authorization: head.headerFields[.authorization],
            queryToken: uri.queryParameters["access_token"].map(String.init),
            host: head.authority
        )
        guard verdict != .allowed else {
            context.fireChannelRead(data)
            return
        }
        self.refuse(verdict, context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A response from further in (a request allowed earlier on the connection) must not follow the refusal.
        guard !self.refused else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
    }

    private func refuse(_ verdict: AccessRule.Verdict, context: ChannelHandlerContext) {
        self.refused = true
        var fields: HTTPFields = [.contentLength: "0", .connection: "close"]
        let status: HTTPResponse.Status
        switch verdict {
        case .allowed:
            return
        case .unauthorized:
            status = .unauthorized
            fields[.wwwAuthenticate] = "Bearer realm=\"regcoded\""
            self.log.log(.info, reason: "no token", "Refused an HTTP control request: missing or wrong token", metadata: Self.client(context))
        case .forbiddenHost:
            status = .forbidden
            self.log.log(
                .info,
                reason: "host",
                "Refused an HTTP control request naming a host that is not loopback",
                metadata: Self.client(context)
            )
        }
        context.write(Self.wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        // Closed in full, not half: a peer still sending its body must not keep the connection (a half-closed one
        // lingers in FIN-WAIT-2 for as long as the peer likes).
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: written)
    }

    private static func client(_ context: ChannelHandlerContext) -> Logger.Metadata {
        ["http.client": "\(context.remoteAddress.map { "\($0)" } ?? "unknown")"]
    }
}
