#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The decoded `AP-Partner-Framework-Status` header: Base64 of JSON (sso.md §2.4).
struct PartnerFrameworkStatus: Sendable, Decodable {
    struct PermissionInfo: Sendable, Decodable {
        var accessStatus: String?
    }

    struct ProviderInfo: Sendable, Decodable {
        var id: String?
        /// Epoch milliseconds; Adobe's samples send a string, a number is taken too.
        var expirationDate: Int64?

        private enum CodingKeys: String, CodingKey {
            case id, expirationDate
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.id = try container.decodeIfPresent(String.self, forKey: .id)
            if let text = try? container.decodeIfPresent(String.self, forKey: .expirationDate) {
                self.expirationDate = Int64(text)
            } else {
                self.expirationDate = try? container.decodeIfPresent(Int64.self, forKey: .expirationDate)
            }
        }
    }

    var frameworkPermissionInfo: PermissionInfo?
    var frameworkProviderInfo: ProviderInfo?

    /// The header's value, or `nil` when it is not Base64 of a JSON object.
    init?(headerValue: String) {
        guard let data = Base64.decodeLenient(headerValue), let status = try? JSONDecoder().decode(Self.self, from: data) else {
            return nil
        }
        self = status
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
