import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Adobe's SSO Service (SSO-SVC, revision 1.0.0,
/// https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/features-premium/sso-service/sso-service):
/// service tokens for a common identifier, the devices enrolled under it, one-time link codes.
///
/// A service token is the page's JWT (`iss` `ssoservicetoken`, `sub` the common identifier, `nbf`, `exp`, `iat`),
/// HS256 as the samples' header says, with a key the simulator generates once and keeps in its state. REST v2 takes it
/// in `AD-Service-Token` as single sign-on (``verifySSOToken(_:method:)``) for the devices enrolled under its `sub`.
extension SimulatorState {
    /// `iss` of the SSO Service's tokens (Adobe's step 2 payload).
    package static let ssoServiceIssuer = "ssoservicetoken"
    /// Link codes are "a sequence of 6 digits" (step 4).
    static let linkCodeDigits = 6
    static let linkCodeSpace = 1_000_000

    var ssoServiceSettings: SSOServiceSettings { self.configuration.ssoService }

    /// Issues a service token for `commonId`, valid from now for the configured lifetime.
    func issueSSOServiceToken(commonId: String) throws -> SSOServiceToken {
        let issuedAt = self.now / 1000
        let expiry = issuedAt + self.ssoServiceSettings.tokenTTL
        let claims: [String: MetadataValue] = [
            "iss": .string(Self.ssoServiceIssuer), "sub": .string(commonId), "nbf": .integer(issuedAt), "exp": .integer(expiry),
            "iat": .integer(issuedAt),
        ]
        let jws = try JWS.sign(claims: claims, key: .hmac(try self.symmetricKey(.ssoServiceHMAC)))
        return SSOServiceToken(jws: jws, notBefore: issuedAt * 1000, notAfter: expiry * 1000)
    }

    /// Checks a service token against the SSO Service's key. `refreshWindow` seconds past `exp` still count as valid
    /// (a refresh); `nbf` must have passed.
    func checkSSOServiceToken(_ token: String, refreshWindow: Int64 = 0) -> SSOServiceTokenCheck {
        guard JWS.unverifiedIssuer(token) == Self.ssoServiceIssuer, let secret = self.ssoSecrets[.ssoServiceHMAC],
            let data = Data(base64Encoded: secret), let claims = JWS.verify(token, key: .hmac(SymmetricKey(data: data)))
        else { return .badSignature }
        guard let subject = claims.string("sub"), !subject.isEmpty else { return .noSubject }
        let nowSeconds = self.now / 1000
        guard let expiry = claims.seconds("exp"), nowSeconds < expiry + max(refreshWindow, 0),
            (claims.seconds("nbf") ?? 0) <= nowSeconds
        else { return .expired }
        return .valid(commonId: subject)
    }

    /// How a device asks for a service token: by the common identifier (`X-SSO-ID`) or a link code (`X-SSO-LINK`).
    enum SSOServiceIdentity: Sendable, Equatable {
        case commonId(String)
        case linkCode(String)
    }

    /// What asking for a service token came to.
    enum SSOServiceJoin: Sendable, Equatable {
        /// The device is enrolled under `commonId` and holds `token`.
        case joined(commonId: String, enrolment: SSOServiceDevice.Enrolment, token: SSOServiceToken)
        /// The link code is unknown, used or expired.
        case linkCodeRefused
    }

    /// Enrols `device` under the common identifier `identity` names (a link code is used up) and issues its token.
    func joinSSOService(_ identity: SSOServiceIdentity, device: String, attributes: [String: String]) throws -> SSOServiceJoin {
        let commonId: String
        let enrolment: SSOServiceDevice.Enrolment
        switch identity {
        case .commonId(let named):
            commonId = named
            enrolment = .regular
        case .linkCode(let code):
            guard let joined = self.redeemSSOServiceLinkCode(code) else { return .linkCodeRefused }
            commonId = joined
            enrolment = .sso
        }
        let token = try self.issueSSOServiceToken(commonId: commonId)
        self.enrolSSOServiceDevice(device, commonId: commonId, enrolment: enrolment, attributes: attributes)
        return .joined(commonId: commonId, enrolment: enrolment, token: token)
    }

    /// Enrols `device` under `commonId` (again: its record is replaced, keeping nothing but the identifier).
    func enrolSSOServiceDevice(_ device: String, commonId: String, enrolment: SSOServiceDevice.Enrolment, attributes: [String: String]) {
        self.ssoServiceDevices[commonId, default: [:]][device] = SSOServiceDevice(
            enrolment: enrolment,
            attributes: attributes,
            lastSeen: self.now
        )
    }

    /// Whether `device` is enrolled under `commonId`; when it is and `touch`, its `lastSeen` becomes now.
    func ssoServiceDeviceIsEnrolled(_ device: String, commonId: String, touch: Bool = false) -> Bool {
        guard var record = self.ssoServiceDevices[commonId]?[device] else { return false }
        if touch {
            record.lastSeen = self.now
            self.ssoServiceDevices[commonId]?[device] = record
        }
        return true
    }

    /// A new link code for `commonId`, asked by `device`; `nil` only if no free code was found (a million codes in
    /// use).
    func createSSOServiceLinkCode(commonId: String, serviceProvider: String, device: String) -> SSOServiceLinkCode? {
        let now = self.now
        self.sweepIfDue(now: now)
        for _ in 0..<64 {
            let digits = String(Int.random(in: 0..<Self.linkCodeSpace, using: &self.generator))
            let code = String(repeating: "0", count: Self.linkCodeDigits - digits.count) + digits
            if let existing = self.ssoServiceLinkCodes[code], now < existing.notAfter { continue }
            let link = SSOServiceLinkCode(
                code: code,
                commonId: commonId,
                serviceProvider: serviceProvider,
                deviceIdentifier: device,
                notBefore: now,
                notAfter: now + self.ssoServiceSettings.linkCodeTTL * 1000
            )
            self.ssoServiceLinkCodes[code] = link
            return link
        }
        return nil
    }

    /// Uses up link code `code`: the common identifier it joins, or `nil` when it is unknown, used or expired.
    func redeemSSOServiceLinkCode(_ code: String) -> String? {
        guard let link = self.ssoServiceLinkCodes.removeValue(forKey: code), link.notBefore <= self.now, self.now < link.notAfter else {
            return nil
        }
        return link.commonId
    }

    /// Removes `devices` from `commonId`; returns those that were enrolled, in the order given, once each.
    func unlinkSSOServiceDevices(_ devices: [String], commonId: String) -> [String] {
        guard var enrolled = self.ssoServiceDevices[commonId] else { return [] }
        var removed: [String] = []
        for device in devices where enrolled.removeValue(forKey: device) != nil {
            removed.append(device)
        }
        self.ssoServiceDevices[commonId] = enrolled.isEmpty ? nil : enrolled
        return removed
    }

    /// The devices enrolled under `commonId` but `excluding` (the caller: the page's list shows "all other devices").
    func ssoServiceDevices(commonId: String, excluding device: String) -> [String: SSOServiceDevice] {
        (self.ssoServiceDevices[commonId] ?? [:]).filter { $0.key != device }
    }

    /// Drops expired link codes.
    func sweepSSOServiceLinkCodes(now: Int64) {
        for (code, link) in self.ssoServiceLinkCodes where now >= link.notAfter {
            self.ssoServiceLinkCodes[code] = nil
        }
    }

    /// Everything the SSO Service holds, for `GET /_sim/sso/service`.
    func ssoServiceSnapshot() -> SSOServiceSnapshot {
        let now = self.now
        var commonIds: [String: [SSOServiceSnapshot.Device]] = [:]
        for (commonId, devices) in self.ssoServiceDevices {
            commonIds[commonId] = devices.sorted { $0.key < $1.key }.map { device, record in
                SSOServiceSnapshot.Device(
                    deviceIdentifier: device,
                    type: record.enrolment,
                    attributes: record.attributes,
                    lastSeen: record.lastSeen
                )
            }
        }
        let pending = self.ssoServiceLinkCodes.values.filter { $0.notBefore <= now && now < $0.notAfter }.sorted {
            ($0.notBefore, $0.code) < ($1.notBefore, $1.code)
        }
        return SSOServiceSnapshot(commonIds: commonIds, linkCodes: pending)
    }
}
