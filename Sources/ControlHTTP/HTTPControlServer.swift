import ControlRPC
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ListenerGuard
import Logging
import NIOCore
import RegcodeSupport
import ServiceLifecycle

/// The control API over HTTP: JSON-RPC at `POST /rpc`, the event stream as server-sent events at `GET /events`, the
/// web console at `/`, and (when given) Prometheus metrics at `/metrics`.
///
/// Calls go through the same ``RPCDispatcher`` and ``ControlHandler`` as the Unix socket: same methods, same errors.
package struct HTTPControlServer: Service {
    package struct Configuration: Sendable {
        package var host: String
        /// 0 picks a free port; `onListening` says which.
        package var port: Int
        /// Required by every request when set; see ``AccessRule``.
        package var token: String?
        /// A comment line on an idle event stream this often.
        package var keepAliveInterval: Duration = .seconds(15)
        /// The least time between two writes of events to one stream (events meanwhile go out together): bounds each
        /// stream's wake-ups and writes whatever the event rate, at the cost of that much delay.
        package var eventWriteInterval: Duration = .milliseconds(50)
        /// How long a cut-off event stream may take to receive its `cutoff` event before the stream is dropped.
        package var cutOffGracePeriod: Duration = .seconds(2)
        /// The most event streams served at once; a stream asked for beyond it gets 503 with `Retry-After`.
        package var maxEventStreams = 256
        /// The `Retry-After` of a refused event stream, in seconds.
        package var refusedStreamRetryAfter = 5
        /// The largest `POST /rpc` body; the socket's line limit.
        package var maxBodySize = 1 << 20
        package var inputLimits = InputLimits()
        /// Connections held at once (past it, a new one is accepted and closed at once, and counted), the idle
        /// timeout of a connection with no request in progress (an open event stream is a request in progress), and
        /// how long a request's head and body may take to arrive once begun.
        package var limits = ListenerLimits(maxConnections: 1024)
        /// Where `POST /rpc` bodies are parsed and answered: off the event loops, a bounded number at once.
        package var inputWorkers = InputWorkers.shared

        package init(host: String, port: Int, token: String? = nil) {
            self.host = host
            self.port = port
            self.token = token
        }
    }

    let configuration: Configuration
    let dispatcher: RPCDispatcher
    let metrics: (@Sendable () -> String)?
    let onListening: @Sendable (Int) async -> Void
    let logger: Logger
    /// Open event streams: capped, counted, and ended together at graceful shutdown (an idle stream would otherwise
    /// hold it up).
    package let streams: OpenStreams
    /// The listener's cap, counts and timeouts.
    package let listenerGuard: ListenerGuard
    /// Where refused requests are logged: a flood of them costs a line per interval.
    let accessLog: RepeatLimitedLog<ContinuousClock>

    /// - Parameters:
    ///   - streams: Where open event streams are counted against their limit; by default a new one with
    ///     ``Configuration/maxEventStreams``.
    ///   - metrics: The Prometheus exposition to serve at `/metrics`; nil serves none.
    ///   - onListening: Called with the bound port once the listener accepts connections.
    package init(
        configuration: Configuration,
        handler: any ControlHandler,
        streams: OpenStreams? = nil,
        metrics: (@Sendable () -> String)? = nil,
        logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.streams = streams ?? OpenStreams(limit: configuration.maxEventStreams)
        self.dispatcher = RPCDispatcher(
            handler: handler,
            inputLimits: configuration.inputLimits,
            workers: configuration.inputWorkers,
            logger: logger
        )
        self.metrics = metrics
        self.onListening = onListening
        self.logger = logger
        self.listenerGuard = ListenerGuard(name: "http", limits: configuration.limits, logger: logger)
        self.accessLog = RepeatLimitedLog(logger: logger)
    }

    package func run() async throws {
        let app = self.makeApplication()
        let streams = self.streams
        try await withGracefulShutdownHandler {
            // `run()`, not `runService()`: the latter is a service group of its own that stops on SIGTERM by itself,
            // ahead of its turn in the daemon's group, which then counts it as finished unexpectedly.
            try await app.run()
        } onGracefulShutdown: {
            streams.closeAll()
        }
    }

    /// The listener as ``run()`` serves it (tests serve it the same way).
    func makeApplication() -> some ApplicationProtocol {
        let port = self.configuration.port
        let onListening = self.onListening
        let listenerGuard = self.listenerGuard
        return Application(
            router: self.makeRouter(),
            server: self.serverBuilder(),
            configuration: .guarded(host: self.configuration.host, port: port, serverName: "regcoded", by: listenerGuard),
            onServerRunning: { channel in
                try? await listenerGuard.install(on: channel)
                await onListening(channel.localAddress?.port ?? port)
            },
            logger: self.logger
        )
    }

    /// The listener's connections: HTTP/1.1 within the ``ListenerGuard``, each request's head checked against the
    /// ``AccessRule`` before its body is read, and a body's parts from one read reaching `POST /rpc` as one, however
    /// finely it was chunked.
    private func serverBuilder() -> HTTPServerBuilder {
        .guarded(by: self.listenerGuard, configuration: self.http1Configuration)
    }

    private var http1Configuration: HTTP1Channel.Configuration {
        let rule = AccessRule(token: self.configuration.token)
        let log = self.accessLog
        return HTTP1Channel.Configuration(additionalChannelHandlers: [AccessGate(rule: rule, log: log), RequestBodyCoalescer()])
    }

    func makeRouter() -> Router<ControlRequestContext> {
        let router = Router(context: ControlRequestContext.self)
        router.get("/") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [
                    .contentType: "text/html; charset=utf-8",
                    .cacheControl: "no-store",
                    // Everything the page needs is inline or same-origin: nothing is fetched from elsewhere.
                    .contentSecurityPolicy:
                        "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
                    HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: PackageResources.index_html))
            )
        }
        router.post("/rpc") { request, context -> Response in
            try await self.rpc(request, context: context)
        }
        router.get("/events") { request, context -> Response in
            try await self.events(request, context: context)
        }
        if let metrics {
            router.get("/metrics") { _, _ -> Response in
                Response(
                    status: .ok,
                    headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: metrics()))
                )
            }
        }
        return router
    }

    // MARK: POST /rpc

    func rpc(_ request: Request, context: ControlRequestContext) async throws -> Response {
        // A JSON body is what makes a cross-site form or `fetch` without CORS preflight impossible; nothing else is read.
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            return Self.json(
                .unsupportedMediaType,
                RPCMessage.error(id: .null, .invalidRequest("POST /rpc takes a JSON-RPC request with Content-Type: application/json"))
            )
        }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: self.configuration.maxBodySize)
        } catch let refusal as RequestBodyCoalescer.TooFinelyChunked {
            let error = RPCError(
                code: -32600,
                message:
                    "body refused unread: \(refusal.parts) parts for \(refusal.bytes) bytes (at most \(RequestBodyCoalescer.freeParts) parts and one more per \(RequestBodyCoalescer.bytesPerPart) bytes)",
                data: ["limit": .int(Int64(RequestBodyCoalescer.bytesPerPart)), "inputLimit": "bytesPerPart"]
            )
            return Self.json(.badRequest, RPCMessage.error(id: .null, error))
        } catch {
            return Self.json(.contentTooLarge, RPCMessage.error(id: .null, .lineTooLong(limit: self.configuration.maxBodySize)))
        }
        switch await self.dispatcher.answer(body, peer: .http(remoteAddress: context.remoteDescription), allowSubscribe: false) {
        case .none:
            return Response(status: .noContent)
        case .reply(let reply):
            return Self.json(.ok, reply)
        case .subscribed(_, let subscription):
            // Not reached: subscribe is refused on this transport.
            subscription.cancel()
            return Response(status: .internalServerError)
        }
    }

    static func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        var text = JSONWriter.text(value)
        text += "\n"
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }

    // MARK: GET /events

    func events(_ request: Request, context: ControlRequestContext) async throws -> Response {
        // A slot first: a stream beyond the limit costs neither a subscription nor a replay query.
        let slot: OpenStreams.Slot
        do {
            slot = try self.streams.reserve()
        } catch {
            context.logger.debug("Event stream refused", metadata: ["http.client": "\(context.remoteDescription)", "reason": "\(error)"])
            return self.refusedStream(error)
        }
        let subscription: Subscription
        do throws(RPCError) {
            let params = try EventStreamQuery.params(
                query: request.uri.queryParameters.map { ($0.key, $0.value) },
                lastEventID: request.headers[HTTPField.Name("Last-Event-ID")!]
            )
            subscription = try await self.dispatcher.subscribe(params: params, peer: .http(remoteAddress: context.remoteDescription))
        } catch {
            return Self.json(.badRequest, RPCMessage.error(id: .null, error))
        }
        var logger = context.logger
        logger[metadataKey: "http.client"] = "\(context.remoteDescription)"
        logger.debug("Event stream opened")
        let stream = EventStream(
            subscription: subscription,
            slot: slot,
            channel: context.channel,
            keepAliveInterval: self.configuration.keepAliveInterval,
            writeInterval: self.configuration.eventWriteInterval,
            cutOffGracePeriod: self.configuration.cutOffGracePeriod,
            logger: logger
        )
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in try await stream.write(to: &writer) }
        )
    }

    /// 503 with `Retry-After`: the limit of open streams is reached (or the listener is shutting down).
    private func refusedStream(_ refusal: OpenStreams.Refusal) -> Response {
        let message =
            switch refusal {
            case .full: "the HTTP listener already serves its maximum of \(self.streams.limit) event streams; retry later"
            case .closing: "the HTTP listener is shutting down"
            }
        var response = Self.json(.serviceUnavailable, RPCMessage.error(id: .null, .unavailable(message)))
        response.headers[.retryAfter] = "\(self.configuration.refusedStreamRetryAfter)"
        return response
    }
}
