/// A device enrolled in the SSO Service under a common identifier: one entry of the `list` answer.
struct SSOServiceDevice: Sendable, Equatable, Codable {
    /// How the device joined, the `type` of Adobe's list sample (INFERRED: `regular` for the device that named the
    /// common identifier itself, `sso` for one that joined through a link code).
    enum Enrolment: String, Sendable, Equatable, Codable {
        case regular
        case sso
    }

    var enrolment: Enrolment
    /// `deviceType`, `model`, `os`, `osVersion` (from `X-Device-Info`) and `userAgent`, as far as the device sent them.
    var attributes: [String: String]
    /// When the device last called the SSO Service (epoch milliseconds).
    var lastSeen: Int64
}

/// A link code waiting for a second device: one-time, valid `notBefore..<notAfter`.
struct SSOServiceLinkCode: Sendable, Equatable, Codable {
    let code: String
    /// The common identifier the code joins a device to.
    let commonId: String
    let serviceProvider: String
    /// The device that asked for it.
    let deviceIdentifier: String
    let notBefore: Int64
    let notAfter: Int64
}

/// A service token the SSO Service issued, with its window in epoch milliseconds.
struct SSOServiceToken: Sendable, Equatable {
    let jws: String
    let notBefore: Int64
    let notAfter: Int64
}

/// What checking an `AD-Service-Token` against the SSO Service's key found.
enum SSOServiceTokenCheck: Sendable, Equatable {
    /// Signed by the SSO Service, in its window (or, for a refresh, expired within the refresh window).
    case valid(commonId: String)
    /// Signed by the SSO Service but expired (beyond the refresh window, for a refresh).
    case expired
    /// Not a token of the SSO Service, or its signature does not verify.
    case badSignature
    /// Signed, but with no `sub`.
    case noSubject
}

/// The SSO Service state as `GET /_sim/sso/service` reports it.
struct SSOServiceSnapshot: Sendable, Encodable {
    struct Device: Sendable, Encodable {
        let deviceIdentifier: String
        let type: SSOServiceDevice.Enrolment
        let attributes: [String: String]
        let lastSeen: Int64
    }

    /// Enrolled devices by common identifier, each list sorted by device.
    let commonIds: [String: [Device]]
    /// Link codes not used and not expired, oldest first: what a lab types on the second device.
    let linkCodes: [SSOServiceLinkCode]
}
