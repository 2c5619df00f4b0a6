#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Registration codes and their authentication sessions (v2 sessions, v1 regcodes).
extension SimulatorState {
    /// Starts a v2 session for a device, or reports that the device is already authenticated with `mvpd`.
    ///
    /// A new code replaces the device's previous live code for the same service provider. `earlyExpiryOffset` (the
    /// earlyExpiry fault) ends the code that long after issue, while its published window stays the full TTL.
    func createSession(
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String,
        mvpd: String?,
        domainName: String?,
        redirectUrl: String?,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?,
        earlyExpiryOffset: Int64? = nil,
        ssoSubjects: [SSOSubject] = []
    ) -> SessionCreation {
        let now = self.now
        self.sweepIfDue(now: now)
        let profileKey = self.profileKey(serviceProvider, deviceIdentifier, clientId)
        if let mvpd, let profile = self.profiles[profileKey]?[mvpd], now < profile.notAfter {
            return .alreadyAuthenticated(profile)
        }
        if let mvpd, let profile = self.ssoProfiles(serviceProvider: serviceProvider, subjects: ssoSubjects, now: now)[mvpd] {
            return .authenticatedSSO(profile)
        }
        let deviceKey = DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier)
        if let previous = self.liveCodeByDevice[deviceKey], var old = self.sessions[previous],
            Self.observed(old, now: now).isLive
        {
            old.status = .superseded
            self.sessions[previous] = old
        }
        let session = self.newCode(
            api: .v2,
            serviceProvider: serviceProvider,
            deviceIdentifier: deviceIdentifier,
            clientId: clientId,
            mvpd: mvpd,
            ttl: self.configuration.codeTTL.milliseconds,
            now: now,
            earlyExpiryOffset: earlyExpiryOffset,
            domainName: domainName,
            redirectUrl: redirectUrl,
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress,
            v1Info: nil,
            ssoSubjects: ssoSubjects
        )
        self.liveCodeByDevice[deviceKey] = session.code
        return .created(session)
    }

    /// Issues a v1 registration code for (requestor, deviceId), valid `ttlMillis`.
    ///
    /// Earlier codes of the device stay valid (v1 never documented otherwise); any of them completing authenticates
    /// the device. The device's AuthN token and authorizations are dropped: a device asking for a code is logging in
    /// again, and its poll must read "pending" for the new code rather than the old token's "expired".
    func createRegcode(
        requestor: String,
        deviceId: String,
        clientId: String,
        mvpd: String?,
        ttlMillis: Int64,
        info: V1RegcodeInfo,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?,
        earlyExpiryOffset: Int64? = nil
    ) -> AuthenticationSession {
        let now = self.now
        self.sweepIfDue(now: now)
        let session = self.newCode(
            api: .v1,
            serviceProvider: requestor,
            deviceIdentifier: deviceId,
            clientId: clientId,
            mvpd: mvpd,
            ttl: ttlMillis,
            now: now,
            earlyExpiryOffset: earlyExpiryOffset,
            domainName: nil,
            redirectUrl: nil,
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress,
            v1Info: info
        )
        let deviceKey = DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)
        if self.v1Tokens[deviceKey] != nil { self.v1Tokens[deviceKey] = nil }
        if self.v1Authorizations[deviceKey] != nil { self.v1Authorizations[deviceKey] = nil }
        var codes = self.v1CodesByDevice[deviceKey, default: []]
        codes.append(session.code)
        if codes.count > Self.maxV1CodesPerDevice { codes.removeFirst(codes.count - Self.maxV1CodesPerDevice) }
        self.v1CodesByDevice[deviceKey] = codes
        return session
    }

    /// The session of `code` with its current status (scripts and auto-approval applied), or `nil` for an unknown
    /// code.
    ///
    /// Codes are matched case-insensitively; with `serviceProvider`, a code of another provider is unknown; with `api`,
    /// a code of the other API generation is unknown.
    package func session(code: String, serviceProvider: String? = nil, api: CodeAPI? = nil) -> AuthenticationSession? {
        let now = self.now
        self.sweepIfDue(now: now)
        let code = code.uppercased()
        guard var session = self.sessions[code] else { return nil }
        if let serviceProvider, session.serviceProvider != serviceProvider { return nil }
        if let api, session.api != api { return nil }
        self.applyScriptIfDue(&session, now: now)
        return Self.observed(session, now: now)
    }

    /// Supplies parameters of a pending session (resume); given values replace earlier ones. Sessions that are no
    /// longer pending are returned unchanged.
    func resumeSession(
        code: String,
        serviceProvider: String?,
        api: CodeAPI? = nil,
        mvpd: String?,
        domainName: String?,
        redirectUrl: String?
    ) -> AuthenticationSession? {
        guard var session = self.session(code: code, serviceProvider: serviceProvider, api: api) else { return nil }
        guard case .pending = session.status else { return session }
        if let mvpd { session.mvpd = mvpd }
        if let domainName { session.domainName = domainName }
        if let redirectUrl { session.redirectUrl = redirectUrl }
        self.sessions[session.code] = session
        return session
    }

    /// Completes a pending code as if the user had logged in with `mvpd` (default: the session's MVPD, else the
    /// first configured one): a v2 code creates the device's profile, a v1 code its AuthN token.
    ///
    /// `attributes` override the generated user metadata (see ``ProfileAttribute``). Completing an already completed
    /// code with the same (or no) MVPD returns the existing profile, unless `requirePending`.
    @discardableResult
    package func completeCode(
        _ code: String,
        mvpd: String? = nil,
        userId: String? = nil,
        attributes: [String: MetadataValue]? = nil,
        requirePending: Bool = false
    ) throws(CodeCompletionError) -> SimulatedProfile {
        guard let session = self.session(code: code) else { throw .unknownCode }
        switch session.status {
        case .expired, .superseded:
            throw .codeGone
        case .completed(let profile):
            if requirePending || (mvpd != nil && mvpd != profile.mvpd) { throw .alreadyCompleted(profile) }
            return profile
        case .pending:
            let fallback = self.configuration.mvpds(integratedWith: session.serviceProvider).first?.id
            guard let chosen = mvpd ?? session.mvpd ?? fallback,
                self.configuration.mvpd(id: chosen) != nil
            else { throw .unknownMVPD(mvpd ?? session.mvpd ?? "") }
            var updated = session
            return self.complete(&updated, mvpd: chosen, userId: userId, attributes: attributes, now: self.now)
        }
    }

    /// Gives `code` a scripted outcome; `after` counts from now. Returns the code as it stands afterwards (a due
    /// outcome is applied at once).
    @discardableResult
    package func setScript(_ script: CodeScript, forCode code: String) throws(CodeCompletionError) -> AuthenticationSession {
        guard var session = self.session(code: code) else { throw .unknownCode }
        switch session.status {
        case .expired, .superseded:
            throw .codeGone
        case .completed(let profile):
            throw .alreadyCompleted(profile)
        case .pending:
            if script.outcome == .approve, let mvpd = script.mvpd, self.configuration.mvpd(id: mvpd) == nil {
                throw .unknownMVPD(mvpd)
            }
            session.script = script
            session.scriptDueAt = self.now + script.delayMillis
            self.sessions[session.code] = session
            return self.session(code: code) ?? session
        }
    }

    /// Codes that can still be used, oldest first.
    package func liveSessions() -> [AuthenticationSession] {
        let now = self.now
        self.sweepIfDue(now: now)
        var live: [AuthenticationSession] = []
        for var session in self.sessions.values {
            self.applyScriptIfDue(&session, now: now)
            let observed = Self.observed(session, now: now)
            if observed.isLive { live.append(observed) }
        }
        return live.sorted { ($0.notBefore, $0.code) < ($1.notBefore, $1.code) }
    }

    /// Makes `code` expire now; returns `false` for an unknown code.
    @discardableResult
    package func expireCode(_ code: String) -> Bool {
        let code = code.uppercased()
        guard var session = self.sessions[code] else { return false }
        let now = self.now
        session.notAfter = min(session.notAfter, now)
        self.sessions[code] = session
        return true
    }

    /// Deletes a v1 registration record (`DELETE /reggie/v1/{requestor}/regcode/{code}`); `false` when there is no
    /// usable record.
    func deleteRegcode(code: String, requestor: String) -> Bool {
        guard var session = self.session(code: code, serviceProvider: requestor, api: .v1), session.isLive else { return false }
        if case .completed = session.status { return false }
        session.cutoff = (self.now, .deleted)
        self.sessions[session.code] = session
        return true
    }
}
