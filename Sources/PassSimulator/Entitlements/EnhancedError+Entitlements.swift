/// The enhanced errors of TempPass, degradation and home-based authentication (Adobe's REST API v2 list and the
/// decisions and profiles samples).
extension EnhancedError {
    static func tempPassDurationExceeded(action: Action) -> EnhancedError {
        EnhancedError(
            action,
            .forbidden,
            code: "temporary_access_duration_limit_exceeded",
            message: "The temporary access duration limit has been exceeded."
        )
    }

    static var tempPassResourcesExceeded: EnhancedError {
        EnhancedError(
            .authentication,
            .forbidden,
            code: "temporary_access_resources_limit_exceeded",
            message: "The temporary access resources limit has been exceeded."
        )
    }

    static var invalidTempPassIdentity: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_header_identity_for_temporary_access",
            message: "The identity for temporary access header value is missing or invalid."
        )
    }

    static var deniedByDegradationRule: EnhancedError {
        EnhancedError(
            .none,
            .forbidden,
            code: "authorization_denied_by_degradation_rule",
            message: "The integration has an AuthZNone rule applied for the requested resources"
        )
    }

    static var deniedByHomeBasedPolicies: EnhancedError {
        EnhancedError(
            .authentication,
            .forbidden,
            code: "authorization_denied_by_hba_policies",
            message:
                "The MVPD has returned a \"Deny\" decision due home-based authentication policies. The current authentication was obtain through a Home-based authentication flow and but the device is no longer in-home when requesting authorization for the specified resource. The user must re-authenticate with a supported MVPD in order to continue."
        )
    }
}
