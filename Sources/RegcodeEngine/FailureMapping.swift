import AccessEnablerAPI
import RegcodeRecords

/// Which request of an operation failed: client registration, the token, or the call itself.
enum PipelineStep { case registration, token, call }

/// How backend answers and failures read in AccessEnabler terms: a poll's ``PollOutcome``, the
/// status id a failed stage is reported with, which failures are worth a retry, and the text
/// of a failure in `status` messages.
enum FailureMapping {
    /// What one poll's answer means for the loop.
    /// On v1, `tokens/authn` 410 while a fresh code is live means pending: the backend still holds an
    /// expired token of an earlier login, not an answer about this code.
    static func pollOutcome(of result: Result<BackendResponse, BackendFailure>, profile: APIProfile) -> PollOutcome {
        switch result {
        case .success(.profile(nil)): return .pending
        case .success(.profile(.some)): return .authenticated
        case .success: return .malformed
        case .failure(let failure):
            switch failure {
            case .transport: return .transportError
            case .malformed: return .malformed
            case .http(let status, _, let error):
                switch status {
                case 429: return .throttled
                case 401: return .unauthorized
                case 410: return profile == .v1 ? .pending : .codeInvalid
                case 400 where ["invalid_authentication_session", "invalid_parameter_code"].contains(error?.code ?? ""):
                    return .codeInvalid
                case 500...599: return .serverError
                default: return .clientError
                }
            }
        }
    }

    /// What the device does about a failed request: Adobe's enhanced error `action` decides when the answer
    /// carries one (reference §9.2, §9.5); a failure without one keeps the transient rule (network, malformed,
    /// 429 and 5xx are retried, a 401 refreshes the token, any other 4xx is final). A 429 is throttling
    /// whatever its body says.
    static func remedy(for failure: BackendFailure) -> FailureRemedy {
        guard case .http(let status, _, let error) = failure, status != 429 else { return .retry(.transient) }
        switch error?.action {
        case .retry?: return .retry(.requested(honoursRetryAfter: false))
        case .retryAfter?: return .retry(.requested(honoursRetryAfter: true))
        case .refresh?: return .refreshToken
        // The access token is part of the registration: a 401 refreshes it first (re-registering only if a
        // fresh one is refused too), so an expired token never costs a new client.
        case .applicationRegistration?: return status == 401 ? .refreshToken : .registerAgain
        case .configuration?: return .refetchConfiguration
        case .none?, .authentication?, .authorization?, .degradation?: return .giveUp
        case .unknown?, nil:
            if status == 401 { return .refreshToken }
            return status >= 500 ? .retry(.transient) : .giveUp
        }
    }

    /// An enhanced error that asks the user to authenticate again (action `authentication`) and means the
    /// device's authentication is gone. TempPass limits and home-based-authentication denials also carry that
    /// action but have status ids of their own (N111, …), so they are left to the decision mappings.
    static func losesAuthentication(_ error: EnhancedError) -> Bool {
        error.action == .authentication && !authenticationActionsWithOwnStatus.contains(error.code)
    }

    private static let authenticationActionsWithOwnStatus: Set<String> = [
        "temporary_access_duration_limit_exceeded", "temporary_access_resources_limit_exceeded", "authorization_denied_by_hba_policies",
    ]

    /// Failures a retry may fix: the network, a malformed answer, throttling, server errors.
    static func isTransient(_ failure: BackendFailure) -> Bool {
        switch failure {
        case .transport, .malformed: true
        case .http(let status, _, _): status == 429 || status >= 500
        }
    }

    /// How a failed request other than a poll reads in the request log.
    static func requestOutcome(of failure: BackendFailure) -> RequestOutcome {
        switch failure {
        case .transport: .transportError
        case .malformed: .malformed
        case .http(let status, _, _):
            switch status {
            case 429: .throttled
            case 401: .unauthorized
            case 500...599: .serverError
            default: .clientError
            }
        }
    }

    /// A DCR answer saying the client credentials are no longer known (`invalid_client`, reference §6.3–6.4):
    /// the client must register again.
    static func isForgottenClient(_ failure: BackendFailure) -> Bool {
        guard case .http(let status, _, let error) = failure, [400, 401, 403].contains(status) else { return false }
        return error?.code == "invalid_client"
    }

    /// The status id of a failed configuration request (`setRequestor`).
    static func configurationStatus(for failure: BackendFailure) -> StatusID {
        switch failure {
        case .transport: .configurationUnreachable
        case .malformed: .configurationMalformed
        case .http(let status, _, _):
            switch status {
            case 401: .tokenFailed
            case 429: .configurationThrottled
            case 500...599: .configurationServerError(httpStatus: status)
            default: .configurationRefused
            }
        }
    }

    /// The status id of an authorization that failed for other reasons than a decision.
    static func authorizationStatus(for failure: BackendFailure, stage: PipelineStep) -> StatusID {
        if let refusal = refusal(failure, at: stage) { return refusal }
        switch failure {
        case .transport, .malformed:
            return .authorizationUnavailable
        case .http(let status, _, let error):
            switch status {
            case 429: return .authorizationDenied  // throttled getAuthorization (reference §8.2)
            case 401: return .tokenFailed
            default:
                switch error?.action {
                case .retry?, .retryAfter?: return .authorizationUnavailable
                case .authorization?: return .authorizationDenied
                case .degradation?: return .authorizationDegraded
                case .configuration?: return .authorizationInternalError
                default: break
                }
                if status >= 500 { return .authorizationUnavailable }
                let code = error?.code ?? ""
                if ["invalid_parameter_resources", "missing_resource", "malformed_authz_request"].contains(code) {
                    return .authorizationInvalidRequest
                }
                if code.hasPrefix("network_") || code == "maximum_execution_time_exceeded" { return .authorizationUnavailable }
                return .authorizationInternalError
            }
        }
    }

    /// The status id a failed stage of `setRequestor` is reported with: a transient failure (throttled,
    /// server error, network) at any step is the configuration's (`CFG429`, `CFG5xx`, `CFG404`); only a
    /// refused registration or token is `R400` / `R401`.
    static func setRequestorStatus(for failure: BackendFailure, stage: PipelineStep) -> StatusID {
        refusal(failure, at: stage) ?? configurationStatus(for: failure)
    }

    /// `R400` / `R401` when the backend refused the client registration or the token; nil for a call's own
    /// failure and for transient ones (their retries ran out: the stage that asked reports them).
    static func refusal(_ failure: BackendFailure, at stage: PipelineStep) -> StatusID? {
        guard !isTransient(failure) else { return nil }
        switch stage {
        case .registration: return .registrationFailed
        case .token: return .tokenFailed
        case .call: return nil
        }
    }

    /// The status id of a denied decision, from its item-level enhanced error's `code` and `action`
    /// (reference §9.3): the MVPD's denial, degradation, TempPass limits, a lost authentication, the network.
    static func decisionStatus(for error: EnhancedError?) -> StatusID {
        guard let error else { return .authorizationDenied }
        switch error.code {
        case "authorization_denied_by_degradation_rule", "authorization_denied_by_degradation_configuration_change", "degraded_integration":
            return .authorizationDegraded
        case "temporary_access_duration_limit_exceeded", "temporary_access_resources_limit_exceeded":
            return .tempPassExpired
        case "invalid_parameter_resources", "missing_resource", "malformed_authz_request":
            return .authorizationInvalidRequest
        case "internal_server_error", "internal_error":
            return .authorizationInternalError
        default:
            break
        }
        switch error.action {
        case .retry?, .retryAfter?: return .authorizationUnavailable
        case .authentication?: return .authenticationNotFound
        case .configuration?: return .authorizationInternalError
        case .degradation?: return .authorizationDegraded
        default: return .authorizationDenied
        }
    }

    /// A failure as `status` messages word it.
    static func describe(_ failure: BackendFailure) -> String {
        switch failure {
        case .transport(let reason, _): return "network error: \(reason)"
        case .malformed(let status, let reason): return "malformed answer (HTTP \(status)): \(reason)"
        case .http(let status, _, let error):
            if let error { return "HTTP \(status) \(error.code)\(error.message.map { ": \($0)" } ?? "")" }
            return "HTTP \(status)"
        }
    }
}

/// What the request pipeline does about a failed request (``FailureMapping/remedy(for:)``).
enum FailureRemedy: Equatable {
    /// Send the same request again after a back-off, within a bound.
    case retry(RetryBudget)
    /// Fetch a new access token with the stored credentials and send the request again, once.
    case refreshToken
    /// Drop the credentials, register the client again (DCR) and send the request again, once.
    case registerAgain
    /// Report the failure now, and fetch the configuration again in the background.
    case refetchConfiguration
    /// Report the failure now, with the status id of the call (and drop what it invalidates).
    case giveUp
}

/// Which bound and pacing a retry uses.
enum RetryBudget: Equatable {
    /// A failure without an enhanced `action` (network, malformed, 429, 5xx): `stage_retries` /
    /// `code_request_retries`, the back-off of ``PollPolicy/stageRetryDelay(throttled:retryAfter:attempt:using:)``.
    case transient
    /// An enhanced error whose `action` is `retry` or `retry-after`: ``PollPolicy/actionRetries``; `retry-after`
    /// waits at least the answer's `Retry-After`.
    case requested(honoursRetryAfter: Bool)
}
