import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Applies fault injection and counts every API request by class and status.
///
/// It runs outside the throttle, so a throttled answer is counted and an injected fault never consumes a token. As a
/// group middleware it runs only once the router has matched a route, so it classifies the request by the matched
/// route pattern (`context.endpointPath`); a path no route matches is answered 404 without it, never faulted nor
/// counted.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SimulatorRequestContext

    let injector: FaultInjector
    let clock: SimulatorClock
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let route: RouteClassification
        if let classified = self.routes.classification(endpointPath: context.endpointPath) {
            route = classified
        } else {
            context.logger.error("route without an endpoint class", metadata: ["http.route": .string(context.endpointPath ?? "")])
            route = .unclassified
        }
        let plan = self.injector.plan(for: route.endpointClass, protected: route.isProtected(request.method))
        if let latency = plan.latency {
            try await self.clock.sleep(for: latency)
        }
        if let outcome = plan.outcome {
            context.logger.debug(
                "fault injected",
                metadata: ["fault.kind": .string("\(outcome)"), "fault.class": .string(route.endpointClass.rawValue)]
            )
        }
        switch plan.outcome {
        case .drop:
            self.injector.record(route.endpointClass, status: "dropped")
            await context.closeConnection()
            // Never delivered over a real connection (it is closed); in-process router tests, which have no
            // connection, see this empty 500 instead.
            return Response(status: .internalServerError)
        case .error5xx(let code), .error4xx(let code):
            guard let enhanced = plan.enhancedError else {
                self.injector.record(route.endpointClass, status: String(code))
                return Self.serverError(code)
            }
            let status = enhanced.status(drawn: code)
            self.injector.record(route.endpointClass, status: String(status))
            return Self.enhancedError(enhanced, status: status)
        case .throttle429(let retryAfter):
            self.injector.record(route.endpointClass, status: "429")
            var response = Throttle.tooManyRequestsResponse()
            if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        case .tokenExpiry:
            self.injector.record(route.endpointClass, status: "401")
            switch route.api {
            case .v1: return try V1Error.notAuthorized("access token expired").response(from: request, context: context)
            case .oauth: return OAuthRoutes.invalidTokenResponse()
            case .ssoService: return try SSOServiceError.unauthorizedAccess.response(from: request, context: context)
            case .dcr, .v2: return try EnhancedError.invalidAccessToken.response(from: request, context: context)
            }
        case .malformed, nil:
            break
        }

        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            if plan.outcome == .malformed {
                self.injector.record(route.endpointClass, status: "200")
                return await Self.truncated(try error.response(from: request, context: context))
            }
            self.injector.record(route.endpointClass, status: String(error.status.code))
            throw error
        } catch {
            self.injector.record(route.endpointClass, status: "500")
            throw error
        }
        if plan.outcome == .malformed {
            self.injector.record(route.endpointClass, status: "200")
            return await Self.truncated(response)
        }
        self.injector.record(route.endpointClass, status: String(response.status.code))
        return response
    }

    /// Adobe's enhanced error body with the injected action (reference §9.2), `Retry-After` for `retry-after`; a
    /// catalogued code carries Adobe's message (`status` is already Adobe's, see ``InjectedEnhancedError/status(drawn:)``).
    static func enhancedError(_ error: InjectedEnhancedError, status code: Int) -> Response {
        struct Body: Encodable {
            var action: String
            var status: Int
            var code: String
            var message: String
            var helpUrl: String
            var trace: String
        }
        let body = Body(
            action: error.action,
            status: code,
            code: error.code,
            message: error.catalogued?.message ?? "The request failed (\(error.code)).",
            helpUrl: EnhancedError.helpURL,
            trace: UUID().uuidString.lowercased()
        )
        var headers: HTTPFields = [:]
        if let seconds = error.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        // Encoding six plain fields cannot fail; the fallback keeps the fault an answer, never a thrown error.
        return (try? JSONBody.response(HTTPResponse.Status(code: code), body, headers: headers)) ?? serverError(code)
    }

    /// A gateway-style error page, like the openresty pages Adobe's edge serves (5xx and the 4xx an edge
    /// refuses a request with).
    static func serverError(_ code: Int) -> Response {
        // nginx/openresty's own wording for the statuses a gateway produces.
        let phrases = [
            400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Not Allowed", 408: "Request Time-out",
            413: "Request Entity Too Large", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
            503: "Service Temporarily Unavailable",
            504: "Gateway Time-out", 505: "HTTP Version Not Supported", 507: "Insufficient Storage",
        ]
        let phrase = phrases[code] ?? "Server Error"
        let status = HTTPResponse.Status(code: code, reasonPhrase: phrase)
        let title = "\(code) \(phrase)"
        let body = "<html><head><title>\(title)</title></head><body><center><h1>\(title)</h1></center><hr><center>openresty</center></body></html>"
        return Response(
            status: status,
            headers: [.contentType: "text/html", .server: "openresty"],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }

    /// The same answer as 200 with only the first half of its body (at least a dangling `{"`), so it cannot parse.
    static func truncated(_ response: Response) async -> Response {
        let collector = BodyCollector()
        var body = response.body
        do {
            try await body.write(CollectingWriter(collector: collector))
        } catch {
            collector.buffer.clear()
        }
        var bytes = collector.buffer
        let kept = bytes.readableBytes / 2
        var truncated = bytes.readSlice(length: kept) ?? ByteBuffer()
        if truncated.readableBytes < 2 {
            truncated = ByteBuffer(string: #"{""#)
        }
        var headers = response.headers
        headers[.contentLength] = nil
        headers[.contentType] = headers[.contentType] ?? "application/json;charset=utf-8"
        body = .init(byteBuffer: truncated)
        return Response(status: .ok, headers: headers, body: body)
    }

    private final class BodyCollector {
        var buffer = ByteBuffer()
    }

    private struct CollectingWriter: ResponseBodyWriter {
        let collector: BodyCollector

        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.collector.buffer.writeBuffer(&buffer)
        }

        mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
            for buffer in buffers {
                try await self.write(buffer)
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
