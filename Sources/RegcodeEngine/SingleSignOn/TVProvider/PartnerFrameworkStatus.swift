import Foundation
import RegcodeSupport

/// The `AP-Partner-Framework-Status` header of REST v2 partner (Apple) single sign-on: Base64 of a JSON
/// object describing the app's VideoSubscriberAccount permission and provider (DOC `[H-PFS]`; sso.md §2.4).
///
/// regcoded builds it from the device's state (sso.md §3.3); pass-sim and tests parse it back.
package struct PartnerFrameworkStatus: Sendable, Hashable {
    package static let headerName = "AP-Partner-Framework-Status"

    /// The optional `error` of either part.
    package struct ErrorInfo: Sendable, Hashable {
        package var code: String
        package var message: String

        package init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// `frameworkPermissionInfo.accessStatus` (required by the doc; `nil` = absent or unknown).
    package var accessStatus: TVProviderAccess?
    package var permissionError: ErrorInfo?
    /// `frameworkProviderInfo.id`, the signed-in `platformMappingId`.
    package var providerID: String?
    /// `frameworkProviderInfo.expirationDate`, epoch ms (a string on the wire).
    package var expirationDateMs: Int64?
    package var providerError: ErrorInfo?

    package init(
        accessStatus: TVProviderAccess?,
        permissionError: ErrorInfo? = nil,
        providerID: String? = nil,
        expirationDateMs: Int64? = nil,
        providerError: ErrorInfo? = nil
    ) {
        self.accessStatus = accessStatus
        self.permissionError = permissionError
        self.providerID = providerID
        self.expirationDateMs = expirationDateMs
        self.providerError = providerError
    }

    /// What an app reads from VSA (sso.md §3.3 `partner`):
    /// * `accessStatus` = the app's permission;
    /// * provider info only with permission granted, someone signed in and no fault (VSA reveals the
    ///   account only to permitted apps — APPLE; the doc's fallback sample sends `{}`), expired or not
    ///   (the server judges expiry);
    /// * a fault becomes an `error`: `accessNotGranted` on the permission part, any other on the provider
    ///   part (placement INFERRED), code = the `VSErrorCode` (or the fault's name), message = its description.
    package init(state: TVProviderState) {
        self.init(accessStatus: state.access)
        if let fault = state.fault {
            let error = ErrorInfo(code: fault.kind.code.map(String.init) ?? fault.kind.rawValue, message: fault.kind.description)
            if fault.kind == .accessNotGranted { permissionError = error } else { providerError = error }
        } else if state.access.isGranted, let providerID = state.account.providerID {
            self.providerID = providerID
            expirationDateMs = state.account.expiresEpochMs
        }
    }

    /// The decoded JSON object.
    package var json: JSONValue {
        func error(_ info: ErrorInfo) -> JSONValue { ["code": .string(info.code), "message": .string(info.message)] }
        var permission: [String: JSONValue] = [:]
        if let accessStatus { permission["accessStatus"] = .string(accessStatus.rawValue) }
        if let permissionError { permission["error"] = error(permissionError) }
        var provider: [String: JSONValue] = [:]
        if let providerID { provider["id"] = .string(providerID) }
        if let expirationDateMs { provider["expirationDate"] = .string(String(expirationDateMs)) }
        if let providerError { provider["error"] = error(providerError) }
        return ["frameworkPermissionInfo": .object(permission), "frameworkProviderInfo": .object(provider)]
    }

    /// The header value: Base64 of the compact JSON with sorted keys (deterministic, so requests compare).
    package var headerValue: String {
        Data(JSONWriter.text(json).utf8).base64EncodedString()
    }

    /// Parses a header value; `nil` when it is not Base64 of a JSON object. Fields absent or of the wrong
    /// type read as `nil`; `expirationDate` is accepted as a string or a number of epoch ms; an unknown
    /// `accessStatus` reads as `nil`.
    package init?(headerValue: String) {
        let trimmed = headerValue.trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: trimmed),
            let json = JSONValue(parsing: data), json.objectValue != nil
        else { return nil }
        func error(_ value: JSONValue?) -> ErrorInfo? {
            guard let value, value.objectValue != nil else { return nil }
            return ErrorInfo(code: Self.text(value["code"]) ?? "", message: value["message"]?.stringValue ?? "")
        }
        let permission = json["frameworkPermissionInfo"]
        let provider = json["frameworkProviderInfo"]
        self.init(
            accessStatus: permission?["accessStatus"]?.stringValue.flatMap(TVProviderAccess.init(rawValue:)),
            permissionError: error(permission?["error"]),
            providerID: provider?["id"]?.stringValue,
            expirationDateMs: Self.text(provider?["expirationDate"]).flatMap { Int64($0) },
            providerError: error(provider?["error"])
        )
    }

    /// A string, or a number written as text.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        default: nil
        }
    }
}
