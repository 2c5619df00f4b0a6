import Hummingbird
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPFields.Element.Name {
    /// The common identifier a device asks a service token for.
    static let xSSOID = Self("X-SSO-ID")!
    /// The link code a second device asks a service token with.
    static let xSSOLink = Self("X-SSO-LINK")!
}

/// Adobe's premium SSO Service (SSO-SVC, revision 1.0.0, 2025-11,
/// https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/features-premium/sso-service/sso-service):
///
/// - `POST /api/{sp}/serviceToken` with `X-SSO-ID` (the common identifier) or `X-SSO-LINK` (a link code): 201, a
///   service token, and the device enrolled under the common identifier;
/// - `GET /api/{sp}/serviceToken` with `AD-Service-Token`: 200, the token refreshed (also shortly after it expired);
/// - `POST /api/{sp}/link`: 201, a 6-digit one-time link code a second device posts as `X-SSO-LINK`;
/// - `POST /api/{sp}/unlink` `{"devices": [...]}`: 200, those of them that were enrolled, removed;
/// - `GET /api/{sp}/list`: 200, the other devices enrolled under the token's common identifier.
///
/// Every call needs a DCR access token covering `{sp}`. Errors have the page's own shape (``SSOServiceError``). The
/// token and link code field names follow ``SSOServiceSettings/fieldNames``. REST v2 takes the token in
/// `AD-Service-Token` as single sign-on on the devices enrolled under its `sub` (`V2Routes.ssoSubjects`): the same
/// common identifier on two devices is single sign-on across them.
struct SSOServiceRoutes: Sendable {
    let routes: V2Routes

    /// Class `other`; the API's own error shape for injected token expiry.
    var apiRoutes: [APIRoute] {
        [
            APIRoute("api/{sp}/serviceToken", .other, .ssoService, [.post: self.createToken, .get: self.refreshToken]),
            APIRoute("api/{sp}/link", .other, .ssoService, [.post: self.link]),
            APIRoute("api/{sp}/unlink", .other, .ssoService, [.post: self.unlink]),
            APIRoute("api/{sp}/list", .other, .ssoService, [.get: self.list]),
        ]
    }

    private var state: SharedSimulatorState { self.routes.state }
    private var settings: SSOServiceSettings { self.routes.configuration.ssoService }

    // MARK: Bodies

    /// A token or link code answer: `status`, the value under the configured name(s), its window in epoch ms.
    private struct Issued: Encodable {
        let status: String
        let names: [String]
        let value: String
        let notBefore: Int64
        let notAfter: Int64

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(self.status, forKey: AnyCodingKey("status"))
            for name in self.names {
                try container.encode(self.value, forKey: AnyCodingKey(name))
            }
            try container.encode(self.notBefore, forKey: AnyCodingKey("notBefore"))
            try container.encode(self.notAfter, forKey: AnyCodingKey("notAfter"))
        }
    }

    private struct UnlinkRequest: Decodable {
        let devices: [String]?
    }

    private struct UnlinkResponse: Encodable {
        var status = "OK"
        let unlinkedDevices: [String]
    }

    /// One device of the list, with the attribute names of Adobe's list sample.
    private struct ListedDevice: Encodable {
        let deviceType: String?
        let model: String?
        let os: String?
        let osVersion: String?
        let userAgent: String?
        let lastSeen: Int64
        let type: SSOServiceDevice.Enrolment

        init(_ device: SSOServiceDevice) {
            self.deviceType = device.attributes["deviceType"]
            self.model = device.attributes["model"]
            self.os = device.attributes["os"]
            self.osVersion = device.attributes["osVersion"]
            self.userAgent = device.attributes["userAgent"]
            self.lastSeen = device.lastSeen
            self.type = device.enrolment
        }
    }

    private struct ListResponse: Encodable {
        let devices: [String: ListedDevice]
    }

    // MARK: Handlers

    @Sendable func createToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sp = try await self.serviceProvider(request, context: context)
        let identity: SimulatorState.SSOServiceIdentity
        if let code = Self.header(request, .xSSOLink) {
            // Both headers: the link code wins, as the device that typed one asks to join that profile (INFERRED).
            identity = .linkCode(code)
        } else if let commonId = Self.header(request, .xSSOID) {
            guard commonId.utf8.count <= 256 else { throw SSOServiceError.headerUnreadable("X-SSO-ID") }
            identity = .commonId(commonId)
        } else {
            // The page also says AP-Device-Identifier is "the default SSO identifier when X-SSO-ID is not provided",
            // but its attribute table and error catalogue require one of the two headers; the catalogue is followed.
            throw SSOServiceError.ssoHeaderMissing
        }
        let device = try Self.device(request, .post)
        let attributes = try Self.attributes(request)
        let join = try self.state.withLock { try $0.joinSSOService(identity, device: device, attributes: attributes) }
        guard case .joined(_, let enrolment, let token) = join else { throw SSOServiceError.linkCodeInvalid }
        context.logger.info(
            "sso service token issued",
            metadata: ["sp": .string(sp), "device": .string(device), "sso.enrolment": .string(enrolment.rawValue)]
        )
        return try self.issued(.created, status: "CREATED", names: self.settings.fieldNames.tokenFields, token.jws, token.notBefore, token.notAfter)
    }

    @Sendable func refreshToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sp = try await self.serviceProvider(request, context: context)
        // GET names no AP-Device-Identifier: a refresh is bound to the token alone.
        let commonId = try self.commonId(request, .get, refreshing: true)
        let token = try self.state.withLock { try $0.issueSSOServiceToken(commonId: commonId) }
        context.logger.info("sso service token refreshed", metadata: ["sp": .string(sp)])
        return try self.issued(.ok, status: "OK", names: self.settings.fieldNames.tokenFields, token.jws, token.notBefore, token.notAfter)
    }

    @Sendable func link(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sp = try await self.serviceProvider(request, context: context)
        let (commonId, device) = try self.enrolledCaller(request, .link)
        guard let code = self.state.withLock({ $0.createSSOServiceLinkCode(commonId: commonId, serviceProvider: sp, device: device) }) else {
            throw SSOServiceError.internalError
        }
        context.logger.info("sso service link code issued", metadata: ["sp": .string(sp), "device": .string(device)])
        return try self.issued(.created, status: "CREATED", names: self.settings.fieldNames.linkFields, code.code, code.notBefore, code.notAfter)
    }

    @Sendable func unlink(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sp = try await self.serviceProvider(request, context: context)
        let (commonId, _) = try self.enrolledCaller(request, .unlink)
        let body = try await JSONBody.decode(UnlinkRequest.self, from: request, context: context, orThrow: SSOServiceError.requestNull)
        guard let listed = body.devices, !listed.isEmpty else { throw SSOServiceError.devicesMissing }
        // A device is named by its AP-Device-Identifier payload; the whole header value is taken too.
        let named = listed.map { ($0, CredentialsHeader.fingerprint($0) ?? $0) }
        let removed = Set(self.state.withLock { $0.unlinkSSOServiceDevices(named.map(\.1), commonId: commonId) })
        var answered: Set<String> = []
        let unlinked = named.filter { removed.contains($0.1) && answered.insert($0.1).inserted }.map(\.0)
        context.logger.info("sso service devices unlinked", metadata: ["sp": .string(sp), "devices": .stringConvertible(unlinked.count)])
        return try JSONBody.response(.ok, UnlinkResponse(unlinkedDevices: unlinked))
    }

    @Sendable func list(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        _ = try await self.serviceProvider(request, context: context)
        let (commonId, device) = try self.enrolledCaller(request, .list)
        let devices = self.state.withLock { $0.ssoServiceDevices(commonId: commonId, excluding: device) }
        return try JSONBody.response(.ok, ListResponse(devices: devices.mapValues(ListedDevice.init)))
    }

    // MARK: Checks

    /// The path's service provider, once the access token is known to cover it; REST v2's checks, answered in the
    /// SSO Service's shape (`unauthorized` for the token, as the catalogue's 401).
    private func serviceProvider(_ request: Request, context: SimulatorRequestContext) async throws -> String {
        do {
            return try await self.routes.authorize(request, context: context).serviceProvider
        } catch let error as EnhancedError {
            throw error.status == .unauthorized ? SSOServiceError.unauthorizedAccess : SSOServiceError.invalidServiceProvider
        }
    }

    /// The common identifier of the request's `AD-Service-Token`, which must be the SSO Service's, unexpired (or,
    /// `refreshing`, expired within the refresh window).
    private func commonId(_ request: Request, _ endpoint: SSOServiceError.Endpoint, refreshing: Bool = false) throws -> String {
        guard let token = Self.header(request, .adServiceToken) else { throw SSOServiceError.serviceTokenMissing(endpoint) }
        let window = refreshing ? self.settings.refreshWindow : 0
        switch self.state.withLock({ $0.checkSSOServiceToken(token, refreshWindow: window) }) {
        case .valid(let commonId): return commonId
        case .expired: throw SSOServiceError.serviceTokenExpired
        case .badSignature: throw SSOServiceError.serviceTokenSignature
        case .noSubject: throw SSOServiceError.serviceTokenSubject
        }
    }

    /// The token's common identifier and the calling device, which must still be enrolled under it (its `lastSeen`
    /// becomes now).
    private func enrolledCaller(_ request: Request, _ endpoint: SSOServiceError.Endpoint) throws -> (commonId: String, device: String) {
        let commonId = try self.commonId(request, endpoint)
        let device = try Self.device(request, endpoint)
        guard self.state.withLock({ $0.ssoServiceDeviceIsEnrolled(device, commonId: commonId, touch: true) }) else {
            throw SSOServiceError.deviceNotLinked
        }
        return (commonId, device)
    }

    /// The `AP-Device-Identifier` payload (`fingerprint <base64>`).
    private static func device(_ request: Request, _ endpoint: SSOServiceError.Endpoint) throws -> String {
        guard let header = request.headers[.apDeviceIdentifier] else { throw SSOServiceError.deviceIdentifierMissing(endpoint) }
        guard let fingerprint = CredentialsHeader.fingerprint(header) else { throw SSOServiceError.headerUnreadable("AP-Device-Identifier") }
        return fingerprint
    }

    /// What the list shows of a device: `X-Device-Info` (optional: "when not provided, default extracted values will
    /// be used") and `User-Agent`.
    private static func attributes(_ request: Request) throws -> [String: String] {
        var attributes: [String: String] = [:]
        if let header = request.headers[.xDeviceInfo] {
            guard let info = DeviceInfo(headerValue: header) else { throw SSOServiceError.headerUnreadable("X-Device-Info") }
            attributes["deviceType"] = info["primaryHardwareType"] ?? info["type"]
            attributes["model"] = info["model"]
            attributes["os"] = info["osName"]
            attributes["osVersion"] = info["osVersion"]
        }
        attributes["userAgent"] = request.headers[.userAgent]
        return attributes
    }

    /// A header's trimmed value; `nil` when missing or empty.
    private static func header(_ request: Request, _ name: HTTPFields.Element.Name) -> String? {
        guard let value = request.headers[name]?.trimmed, !value.isEmpty else { return nil }
        return value
    }

    private func issued(
        _ httpStatus: HTTPResponse.Status,
        status: String,
        names: [String],
        _ value: String,
        _ notBefore: Int64,
        _ notAfter: Int64
    ) throws -> Response {
        try JSONBody.response(httpStatus, Issued(status: status, names: names, value: value, notBefore: notBefore, notAfter: notAfter))
    }
}
