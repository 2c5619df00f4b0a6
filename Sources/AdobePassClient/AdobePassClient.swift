import BackendHTTP
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RegcodeEngine

/// Executes the engine's `BackendRequest`s against an Adobe Pass backend (DCR, REST API v2, legacy v1).
///
/// Stateless apart from its configuration and a cache of single sign-on identity tokens: every per-device input
/// comes in the `RequestContext`, so one value can serve a whole fleet concurrently. `http://` and `https://` backends
/// take the same path: ``ConnectionPools`` of ``KeepAliveConnectionPool``s.
package struct AdobePassClient: Sendable {
    package let configuration: AdobePassClientConfiguration
    private let logger: Logger
    /// Platform identity and service tokens (`RequestContext.ssoIdentity`), shared by copies of this value.
    private let identityTokens: SSOIdentityTokens

    /// The connections of every connection model (the caller's, or this value's own).
    private let connectionPools: ConnectionPools
    /// The backend's scheme, host, port and path; nil when the base URL is not one (every call then fails).
    private let origin: Origin?
    /// Shared by copies of this value, so a fleet's devices warn once per cause.
    private let tlsWarnings = TLSFailureWarnings()

    /// - Parameter connectionPools: Shared by the clients of one daemon, which shuts it down; without it the
    ///   value makes its own, whose idle connections close when the server closes them.
    package init(configuration: AdobePassClientConfiguration, connectionPools: ConnectionPools? = nil, logger: Logger) {
        self.configuration = configuration
        let connectionPools = connectionPools ?? ConnectionPools()
        self.connectionPools = connectionPools
        self.origin = Origin(baseURL: configuration.baseURL)
        self.logger = logger
        self.identityTokens = SSOIdentityTokens(
            origin: origin,
            connectionPools: connectionPools,
            timeout: configuration.requestTimeout,
            maxResponseBodyBytes: 64 * 1024
        )
    }

    /// Performs one backend call and interprets the answer. Never throws: every problem is a `BackendFailure`.
    ///
    /// The whole exchange is bounded by `configuration.requestTimeout`; cancelling the calling task ends it
    /// with `.transport("cancelled")`.
    nonisolated(nonsending) package func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure>
    {
        if case .wire(let wire) = request { return await execute(wire, context: context) }
        var call = RequestBuilder.call(for: request, context: context, configuration: configuration)
        // Every message below is debug or trace: at the usual levels a fleet's requests build no metadata.
        let logsRequests = logger.logLevel <= .debug
        var logger = self.logger
        if logsRequests {
            logger[metadataKey: "request.name"] = .string(request.name)
            logger[metadataKey: "api.profile"] = .string(context.profile.rawValue)
            logger[metadataKey: "http.method"] = .string(call.method.rawValue)
            logger[metadataKey: "http.path"] = .string(call.path)
        }
        if let identity = context.ssoIdentity, !identity.isEmpty, SSOIdentityTokens.applies(to: request, path: call.path) {
            call.headers += await identityTokens.headers(for: identity, deviceID: context.deviceID, logger: logger)
        }
        logger.trace("Sending Adobe Pass request")

        let clock = ContinuousClock()
        let start = clock.now
        let exchange: Result<RawResponse, TransportFailure>
        if let origin {
            exchange = await send(
                call,
                over: connectionPools.pool(for: context, origin: origin),
                closeConnection: context.connections == .perRequest,
                sourceAddress: context.sourceAddress
            )
        } else {
            exchange = .failure(TransportFailure(description: "the backend URL \(configuration.baseURL) is not http:// or https://"))
        }
        if logsRequests {
            logger[metadataKey: "latency_ms"] = .stringConvertible(Self.milliseconds(start.duration(to: clock.now)))
        }

        switch exchange {
        case .failure(let failure):
            logger.debug("Adobe Pass request failed in transport", metadata: ["error": .string(failure.description)])
            return .failure(.transport(failure.description, code: failure.code))
        case .success(let response):
            let result: Result<BackendResponse, BackendFailure>
            if let body = response.body {
                result = AdobePassResponseParser.parse(
                    request: request,
                    profile: context.profile,
                    status: response.status,
                    retryAfter: response.retryAfter,
                    body: body
                )
            } else if (200..<300).contains(response.status) {
                result = .failure(
                    .malformed(status: response.status, reason: "body exceeds \(configuration.maxResponseBodyBytes) bytes")
                )
            } else {
                result = .failure(
                    .http(
                        status: response.status,
                        retryAfter: AdobePassResponseParser.retryAfterDuration(response.retryAfter),
                        error: nil
                    )
                )
            }
            guard logsRequests else { return result }
            logger[metadataKey: "http.status"] = .stringConvertible(response.status)
            switch result {
            case .success:
                logger.debug("Adobe Pass request succeeded")
            case .failure(.http(_, let retryAfter, let error)):
                var metadata: Logger.Metadata = [:]
                if let error { metadata["error.code"] = .string(error.code) }
                if let retryAfter { metadata["retry_after_ms"] = .stringConvertible(Self.milliseconds(retryAfter)) }
                logger.debug("Adobe Pass request returned an error status", metadata: metadata)
            case .failure(let failure):
                logger.debug("Adobe Pass response not understood", metadata: ["error": "\(failure)"])
            }
            return result
        }
    }

    /// A request another protocol's state machine built whole (the OAuth device grant's): sent as it is to the
    /// origin its URL names (a path alone goes to the backend's), every answer handed back whatever its status.
    nonisolated(nonsending) private func execute(_ wire: WireRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure> {
        guard let (target, origin) = Self.split(wire.url, backend: origin) else {
            return .failure(.transport("\(wire.name): \(wire.url) is not an http:// or https:// URL"))
        }
        var headers = wire.headers.map { ($0.name, $0.value) }
        if let userAgent = context.identity.userAgent { headers.append(("User-Agent", userAgent)) }
        if let forwardedFor = context.forwardedFor { headers.append(("X-Forwarded-For", forwardedFor)) }
        let call = HTTPCall(
            method: wire.method == .get ? .get : .post,
            path: target,
            headers: headers,
            body: wire.method == .get ? nil : Data(wire.body)
        )
        let exchange = await send(
            call,
            over: connectionPools.pool(for: context, origin: origin),
            closeConnection: context.connections == .perRequest,
            sourceAddress: context.sourceAddress
        )
        switch exchange {
        case .failure(let failure):
            logger.debug("request failed in transport", metadata: ["request.name": .string(wire.name), "error": .string(failure.description)])
            return .failure(.transport(failure.description, code: failure.code))
        case .success(let response):
            guard let body = response.body else {
                return .failure(.malformed(status: response.status, reason: "body exceeds \(configuration.maxResponseBodyBytes) bytes"))
            }
            return .success(.wire(WireResponse(status: response.status, retryAfter: response.retryAfter, body: Array(body))))
        }
    }

    /// The request target and origin of `url`: an absolute URL's own, or the backend's for a path.
    static func split(_ url: String, backend: Origin?) -> (target: String, origin: Origin)? {
        guard url.contains("://") else {
            guard let backend, url.hasPrefix("/") else { return nil }
            return (url, backend)
        }
        let schemeEnd = url.range(of: "://")!.upperBound
        let pathStart = url[schemeEnd...].firstIndex { $0 == "/" || $0 == "?" } ?? url.endIndex
        guard let origin = Origin(baseURL: String(url[..<pathStart])) else { return nil }
        let rest = String(url[pathStart...])
        return (rest.isEmpty ? "/" : rest.hasPrefix("?") ? "/" + rest : rest, origin)
    }

    // MARK: - Transport

    private struct RawResponse: Sendable {
        var status: Int
        var retryAfter: String?
        /// nil when the body was larger than the configured limit.
        var body: Data?
    }

    private struct TransportFailure: Error, CustomStringConvertible {
        var description: String
        /// A cause an operator can act on (a refused certificate), stored as the request's error code.
        var code: String?
    }

    /// Runs the exchange on a keep-alive pool under one overall deadline, body included.
    nonisolated(nonsending) private func send(
        _ call: HTTPCall,
        over pool: KeepAliveConnectionPool,
        closeConnection: Bool,
        sourceAddress: String?
    ) async -> Result<RawResponse, TransportFailure> {
        let timeout = configuration.requestTimeout
        var source: SocketAddress?
        if let sourceAddress {
            // The daemon hands out parsed addresses only; anything else must not go out from the host's address.
            guard let address = try? SocketAddress(ipAddress: sourceAddress, port: 0) else {
                return .failure(TransportFailure(description: "client address \(sourceAddress) is not an IP address"))
            }
            source = address
        }
        let request = KeepAliveRequest(
            method: call.method.httpMethod,
            target: call.target,
            headers: call.headers,
            body: call.body.map { ByteBuffer(bytes: $0) },
            closeConnection: closeConnection,
            sourceAddress: source
        )
        do {
            let answer = try await pool.execute(request, deadline: .now() + TimeAmount(timeout), maxBodyBytes: configuration.maxResponseBodyBytes)
            return .success(RawResponse(status: answer.status, retryAfter: answer.retryAfter, body: answer.body.map { Data(buffer: $0) }))
        } catch let KeepAliveHTTPError.tls(failure) {
            tlsWarnings.report(failure, backend: configuration.baseURL, logger: logger)
            return .failure(TransportFailure(description: failure.description, code: failure.code))
        } catch {
            return .failure(TransportFailure(description: Self.describe(error, timeout: timeout)))
        }
    }

    private static func describe(_ error: any Error, timeout: Duration) -> String {
        if error is CancellationError || Task.isCancelled {
            return "cancelled"
        }
        if let error = error as? KeepAliveHTTPError {
            switch error {
            case .deadlineExceeded: return "timeout after \(timeout)"
            case .connectTimeout: return "connect timeout"
            case .closedByServer: return "connection closed by the server"
            case .cancelled: return "cancelled"
            case .connectFailed, .shutdown, .protocolError, .connectionBudgetExhausted, .tls: return error.description
            }
        }
        return "\(error)"
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let components = duration.components
        return components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

/// Maps (request, API profile) to the concrete HTTP call.
enum RequestBuilder {
    static func call(
        for request: BackendRequest,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        switch (request, context.profile) {
        case (.wire(let wire), _):
            // Sent by `execute(_:context:)` itself; described here for completeness (logs, tests).
            HTTPCall(
                method: wire.method == .get ? .get : .post,
                path: AdobePassClient.split(wire.url, backend: nil)?.target ?? wire.url,
                headers: wire.headers.map { ($0.name, $0.value) },
                body: wire.method == .get ? nil : Data(wire.body)
            )
        case (.registerClient(let statement), _):
            DCRRequests.register(softwareStatement: statement, context: context, configuration: configuration)
        case (.obtainAccessToken(let credentials), _):
            DCRRequests.token(credentials: credentials, context: context, configuration: configuration)
        case (.configuration, .v2):
            V2Requests.configuration(context: context, configuration: configuration)
        case (.configuration, .v1):
            V1Requests.configuration(context: context, configuration: configuration)
        case (.createSession(let mvpd), .v2):
            V2Requests.createSession(mvpd: mvpd, context: context, configuration: configuration)
        case (.createSession(let mvpd), .v1):
            V1Requests.createRegcode(mvpd: mvpd, context: context, configuration: configuration)
        case (.pollProfile(let code, _), .v2):
            V2Requests.pollProfile(code: code, context: context, configuration: configuration)
        case (.pollProfile, .v1), (.fetchProfile, .v1):
            V1Requests.pollToken(context: context, configuration: configuration)
        case (.checkAuthentication, .v2), (.launchProfiles(nil), _):
            V2Requests.profiles(context: context, configuration: configuration)
        case (.launchProfiles(let mvpd?), _):
            V2Requests.profile(mvpd: mvpd, context: context, configuration: configuration)
        case (.checkAuthentication, .v1):
            V1Requests.checkAuthentication(context: context, configuration: configuration)
        case (.fetchProfile(let mvpd), .v2), (.userMetadata(let mvpd), .v2):
            V2Requests.profile(mvpd: mvpd, context: context, configuration: configuration)
        case (.userMetadata, .v1):
            V1Requests.userMetadata(context: context, configuration: configuration)
        // v2 decisions carry the media token, so the v1 `tokens/media` step is the authorize decision there.
        case (.authorize(let mvpd, let resource), .v2), (.mediaToken(let mvpd, let resource), .v2):
            V2Requests.decisions("authorize", mvpd: mvpd, resources: [resource], context: context, configuration: configuration)
        case (.authorize(_, let resource), .v1):
            V1Requests.authorize(resource: resource, context: context, configuration: configuration)
        case (.mediaToken(_, let resource), .v1):
            V1Requests.mediaToken(resource: resource, context: context, configuration: configuration)
        case (.preauthorize(let mvpd, let resources), .v2):
            V2Requests.decisions("preauthorize", mvpd: mvpd, resources: resources, context: context, configuration: configuration)
        case (.preauthorize(_, let resources), .v1):
            V1Requests.preauthorize(resources: resources, context: context, configuration: configuration)
        case (.logout(let mvpd), .v2):
            V2Requests.logout(mvpd: mvpd, context: context, configuration: configuration)
        case (.logout, .v1):
            V1Requests.logout(context: context, configuration: configuration)
        // Apple single sign-on is emulated on REST v2 only (sso.md §3.3); v1 devices never ask for it. The MVPD
        // travels in `AP-Partner-Framework-Status`, not in the body.
        case (.partnerSession, _):
            PartnerRequests.session(context: context, configuration: configuration)
        case (.partnerProfile(let saml, _), _):
            PartnerRequests.profile(samlResponse: saml, context: context, configuration: configuration)
        }
    }
}
