import AccessEnablerAPI
import RegcodeSupport

/// Authorization, preauthorization, metadata and logout: the AccessEnabler calls an authenticated
/// device makes. Each is an ``DeviceEngine/Operation`` in the same single-flight queue as the login.
///
/// Callback order (every flow ends with the callback that answers the call; a `status` that explains
/// a failure comes just before it, `sendTrackingData(authorizationDetection)` just after it):
///
/// - `checkAuthorization`/`getAuthorization`, granted: `setToken(token, resource)` →
///   `sendTrackingData(1, [YES, mvpd, guid, NO, None, None, device, client, os])`, then `status Z010` (warning,
///   decision `source: degradation`) or `status Z011` (info, `source: temppass`) when the grant is a variant's.
/// - denied by the MVPD, its parental controls or home-based authentication out of home: `status Z100`
///   (message = the MVPD's details, `details` = Adobe's code; `Z169` for a degradation rule, `Z120` for
///   `network_*`; an item error with `action: authentication`, as out of home, then drops the profile with
///   `setAuthenticationStatus(0, "User Not Authenticated Error")`) →
///   `tokenRequestFailed(resource, "User Not Authorized Error", details)` → `sendTrackingData(1, [NO, …])`.
/// - not authenticated on the device: `setAuthenticationStatus(0, "User Not Authenticated Error")` →
///   `tokenRequestFailed(resource, "User Not Authenticated Error", "")` (no request, no tracking).
///   `getAuthorization` instead starts the login (as `getAuthentication`) and authorizes once
///   `setAuthenticationStatus(1, "")` was sent; a login that ends otherwise answers with that
///   `tokenRequestFailed`.
/// - the backend no longer knows the profile (v2 403 `authenticated_profile_*`, v1 403 "User not
///   Authenticated"): the profile is dropped, `setAuthenticationStatus(0, …)` →
///   `tokenRequestFailed(resource, "User Not Authenticated Error", message)` → tracking NO.
/// - any other failure: `status` (Z120 network/5xx/malformed, Z100 throttled, Z130 bad resource,
///   SEC403 refused v1 signature, R400/R401 DCR, Z500 otherwise) →
///   `tokenRequestFailed(resource, "Generic Authorization Error", description)` → tracking NO.
/// - TempPass spent (`temporary_access_*`, item-level or top-level): `status N111` → `setAuthenticationStatus(0, …)`
///   (the temporary profile is dropped) → `tokenRequestFailed(resource, "User Not Authorized Error", message)` →
///   tracking NO. A temporary profile past its TTL says `status N111` before the unauthenticated answer.
/// - `checkPreauthorizedResources`: `preauthorizedResources([granted ids])`, answered item by item: the denied
///   resources' item-level errors ride along as `errors`; not authenticated →
///   `preauthorizedResources([])`; failure → `status P100` (SEC403 for a refused signature) → `([])`.
/// - `getMetadata`: `setMetadataStatus(metadata, encrypted, opCode, key dictionary)`; user metadata
///   that cannot be read is `null`.
/// - `logout`: local profile and authorizations dropped at once (DCR credentials kept), backend
///   logout, then `setAuthenticationStatus(0, "User Not Authenticated Error")`, whatever the backend said.
extension DeviceEngine {
    // MARK: Authorization

    mutating func checkAuthorization(_ resource: String) -> [Action] {
        guard isAuthenticated, let profile = snapshot.profile else {
            return answerUnauthenticated(.authorize(resource: resource, mvpd: snapshot.selectedMVPD ?? ""))
        }
        return enqueue(.authorize(resource: resource, mvpd: profile.mvpd))
    }

    mutating func getAuthorization(_ resource: String) -> [Action] {
        if isAuthenticated { return checkAuthorization(resource) }
        pendingAuthorizations.append(resource)
        switch login {
        case .idle:
            // As getAuthentication: the picker (or the preset MVPD), a code, polling.
            return apply(.getAuthentication(mvpd: nil))
        case .awaitingProvider, .requestingCode, .polling, .awaitingTVProvider, .exchanging:
            // A login is already under way; the authorization waits for it.
            return []
        }
    }

    /// Answers `getAuthorization` calls whose login ended without authenticating the device.
    mutating func failPendingAuthorizations() -> [Action] {
        let waiting = pendingAuthorizations
        pendingAuthorizations = []
        return waiting.map { resource in
            .emit(.tokenRequestFailed(resource, errorCode: .userNotAuthenticated, errorDescription: ""))
        }
    }

    /// - Parameter fetchedToken: the answer is to v1's `tokens/media` step, which must bring the token itself.
    mutating func authorizationFinished(
        _ result: Result<BackendResponse, BackendFailure>,
        resource: String,
        mvpd: String,
        stage: Stage,
        fetchedToken: Bool
    ) -> [Action] {
        var app: [Action] = []
        switch result {
        case .success(.authorization(let decision)): app = [.emit(.app(.decision(decision)))]
        case .failure: app = [.emit(.app(.callFailed(call: "decisions.authorize", error: result.enhancedError, message: result.failureDescription)))]
        default: break
        }
        return app + authorizationAnswered(result, resource: resource, mvpd: mvpd, stage: stage, fetchedToken: fetchedToken)
    }

    private mutating func authorizationAnswered(
        _ result: Result<BackendResponse, BackendFailure>,
        resource: String,
        mvpd: String,
        stage: Stage,
        fetchedToken: Bool
    ) -> [Action] {
        switch result {
        case .success(.authorization(let decision)) where decision.authorized:
            if let expires = decision.expiresEpochMs { authorizationExpiry[resource] = expires }
            if let token = decision.token {
                return granted(token, resource: resource, mvpd: mvpd, source: decision.source)
            }
            if settings.profile == .v1 && !fetchedToken {
                // v1 authorizes first, then hands out the media token on a second call.
                return enqueue(.mediaToken(resource: resource, mvpd: mvpd))
            }
            return authorizationFailed(
                .malformed(status: 200, reason: "authorized decision without a media token"),
                resource: resource,
                mvpd: mvpd,
                stage: stage
            )
        case .success(.authorization(let decision)):
            authorizationExpiry[resource] = nil
            return denied(resource: resource, mvpd: mvpd, error: decision.error)
        case .success(.mediaToken(let token)):
            return granted(token, resource: resource, mvpd: mvpd, source: nil)
        case .success:
            return authorizationFailed(
                .malformed(status: 200, reason: "unexpected answer to authorization request"),
                resource: resource,
                mvpd: mvpd,
                stage: stage
            )
        case .failure(let failure):
            return authorizationFailed(failure, resource: resource, mvpd: mvpd, stage: stage)
        }
    }

    private mutating func granted(_ token: MediaToken, resource: String, mvpd: String, source: DecisionSource?) -> [Action] {
        let none = AccessEnabler.trackingNone
        var actions: [Action] = [
            .emit(.setToken(token.serializedToken, resource: resource)),
            .emit(.sendTrackingData(.authorizationDetection, authorizationTracking(success: true, mvpd: mvpd, error: none, details: none))),
        ]
        if let variant = EntitlementVariants.authorizationStatus(source: source, profile: snapshot.profile, resource: resource) {
            actions.append(.emit(variant))
        }
        return actions
    }

    /// A denial whose item-level error asks for a new login (`action: authentication`: home-based authentication out
    /// of home, a session the MVPD invalidated) also drops the profile: `setAuthenticationStatus(0, …)` comes between
    /// the status and `tokenRequestFailed`, so the next `getAuthorization` starts a login. A spent TempPass is ``tempPassSpent``.
    private mutating func denied(resource: String, mvpd: String, error: EnhancedError?) -> [Action] {
        if EntitlementVariants.isTempPassSpent(error) {
            return tempPassSpent(resource: resource, mvpd: mvpd, error: error)
        }
        let details = error?.details ?? error?.message ?? ""
        let tracking = authorizationTracking(success: false, mvpd: mvpd, error: ErrorCode.userNotAuthorized.rawValue, details: details)
        var actions: [Action] = [
            .emit(.status(EntitlementVariants.denialStatus(for: error), message: details, extra: decisionExtra(resource: resource, error: error)))
        ]
        if error?.action == .authentication {
            actions += profileRejected()
        }
        actions.append(.emit(.tokenRequestFailed(resource, errorCode: .userNotAuthorized, errorDescription: details)))
        actions.append(.emit(.sendTrackingData(.authorizationDetection, tracking)))
        return actions
    }

    /// `resource`, and Adobe's code in `details` when the decision carried one.
    private func decisionExtra(resource: String, error: EnhancedError?) -> [String: JSONValue] {
        var extra: [String: JSONValue] = ["resource": .string(resource)]
        if let code = error?.code { extra["details"] = .string(code) }
        return extra
    }

    /// The TempPass is spent (a denial or a 403 with `temporary_access_*`): `status N111` →
    /// `setAuthenticationStatus(0, "User Not Authenticated Error")` (the temporary profile is dropped, so the next
    /// `getAuthorization` shows the picker again) → `tokenRequestFailed(resource, "User Not Authorized Error", message)`
    /// → tracking NO.
    private mutating func tempPassSpent(resource: String, mvpd: String, error: EnhancedError?) -> [Action] {
        let description = error?.details ?? error?.message ?? error?.code ?? ""
        let tracking = authorizationTracking(success: false, mvpd: mvpd, error: ErrorCode.userNotAuthorized.rawValue, details: description)
        var actions: [Action] = [.emit(EntitlementVariants.tempPassExpired(error, mvpd: mvpd))]
        actions += profileRejected()
        actions.append(.emit(.tokenRequestFailed(resource, errorCode: .userNotAuthorized, errorDescription: description)))
        actions.append(.emit(.sendTrackingData(.authorizationDetection, tracking)))
        return actions
    }

    private mutating func authorizationFailed(_ failure: BackendFailure, resource: String, mvpd: String, stage: Stage) -> [Action] {
        if stage == .call, EntitlementVariants.isTempPassSpent(failure), case .http(_, _, let error) = failure {
            return tempPassSpent(resource: resource, mvpd: mvpd, error: error)
        }
        if stage == .call, Self.isProfileRejection(failure) {
            let description = Self.rejectionMessage(failure)
            // Tracked for the user who asked, before the profile is dropped.
            let tracking = authorizationTracking(success: false, mvpd: mvpd, error: ErrorCode.userNotAuthenticated.rawValue, details: description)
            var actions = profileRejected()
            actions.append(.emit(.tokenRequestFailed(resource, errorCode: .userNotAuthenticated, errorDescription: description)))
            actions.append(.emit(.sendTrackingData(.authorizationDetection, tracking)))
            return actions
        }
        let description = FailureMapping.describe(failure)
        let status: Action
        if stage == .call, isSignatureRefusal(failure) {
            status = signatureRefusedStatus(failure)
        } else {
            let id = FailureMapping.authorizationStatus(for: failure, stage: stage)
            status = .emit(.status(id, message: description, extra: ["resource": .string(resource)]))
        }
        return [
            status,
            .emit(.tokenRequestFailed(resource, errorCode: .genericAuthorization, errorDescription: description)),
            .emit(
                .sendTrackingData(
                    .authorizationDetection,
                    authorizationTracking(success: false, mvpd: mvpd, error: ErrorCode.genericAuthorization.rawValue, details: description)
                )
            ),
        ]
    }

    /// `[success, mvpd, guid, cached, error, details, device type, client type, os]` (reference §6).
    private func authorizationTracking(success: Bool, mvpd: String, error: String, details: String) -> [String] {
        Tracking.authorization(success: success, mvpd: mvpd, profile: snapshot.profile, error: error, details: details, settings: settings)
    }

    // MARK: Preauthorization

    mutating func checkPreauthorizedResources(_ resources: [String]) -> [Action] {
        guard isAuthenticated, let profile = snapshot.profile, !resources.isEmpty else {
            return [.emit(.preauthorizedResources([]))]
        }
        return enqueue(.preauthorize(resources: resources, mvpd: profile.mvpd))
    }

    mutating func preauthorizationFinished(_ result: Result<BackendResponse, BackendFailure>, resources: [String], stage: Stage) -> [Action] {
        switch result {
        case .success(.preauthorization(let decisions)):
            var actions: [Action] = [.emit(.app(.preauthorization(decisions)))]
            let granted = Set(decisions.filter(\.authorized).map(\.resource))
            // In the order the app asked, each once; resources the backend did not answer count as denied.
            var seen = Set<String>()
            let ids = resources.filter { granted.contains($0) && seen.insert($0).inserted }
            // Item-level errors of the resources denied, in the order the app asked (each once).
            var reported = Set<String>()
            let errors = resources.compactMap { resource -> ResourceError? in
                guard !granted.contains(resource), reported.insert(resource).inserted,
                    let error = decisions.first(where: { $0.resource == resource && !$0.authorized })?.error
                else { return nil }
                return ResourceError(resource: resource, error: error)
            }
            actions.append(.emit(.preauthorizedResources(ids, errors: errors)))
            return actions
        case .failure(let failure) where stage == .call && Self.isProfileRejection(failure):
            return profileRejected() + [.emit(.preauthorizedResources([]))]
        default:
            let failure: BackendFailure
            if case .failure(let error) = result {
                failure = error
            } else {
                failure = .malformed(status: 200, reason: "unexpected answer to preauthorization request")
            }
            let status =
                stage == .call && isSignatureRefusal(failure)
                ? signatureRefusedStatus(failure)
                : .emit(.status(.preauthorizationFailed, message: FailureMapping.describe(failure)))
            return [status, .emit(.preauthorizedResources([]))]
        }
    }

    // MARK: Metadata

    mutating func getMetadata(_ key: JSONValue) -> [Action] {
        let rawOpCode = key[AccessEnabler.metadataOpCodeKey]?.intValue
        guard let opCode = rawOpCode.flatMap(AccessEnabler.MetadataOpCode.init(rawValue:)) else {
            return [.emit(.setMetadataStatus(.null, encrypted: false, key: rawOpCode ?? AccessEnabler.metadataKeyInvalid, arguments: key))]
        }
        let now = clock.epochMillisecondsNow
        let metadata: JSONValue
        switch opCode {
        case .authenticationTTL:
            // iOS hands TTLs over as NSString: epoch milliseconds as a decimal string.
            metadata = isAuthenticated ? snapshot.profile.map { .string(String($0.expiresEpochMs)) } ?? .null : .null
        case .authorizationTTL:
            let resource = key[AccessEnabler.metadataResourceIDKey]?.stringValue ?? ""
            metadata = authorizationExpiry[resource].flatMap { $0 > now && isAuthenticated ? .string(String($0)) : nil } ?? .null
        case .deviceID:
            metadata = .string(deviceID)
        case .userMetadata:
            let name = key[AccessEnabler.metadataUserMetaKey]?.stringValue ?? ""
            // Known on the device: whether the token was exchanged from the TV Provider account.
            if name == "tokenSource" {
                let source = isAuthenticated ? snapshot.profile?.source.userMetadataValue : nil
                return [.emit(.setMetadataStatus(source.map(JSONValue.string) ?? .null, encrypted: false, key: opCode.rawValue, arguments: key))]
            }
            if isAuthenticated, let profile = snapshot.profile, !name.isEmpty {
                return enqueue(.userMetadata(key: key, name: name, mvpd: profile.mvpd))
            }
            metadata = .null
        }
        return [.emit(.setMetadataStatus(metadata, encrypted: false, key: opCode.rawValue, arguments: key))]
    }

    mutating func userMetadataFinished(_ result: Result<BackendResponse, BackendFailure>, key: JSONValue, name: String) -> [Action] {
        let opCode = AccessEnabler.MetadataOpCode.userMetadata.rawValue
        switch result {
        case .success(.userMetadata(let metadata?)):
            return [
                .emit(.setMetadataStatus(metadata.values[name] ?? .null, encrypted: metadata.encrypted.contains(name), key: opCode, arguments: key))
            ]
        case .success(.userMetadata(nil)):
            return profileRejected() + [.emit(.setMetadataStatus(.null, encrypted: false, key: opCode, arguments: key))]
        case .failure(let failure) where Self.isProfileRejection(failure):
            return profileRejected() + [.emit(.setMetadataStatus(.null, encrypted: false, key: opCode, arguments: key))]
        case .failure(let failure) where isSignatureRefusal(failure):
            return [signatureRefusedStatus(failure), .emit(.setMetadataStatus(.null, encrypted: false, key: opCode, arguments: key))]
        default:
            // Throttled or failed: AccessEnabler answers with an empty value (reference §8.2).
            return [.emit(.setMetadataStatus(.null, encrypted: false, key: opCode, arguments: key))]
        }
    }

    // MARK: Logout

    mutating func logout() -> [Action] {
        var actions = stopLogin(endingCodeAs: .cancelled)
        let mvpd = snapshot.profile?.mvpd
        let apple = snapshot.profile?.source == .apple
        clearAuthentication()
        snapshot.selectedMVPD = nil
        snapshot.renewals = 0
        guard let mvpd else {
            actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, .userNotAuthenticated)))
            return actions + failPendingAuthorizations()
        }
        return actions + enqueue(.logout(mvpd: mvpd, apple: apple))
    }

    mutating func logoutFinished(_ result: Result<BackendResponse, BackendFailure>, mvpd: String, apple: Bool) -> [Action] {
        var instructions: [LogoutInstruction] = []
        if case .success(.logoutInstructions(let given)) = result { instructions = given }
        var actions: [Action] = [.emit(.app(.loggedOut(mvpd: mvpd, instructions: instructions)))]
        if case .failure(let failure) = result, isSignatureRefusal(failure) {
            actions.append(signatureRefusedStatus(failure))
        }
        // The TV Provider account still signs every app in: the user must sign out in Settings too.
        if let status = appleRules.logout(tokenSource: apple ? .apple : .adobe) {
            actions.append(.emit(.status(status)))
        }
        // The device forgot the profile already; a backend failure does not bring it back.
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, .userNotAuthenticated)))
        return actions + failPendingAuthorizations()
    }

    // MARK: Authentication lost

    /// Forgets the authentication (profile, authorizations) but keeps DCR credentials and the MVPD list.
    mutating func clearAuthentication() {
        snapshot.profile = nil
        authorizationExpiry.removeAll()
    }

    /// The backend says the device is not (or no longer) authenticated: drop the profile and say so.
    mutating func profileRejected() -> [Action] {
        clearAuthentication()
        return [.emit(.setAuthenticationStatus(AccessEnabler.statusError, .userNotAuthenticated))]
    }

    /// Answers an entitlement call of a device that is not authenticated, without asking the backend.
    mutating func answerUnauthenticated(_ operation: Operation) -> [Action] {
        var expired: [Action] = []
        if let profile = snapshot.profile, !isAuthenticated {
            // An expired profile is as good as none; a TempPass that ran out says so first.
            if profile.type == .temporary {
                expired.append(.emit(EntitlementVariants.tempPassExpired(nil, mvpd: profile.mvpd)))
            }
            clearAuthentication()
        }
        return expired + unauthenticatedAnswer(operation)
    }

    private func unauthenticatedAnswer(_ operation: Operation) -> [Action] {
        let notAuthenticated = Action.emit(.setAuthenticationStatus(AccessEnabler.statusError, .userNotAuthenticated))
        switch operation {
        case .authorize(let resource, _), .mediaToken(let resource, _):
            return [
                notAuthenticated,
                .emit(.tokenRequestFailed(resource, errorCode: .userNotAuthenticated, errorDescription: "")),
            ]
        case .preauthorize:
            return [.emit(.preauthorizedResources([]))]
        case .userMetadata(let key, _, _):
            return [.emit(.setMetadataStatus(.null, encrypted: false, key: AccessEnabler.MetadataOpCode.userMetadata.rawValue, arguments: key))]
        case .configure, .refreshConfiguration, .checkAuthentication, .fetchProfile, .createSession, .poll, .logout, .partnerSession,
            .partnerProfile, .launchCheck, .pickerConfiguration:
            return []
        }
    }

    static func isProfileRejection(_ failure: BackendFailure) -> Bool {
        guard case .http(let status, _, let error?) = failure, status == 403 || status == 412 else { return false }
        return profileRejectionCodes.contains(error.code) || FailureMapping.losesAuthentication(error)
    }

    static func rejectionMessage(_ failure: BackendFailure) -> String {
        guard case .http(_, _, let error?) = failure else { return FailureMapping.describe(failure) }
        return error.details ?? error.message ?? error.code
    }
}

/// Enhanced codes meaning "this device has no valid authentication here" (v2 §9.3, v1 §9.4; the client
/// maps v1's classic "User not Authenticated" answers onto the v1 codes).
private let profileRejectionCodes: Set<String> = [
    "authenticated_profile_missing", "authenticated_profile_expired", "authenticated_profile_invalidated",
    "authentication_session_missing", "authentication_session_expired", "authentication_session_invalidated",
    "preauthorization_authentication_session_missing", "preauthorization_authentication_session_expired",
]
