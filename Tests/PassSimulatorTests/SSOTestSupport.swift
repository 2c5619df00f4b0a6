import Crypto
import Foundation
import Hummingbird
import Testing

/// Requests and headers of the single sign-on tests.
extension Client {
    static let iOSDeviceInfo = Data(
        #"{"primaryHardwareType":"MobilePhone","model":"iPhone","manufacturer":"Apple","osName":"iOS","osVendor":"Apple","osVersion":"17.2"}"#.utf8
    ).base64EncodedString()

    static let androidDeviceInfo = Data(
        #"{"primaryHardwareType":"SetTopBox","model":"Shield","manufacturer":"NVIDIA","osName":"Android","osVendor":"Google","osVersion":"12"}"#.utf8
    ).base64EncodedString()

    /// A far-future `expirationDate` for PFS headers (the tests' clock starts in 2025).
    static let pfsExpiry: Int64 = 4_000_000_000_000

    /// An `AP-Partner-Framework-Status` value.
    static func pfs(access: String? = "granted", provider: String? = "Comcast", expires: Int64? = Client.pfsExpiry) -> String {
        var permission: [String: Any] = [:]
        if let access { permission["accessStatus"] = access }
        var providerInfo: [String: Any] = [:]
        if let provider { providerInfo["id"] = provider }
        if let expires { providerInfo["expirationDate"] = String(expires) }
        let object: [String: Any] = ["frameworkPermissionInfo": permission, "frameworkProviderInfo": providerInfo]
        return try! JSONSerialization.data(withJSONObject: object).base64EncodedString()
    }

    static func withPFS(_ headers: HTTPFields, _ pfs: String?) -> HTTPFields {
        var headers = headers
        if let pfs { headers[Self.name("AP-Partner-Framework-Status")] = pfs }
        return headers
    }

    static let partnerFields = "mvpd=Comcast_SSO&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"

    /// `POST /api/v2/REF30/sessions/sso/{partner}`.
    func partnerSession(
        _ credentials: Credentials,
        device: String = "device-1",
        deviceInfo: String = Client.deviceInfo,
        pfs: String? = Client.pfs(),
        partner: String = "Apple",
        fields: String = Client.partnerFields
    ) async throws -> Reply {
        let headers = Self.withPFS(Self.authorized(credentials, device: device, deviceInfo: deviceInfo), pfs)
        return try await self.form(.post, "/api/v2/REF30/sessions/sso/\(partner)", headers: headers, fields: fields)
    }

    /// The emulated IdP's `SAMLResponse` for an authentication request.
    func samlResponse(for authenticationRequest: String, provider: String = "Comcast", userID: String = "jane") async throws -> Reply {
        try await self.jsonPost(
            "/_sim/partner/Apple/authn-response",
            #"{"authenticationRequest":"\#(authenticationRequest)","provider":"\#(provider)","user":{"userID":"\#(userID)","householdID":"hh-\#(userID)","zip":"10001"}}"#
        )
    }

    /// `POST /api/v2/REF30/profiles/sso/Apple` with a (form-encoded) SAMLResponse.
    func partnerProfile(
        _ credentials: Credentials,
        saml: String,
        device: String = "device-1",
        pfs: String? = Client.pfs(),
        extraFields: String = ""
    ) async throws -> Reply {
        let headers = Self.withPFS(Self.authorized(credentials, device: device), pfs)
        return try await self.form(
            .post,
            "/api/v2/REF30/profiles/sso/Apple",
            headers: headers,
            fields: "SAMLResponse=\(FormEncoding.encode(saml))\(extraFields)"
        )
    }

    /// Runs the partner flow up to a SAMLResponse: `sessions/sso/Apple` → IdP.
    func partnerSAML(_ credentials: Credentials, device: String = "device-1", userID: String = "jane") async throws -> String {
        let session = try await self.partnerSession(credentials, device: device)
        #expect(session.status == .ok, "\(session.text)")
        let body = try session.json()
        #expect(body["actionName"] as? String == "partner_profile", "\(session.text)")
        let request = try #require((body["authenticationRequest"] as? [String: Any])?["request"] as? String)
        let answer = try await self.samlResponse(for: request, userID: userID)
        #expect(answer.status == .ok, "\(answer.text)")
        return try #require(try answer.json()["SAMLResponse"] as? String)
    }

    func platformToken(sub: String, did: String = "roku-device", ttl: Int? = nil) async throws -> String {
        let ttlField = ttl.map { #","ttl":\#($0)"# } ?? ""
        let reply = try await self.jsonPost("/_sim/identity/platform-token", #"{"sub":"\#(sub)","did":"\#(did)"\#(ttlField)}"#)
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(try reply.json()["token"] as? String)
    }

    func serviceToken(sub: String, iss: String? = nil, ttl: Int? = nil) async throws -> String {
        var fields = [#""sub":"\#(sub)""#]
        if let iss { fields.append(#""iss":"\#(iss)""#) }
        if let ttl { fields.append(#""ttl":\#(ttl)"#) }
        let reply = try await self.jsonPost("/_sim/identity/service-token", "{\(fields.joined(separator: ","))}")
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(try reply.json()["token"] as? String)
    }

    static func platformHeader(_ token: String) -> HTTPFields { [Self.name("Adobe-Subject-Token"): token] }
    static func serviceHeader(_ token: String) -> HTTPFields { [Self.name("AD-Service-Token"): token] }

    /// `GET /api/v2/REF30/profiles` → the profiles object.
    func profiles(_ credentials: Credentials, device: String = "device-1", headers extra: HTTPFields = [:]) async throws -> [String: [String: Any]] {
        let reply = try await self.send(.get, "/api/v2/REF30/profiles", headers: Self.authorized(credentials, device: device).merging(extra))
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(try reply.json()["profiles"] as? [String: [String: Any]], "\(reply.text)")
    }

    /// Logs in on `device` with `mvpd` through a code (the basic flow), sending `headers` on `POST sessions`.
    func basicLogin(
        _ credentials: Credentials,
        device: String = "device-1",
        mvpd: String = "Cablevision",
        userId: String = "alice",
        headers extra: HTTPFields = [:]
    ) async throws {
        let reply = try await self.form(
            .post,
            "/api/v2/REF30/sessions",
            headers: Self.authorized(credentials, device: device).merging(extra),
            fields: "mvpd=\(mvpd)&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"
        )
        #expect(reply.status == .ok, "\(reply.text)")
        let code = try #require(try reply.json()["code"] as? String, "\(reply.text)")
        #expect(try await self.approve(#"{"code":"\#(code)","userId":"\#(userId)"}"#).status == .ok)
    }

    /// `POST decisions/authorize/{mvpd}` for resource `res`.
    func authorizeDecision(_ credentials: Credentials, mvpd: String, device: String = "device-1", headers extra: HTTPFields = [:]) async throws -> Reply {
        var headers = Self.authorized(credentials, device: device).merging(extra)
        headers[.contentType] = "application/json"
        return try await self.send(.post, "/api/v2/REF30/decisions/authorize/\(mvpd)", headers: headers, body: #"{"resources":["res"]}"#)
    }
}

enum FormEncoding {
    /// Percent-encodes everything but unreserved characters (so `+`, `/`, `=` survive a form body).
    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// A compact HS256 JWS, as an external platform identity service would sign it.
func hs256Token(_ claims: [String: Any], secret: String, alg: String = "HS256") -> String {
    func part(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    let header = part(try! JSONSerialization.data(withJSONObject: ["alg": alg, "typ": "JWT"]))
    let payload = part(try! JSONSerialization.data(withJSONObject: claims))
    let signature = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(payload)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
    return "\(header).\(payload).\(part(Data(signature)))"
}
