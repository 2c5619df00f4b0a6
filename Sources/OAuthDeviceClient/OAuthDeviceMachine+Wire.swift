import Foundation
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// A request that cannot be built from the settings.
struct OAuthConfigurationError: Error, CustomStringConvertible {
    var description: String
}

/// How a token endpoint answered (polls and refreshes).
enum TokenAnswer {
    case tokens(OAuthTokenResponse)
    /// An OAuth error member, whatever the status: RFC 6749 §5.2 says 400, Auth0 uses 403 and 429, GitHub 200
    /// (``OAuthProviderRules/tokenErrorStatus``).
    case error(OAuthErrorResponse, status: Int)
    /// Transport failure, 5xx or 429 without an OAuth error: worth another try later.
    case retryable(status: Int?, retryAfter: Duration?, reason: String)
    /// Anything else: another try would get the same.
    case unexpected(status: Int, reason: String)
}

/// Building requests (endpoints, client authentication, the provider row's headers) and reading answers.
extension OAuthDeviceMachine {
    // MARK: Endpoints

    /// The absolute URL of `endpoint`: explicit in the settings, else named by discovery, else the row's default.
    func url(of endpoint: OAuthEndpoint) throws(OAuthConfigurationError) -> String {
        if let explicit = settings.endpoints[endpoint] { return absolute(explicit) }
        if let discovered = discovered?[endpoint] { return absolute(discovered) }
        let path: String?
        do {
            path = try settings.rules.path(endpoint, placeholders: settings.placeholders)
        } catch {
            throw OAuthConfigurationError(description: error.description)
        }
        guard let path else {
            throw OAuthConfigurationError(description: "\(settings.rules.provider.rawValue) has no \(endpoint.rawValue) endpoint")
        }
        return absolute(path)
    }

    /// Whether the device can use `endpoint` at all.
    func hasEndpoint(_ endpoint: OAuthEndpoint) -> Bool {
        (try? url(of: endpoint)) != nil
    }

    func discoveryURL() throws(OAuthConfigurationError) -> String {
        switch settings.discovery {
        case .off:
            throw OAuthConfigurationError(description: "discovery is off")
        case .url(let url):
            return absolute(url)
        case .provider:
            let path: String?
            do {
                path = try settings.rules.discoveryPath(placeholders: settings.placeholders)
            } catch {
                throw OAuthConfigurationError(description: error.description)
            }
            guard let path else {
                throw OAuthConfigurationError(description: "\(settings.rules.provider.rawValue) publishes no discovery document")
            }
            return absolute(path)
        }
    }

    /// A URL as is, a path joined to the base URL.
    private func absolute(_ pathOrURL: String) -> String {
        if pathOrURL.contains("://") { return pathOrURL }
        var base = settings.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        return base + (pathOrURL.hasPrefix("/") ? pathOrURL : "/" + pathOrURL)
    }

    // MARK: Requests

    mutating func makeRequest(_ purpose: OAuthRequestPurpose, id: OAuthRequestID) throws(OAuthConfigurationError) -> OAuthRequest {
        // Always JSON: harmless where it is the default, required where it is not (GitHub, `requiresAcceptJSON`).
        var request = OAuthRequest(id: id, purpose: purpose, method: .post, url: "", headers: [OAuthHeader("Accept", "application/json")], form: [])
        switch purpose {
        case .discovery:
            request.method = .get
            request.url = try discoveryURL()
            return request
        case .deviceAuthorization:
            request.url = try url(of: .deviceAuthorization)
            if let scope = settings.scope { request.form.append(OAuthFormField(OAuthParameter.scope, scope)) }
            if let audience = settings.audience { request.form.append(OAuthFormField(OAuthParameter.audience, audience)) }
            if let resource = settings.resource { request.form.append(OAuthFormField(OAuthParameter.resource, resource)) }
        case .poll:
            guard case .polling(let polling) = state else { throw OAuthConfigurationError(description: "no code to poll") }
            request.url = try url(of: .token)
            request.form = [
                OAuthFormField(OAuthParameter.grantType, OAuthGrantType.deviceCode.rawValue),
                OAuthFormField(OAuthParameter.deviceCode, polling.deviceCode),
            ]
        case .refresh:
            guard case .refreshing(let grant, _) = state, let refreshToken = grant.tokens.refreshToken else {
                throw OAuthConfigurationError(description: "no refresh token")
            }
            request.url = try url(of: .token)
            request.form = [
                OAuthFormField(OAuthParameter.grantType, OAuthGrantType.refreshToken.rawValue),
                OAuthFormField(OAuthParameter.refreshToken, refreshToken),
            ]
        case .revocation(let hint):
            guard case .revoking(let revocation) = state, let token = revocation.tokens.token(hint) else {
                throw OAuthConfigurationError(description: "no \(hint.rawValue) to revoke")
            }
            request.url = try url(of: .revocation)
            request.form = [OAuthFormField(OAuthParameter.token, token), OAuthFormField(OAuthParameter.tokenTypeHint, hint.rawValue)]
        case .exercise(let endpoint):
            guard case .authorized(let grant) = state else { throw OAuthConfigurationError(description: "no access token") }
            request.url = try url(of: endpoint)
            if endpoint == .userinfo {
                request.method = .get
                request.headers.append(OAuthHeader("Authorization", "Bearer \(grant.tokens.accessToken)"))
                return request
            }
            request.form = [
                OAuthFormField(OAuthParameter.token, grant.tokens.accessToken),
                OAuthFormField(OAuthParameter.tokenTypeHint, OAuthTokenTypeHint.accessToken.rawValue),
            ]
        }
        request.headers.append(OAuthHeader("Content-Type", "application/x-www-form-urlencoded"))
        try authenticate(&request)
        return request
    }

    /// Adds the client's authentication (RFC 6749 §2.3.1, RFC 7523 §2.2) to a POST.
    private mutating func authenticate(_ request: inout OAuthRequest) throws(OAuthConfigurationError) {
        let client = settings.client
        switch settings.clientAuthentication {
        case .none:
            request.form.insert(OAuthFormField(OAuthParameter.clientID, client.id), at: 0)
        case .clientSecretBasic:
            // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined.
            let pair = FormEncoding.percentEncode(client.id) + ":" + FormEncoding.percentEncode(client.secret ?? "")
            request.headers.append(OAuthHeader("Authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
        case .clientSecretPost:
            request.form.insert(OAuthFormField(OAuthParameter.clientSecret, client.secret ?? ""), at: 0)
            request.form.insert(OAuthFormField(OAuthParameter.clientID, client.id), at: 0)
        case .privateKeyJWT:
            guard let key = client.signingKey else { throw OAuthConfigurationError(description: "private_key_jwt needs a private key") }
            let claims = try assertionClaims()
            let assertion: String
            do {
                assertion = try ClientAssertion.make(claims: claims, key: key)
            } catch {
                throw OAuthConfigurationError(description: "the client assertion could not be signed: \(error)")
            }
            request.form.insert(
                contentsOf: [
                    OAuthFormField(OAuthParameter.clientID, client.id),
                    OAuthFormField(OAuthParameter.clientAssertionType, OAuthClientAuthentication.jwtBearerAssertionType),
                    OAuthFormField(OAuthParameter.clientAssertion, assertion),
                ],
                at: 0
            )
        }
    }

    /// RFC 7523 §3: the audience is the token endpoint, whichever endpoint the assertion is sent to.
    private mutating func assertionClaims() throws(OAuthConfigurationError) -> ClientAssertion.Claims {
        let issuedAt = clock.epochMilliseconds(at: clock.now) / 1000
        let jti = String(nextRandom(), radix: 16) + String(nextRandom(), radix: 16)
        return ClientAssertion.Claims(
            iss: settings.client.id,
            sub: settings.client.id,
            aud: try url(of: .token),
            jti: jti,
            iat: issuedAt,
            exp: issuedAt + settings.assertionLifetime.milliseconds / 1000
        )
    }

    // MARK: Answers

    static func decode<T: Decodable>(_ type: T.Type, from body: Data) -> T? {
        try? JSONDecoder().decode(type, from: body)
    }

    /// Reads a token endpoint answer. The `error` member decides, whatever the status (see ``TokenAnswer/error``).
    func tokenAnswer(_ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> TokenAnswer {
        let response: OAuthHTTPResponse
        switch result {
        case .failure(let failure): return .retryable(status: nil, retryAfter: nil, reason: failure.reason)
        case .success(let value): response = value
        }
        if (200..<300).contains(response.status), let tokens = Self.decode(OAuthTokenResponse.self, from: response.body) {
            return .tokens(tokens)
        }
        if let error = Self.decode(OAuthErrorResponse.self, from: response.body) {
            return .error(error, status: response.status)
        }
        if response.status >= 500 || response.status == 429 {
            return .retryable(status: response.status, retryAfter: response.retryAfter, reason: "HTTP \(response.status)")
        }
        return .unexpected(status: response.status, reason: "HTTP \(response.status) without a token or an OAuth error")
    }

    /// Whether an answer that is not a success is worth another try (transport failure, 5xx, 429).
    static func isRetryable(_ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> Bool {
        switch result {
        case .failure: true
        case .success(let response): response.status >= 500 || response.status == 429
        }
    }

    static func describe(_ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> String {
        switch result {
        case .failure(let failure): failure.reason
        case .success(let response): "HTTP \(response.status)"
        }
    }

    /// The wait before try `attempt + 1` of a stage (full jitter, bounded; after a 429 never under `Retry-After`),
    /// nil when the retries ran out.
    mutating func stageRetryDelay(after attempt: Int, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> Duration? {
        guard attempt <= settings.retry.stageRetries else { return nil }
        var throttled = false
        var retryAfter: Duration?
        if case .success(let response) = result, response.status == 429 {
            throttled = true
            retryAfter = response.retryAfter
        }
        return settings.retry.stageRetryDelay(throttled: throttled, retryAfter: retryAfter, attempt: attempt, using: &rng)
    }
}

extension OAuthDeviceSnapshot.Tokens {
    func token(_ hint: OAuthTokenTypeHint) -> String? {
        switch hint {
        case .accessToken: accessToken
        case .refreshToken: refreshToken
        }
    }
}
