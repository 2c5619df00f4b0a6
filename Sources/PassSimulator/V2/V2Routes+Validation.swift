import Hummingbird
import Logging

/// What every v2 handler checks before it acts: the token and its service provider, the MVPD, the device, the form
/// fields Adobe requires.
extension V2Routes {
    /// The client id behind the request's bearer token (else 401 `invalid_access_token_client_application`) and the
    /// path's service provider (else 400 `invalid_parameter_service_provider`), which the token's software statement
    /// must cover (else 401 `invalid_access_token_service_provider`).
    func authorize(_ request: Request, context: SimulatorRequestContext) async throws -> (clientId: String, serviceProvider: String) {
        guard let token = request.bearerToken, let client = self.state.withLock({ $0.client(forAccessToken: token) }) else {
            throw EnhancedError.invalidAccessToken
        }
        let sp = try self.serviceProvider(context)
        guard self.configuration.softwareStatement(client.softwareId, covers: sp) else {
            context.logger.info(
                "access token used outside its software statement",
                metadata: ["sp": .string(sp), "dcr.client_id": .string(client.clientId), "dcr.software_id": .string(client.softwareId)]
            )
            throw EnhancedError.invalidAccessTokenServiceProvider
        }
        return (client.clientId, sp)
    }

    /// Unless lenient, the body must be declared as a form (reference §7.1); else 415.
    func requireForm(_ request: Request) throws {
        guard request.hasFormContentType || self.configuration.lenient else {
            throw EnhancedError.unsupportedMediaType(expected: "application/x-www-form-urlencoded")
        }
    }

    /// The path's `{mvpd}`: configured (else `invalid_parameter_mvpd`) and integrated with the service provider (else
    /// `invalid_integration`).
    func mvpdPath(_ context: SimulatorRequestContext, serviceProvider: String) async throws -> String {
        let mvpd = try context.parameters.require("mvpd")
        try await self.checkMVPD(mvpd, serviceProvider: serviceProvider)
        return mvpd
    }

    /// A configured MVPD (else `invalid_parameter_mvpd`) whose integration with the service provider exists and is
    /// enabled (else `invalid_integration`).
    func checkMVPD(_ mvpd: String, serviceProvider: String) async throws {
        guard self.configuration.mvpd(id: mvpd) != nil else { throw EnhancedError.invalidMVPD }
        guard self.state.withLock({ $0.integrationIsActive(serviceProvider: serviceProvider, mvpd: mvpd) }) else {
            throw EnhancedError.invalidIntegration(serviceProvider: serviceProvider, mvpd: mvpd)
        }
    }

    func serviceProvider(_ context: SimulatorRequestContext) throws -> String {
        guard let sp = context.parameters.get("sp"), self.configuration.accepts(serviceProvider: sp) else {
            throw EnhancedError.invalidServiceProvider
        }
        return sp
    }

    /// A pending or completed session of the path's `{code}`; unknown → `invalid_parameter_code`, dead → `invalid_authentication_session`.
    func liveSession(_ context: SimulatorRequestContext, serviceProvider: String) async throws -> AuthenticationSession {
        let code = try context.parameters.require("code")
        guard let session = self.state.withLock({ $0.session(code: code, serviceProvider: serviceProvider, api: .v2) }) else {
            throw EnhancedError.invalidCode
        }
        guard session.isLive else { throw EnhancedError.invalidAuthenticationSession }
        return session
    }

    /// A `domainName` must be one the service provider lists (or a subdomain of one), and a `redirectUrl` an absolute
    /// URL; either may be missing (the session then waits for a resume).
    func checkDomainAndRedirect(_ fields: [String: String], serviceProvider: String) throws {
        if let domain = Self.nonEmpty(fields["domainName"]), !self.configuration.lists(domainName: domain, for: serviceProvider) {
            throw EnhancedError.invalidDomainName
        }
        if let redirect = Self.nonEmpty(fields["redirectUrl"]), !self.configuration.lenient, !Self.isAbsoluteURL(redirect) {
            throw EnhancedError.invalidRedirectURL
        }
    }

    /// `scheme:rest` with an RFC 3986 scheme and no whitespace.
    static func isAbsoluteURL(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex,
            text.unicodeScalars.allSatisfy({ !$0.properties.isWhitespace })
        else { return false }
        let scheme = text[..<colon].utf8
        guard let first = scheme.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else { return false }
        return scheme.allSatisfy { byte in
            let lower = byte | 0x20
            return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    func mvpdParameter(_ fields: [String: String], serviceProvider: String) async throws -> String? {
        guard let mvpd = Self.nonEmpty(fields["mvpd"]) else { return nil }
        try await self.checkMVPD(mvpd, serviceProvider: serviceProvider)
        return mvpd
    }

    /// The Base64 value of `AP-Device-Identifier: fingerprint <base64>`; 400 `invalid_header_device_identifier` when
    /// malformed, or when missing and `required`.
    static func deviceIdentifier(_ request: Request, required: Bool) throws -> String? {
        guard let header = request.headers[.apDeviceIdentifier] else {
            if required { throw EnhancedError.invalidDeviceIdentifier }
            return nil
        }
        guard let fingerprint = CredentialsHeader.fingerprint(header) else { throw EnhancedError.invalidDeviceIdentifier }
        return fingerprint
    }

    /// The decoded `X-Device-Info`; 400 `invalid_header_device_info` when not Base64, or when missing (unless lenient).
    func deviceInfo(_ request: Request) throws -> DeviceInfo? {
        guard let header = request.headers[.xDeviceInfo] else {
            if self.configuration.lenient { return nil }
            throw EnhancedError.invalidDeviceInfo
        }
        guard let info = DeviceInfo(headerValue: header) else { throw EnhancedError.invalidDeviceInfo }
        return info
    }

    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
