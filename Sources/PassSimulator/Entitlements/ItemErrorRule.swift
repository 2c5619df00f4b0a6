/// The item-level errors an MVPD's authorization can end in besides a plain denial (Adobe's enhanced error codes,
/// REST API v2 list), returned as a decision's `error`.
package enum ItemErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    case authorizationDeniedByParentalControls = "authorization_denied_by_parental_controls"
    case networkReceivedError = "network_received_error"
    case networkConnectionTimeout = "network_connection_timeout"
    case maximumExecutionTimeExceeded = "maximum_execution_time_exceeded"
    case identityNotRecognizedByMVPD = "identity_not_recognized_by_mvpd"
    case authorizationDeniedBySessionInvalidated = "authorization_denied_by_session_invalidated"

    /// The error body, with the action and message of Adobe's list.
    func error(details: String?) -> EnhancedError {
        let action: EnhancedError.Action
        let message: String
        switch self {
        case .authorizationDeniedByParentalControls:
            action = .none
            message = "The MVPD has returned a \"Deny\" decision due parental controls settings for the specified resource."
        case .networkReceivedError:
            action = .retry
            message =
                "There was a read error while retrieving the response from the associated partner service. Retrying the request might solve the issue."
        case .networkConnectionTimeout:
            action = .retry
            message = "There was a connection timeout with the associated partner service. Retrying the request might solve the issue."
        case .maximumExecutionTimeExceeded:
            action = .retry
            message = "The request did not complete in the maximum allowed time. Retrying the request might solve the issue."
        case .identityNotRecognizedByMVPD:
            action = .authentication
            message = "The authorization request failed due to the fact that user identity was not recognized by the MVPD."
        case .authorizationDeniedBySessionInvalidated:
            action = .authentication
            message =
                "The authentication session was invalidated by the identity provider. The user must re-authenticate with a supported MVPD in order to continue."
        }
        return EnhancedError(action, .forbidden, code: self.rawValue, message: message, details: details)
    }
}

/// An item error and an optional `details` text; JSON `"network_received_error"` or `{"code": …, "details": …}`.
package struct ItemErrorRule: Sendable, Hashable, Codable {
    package var code: ItemErrorCode
    package var details: String?

    /// `code`, with `details` when given.
    package init(_ code: ItemErrorCode, details: String? = nil) {
        self.code = code
        self.details = details
    }

    private enum CodingKeys: String, CodingKey {
        case code, details
    }

    package init(from decoder: any Decoder) throws {
        if let code = try? decoder.singleValueContainer().decode(ItemErrorCode.self) {
            self.init(code)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(try container.decode(ItemErrorCode.self, forKey: .code), details: try container.decodeIfPresent(String.self, forKey: .details))
    }
}

/// Item errors by resource (the id, or the MRSS channel title) and by MVPD (every resource); a resource rule wins.
package struct ItemErrorLists: Sendable, Hashable, Codable {
    package var resources: [String: ItemErrorRule]
    package var mvpds: [String: ItemErrorRule]

    /// Lists with the given entries.
    package init(resources: [String: ItemErrorRule] = [:], mvpds: [String: ItemErrorRule] = [:]) {
        self.resources = resources
        self.mvpds = mvpds
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.resources = try container.decodeIfPresent([String: ItemErrorRule].self, forKey: .resources) ?? [:]
        self.mvpds = try container.decodeIfPresent([String: ItemErrorRule].self, forKey: .mvpds) ?? [:]
    }

    /// The rule that applies to `resource` for a user of `mvpd`, if any.
    func rule(resource: String, mvpd: String) -> ItemErrorRule? {
        self.resources[resource] ?? self.resources[DenyLists.resourceId(resource)] ?? self.mvpds[mvpd]
    }
}
