import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The decoded `AP-Partner-Framework-Status` header: Base64 of JSON (sso.md §2.4).
struct PartnerFrameworkStatus: Sendable {
    struct PermissionInfo: Sendable {
        var accessStatus: String?
    }

    struct ProviderInfo: Sendable {
        var id: String?
        /// Epoch milliseconds; Adobe's samples send a string, a number is taken too.
        var expirationDate: Int64?
    }

    var frameworkPermissionInfo: PermissionInfo?
    var frameworkProviderInfo: ProviderInfo?

    /// The header's value, or `nil` when it is not Base64 of a JSON object, or a member has the wrong type (a
    /// non-object info, a non-string `accessStatus` or `id`; an unreadable `expirationDate` is only absent).
    init?(headerValue: String) {
        guard let data = Base64.decodeLenient(headerValue), case .object(let object)? = JSONValue(parsing: data),
            let permission = Self.optional(object["frameworkPermissionInfo"], \.objectValue),
            let provider = Self.optional(object["frameworkProviderInfo"], \.objectValue)
        else { return nil }
        if let permission {
            guard let accessStatus = Self.optional(permission["accessStatus"], \.stringValue) else { return nil }
            frameworkPermissionInfo = PermissionInfo(accessStatus: accessStatus)
        }
        if let provider {
            guard let id = Self.optional(provider["id"], \.stringValue) else { return nil }
            let expiration = provider["expirationDate"]
            frameworkProviderInfo = ProviderInfo(id: id, expirationDate: expiration?.stringValue.flatMap { Int64($0) } ?? expiration?.intValue)
        }
    }

    /// `.some(nil)` for an absent or null member, `.some(value)` when it has the type, `nil` when it has another.
    private static func optional<T>(_ member: JSONValue?, _ typed: (JSONValue) -> T?) -> T?? {
        guard let member, member != .null else { return .some(nil) }
        return typed(member).map { .some($0) }
    }

    /// Why the status does not allow partner SSO for `mvpd`, in Adobe's error vocabulary; `nil` when it does.
    ///
    /// Mapping (INFERRED from the codes' descriptions, sso.md §3.3): no `accessStatus` → not present; `notDetermined`
    /// → not determined; anything but `granted` → not granted (skipped when `enforcePermissions` is off); a provider
    /// id no MVPD maps from → not determined; one mapping to another MVPD → mismatch; an `expirationDate` that is
    /// missing or not after `now` → expired.
    static func problem(
        _ status: PartnerFrameworkStatus?,
        mvpd: String?,
        enforcePermissions: Bool,
        mvpdForProvider: (String) -> String?,
        now: Int64
    ) -> PFSProblem? {
        guard let status else { return .permissionAccessNotPresent }
        if enforcePermissions {
            switch status.frameworkPermissionInfo?.accessStatus {
            case nil: return .permissionAccessNotPresent
            case "granted"?: break
            case "notDetermined"?: return .permissionAccessNotDetermined
            default: return .permissionAccessNotGranted
            }
        }
        guard let provider = status.frameworkProviderInfo?.id, let mapped = mvpdForProvider(provider) else {
            return .providerIdNotDetermined
        }
        if let mvpd, mapped != mvpd { return .providerIdMismatch }
        guard let expiry = status.frameworkProviderInfo?.expirationDate, expiry > now else { return .providerInfoExpired }
        return nil
    }
}

/// What is wrong with an `AP-Partner-Framework-Status` header: Adobe's six `invalid_header_pfs_*` codes.
enum PFSProblem: String, Sendable, CaseIterable {
    case permissionAccessNotPresent = "invalid_header_pfs_permission_access_not_present"
    case permissionAccessNotDetermined = "invalid_header_pfs_permission_access_not_determined"
    case permissionAccessNotGranted = "invalid_header_pfs_permission_access_not_granted"
    case providerIdNotDetermined = "invalid_header_pfs_provider_id_not_determined"
    case providerIdMismatch = "invalid_header_pfs_provider_id_mismatch"
    case providerInfoExpired = "invalid_header_pfs_provider_info_expired"

    /// The enhanced error (400, action `none`) Adobe answers with.
    var error: EnhancedError {
        let message =
            switch self {
            case .permissionAccessNotPresent: "The partner framework status header permission access status value is not present."
            case .permissionAccessNotDetermined: "The partner framework status header permission access status value is undetermined."
            case .permissionAccessNotGranted: "The partner framework status header permission access status value is not granted."
            case .providerIdNotDetermined: "The partner framework status header provider id value is not associated with a known mvpd."
            case .providerIdMismatch: "The partner framework status header provider id value does not match the mvpd sent as parameter."
            case .providerInfoExpired: "The partner framework status header provider information has expired."
            }
        return EnhancedError(.none, .badRequest, code: self.rawValue, message: message)
    }
}
