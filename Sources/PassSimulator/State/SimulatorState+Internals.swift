#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Code generation and the periodic sweep of expired records.
extension SimulatorState {
    func newCode(
        api: CodeAPI,
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String,
        mvpd: String?,
        ttl: Int64,
        now: Int64,
        earlyExpiryOffset: Int64?,
        domainName: String?,
        redirectUrl: String?,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?,
        v1Info: V1RegcodeInfo?,
        ssoSubjects: [SSOSubject] = []
    ) -> AuthenticationSession {
        let script = self.configuration.defaultCodeScript
        let session = AuthenticationSession(
            code: self.uniqueCode(),
            api: api,
            sessionId: UUID().uuidString.lowercased(),
            serviceProvider: serviceProvider,
            deviceIdentifier: deviceIdentifier,
            clientId: clientId,
            mvpd: mvpd,
            domainName: domainName,
            redirectUrl: redirectUrl,
            notBefore: now,
            notAfter: now + ttl,
            status: .pending,
            script: script,
            scriptDueAt: script.map { now + $0.delayMillis },
            cutoff: earlyExpiryOffset.map { (now + max($0, 0), .earlyExpiry) },
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress,
            v1Info: v1Info,
            ssoSubjects: ssoSubjects
        )
        self.sessions[session.code] = session
        return session
    }

    func complete(
        _ session: inout AuthenticationSession,
        mvpd: String,
        userId: String?,
        attributes overrides: [String: MetadataValue]?,
        now: Int64
    ) -> SimulatedProfile {
        let user =
            userId.flatMap { $0.isEmpty ? nil : $0 }
            ?? overrides?["userID"]?.stringValue
            ?? "user-\(session.code.lowercased())"
        var attributes = ProfileAttribute.defaults(userId: user, householdId: "household-\(user)")
        // Home-based authentication: whether the device was at home when it asked for the code.
        let homeBased = self.homeBasedStatus(mvpd: mvpd, peerAddress: session.peerAddress)
        attributes["hba_status"] = homeBased?.attribute
        if let overrides {
            attributes = ProfileAttribute.merging(overrides, into: attributes)
        }
        let ttl = self.profileTTL(serviceProvider: session.serviceProvider, mvpd: mvpd)
        let profile = SimulatedProfile(
            mvpd: mvpd,
            userId: user,
            householdId: attributes["householdID"]?.value.stringValue ?? "household-\(user)",
            notBefore: now,
            notAfter: now + min(ttl, homeBased?.ttl ?? ttl),
            sessionId: session.sessionId,
            attributes: attributes
        )
        session.mvpd = mvpd
        session.status = .completed(profile)
        self.sessions[session.code] = session
        switch session.api {
        case .v2:
            let key = self.profileKey(session.serviceProvider, session.deviceIdentifier, session.clientId)
            self.profiles[key, default: [:]][mvpd] = profile
            // A login made with a valid SSO header links the subject to the MVPD (sso.md §3.3, "Linking").
            for subject in session.ssoSubjects {
                self.ssoLinks[subject, default: [:]][mvpd] = SSOLink(
                    serviceProvider: session.serviceProvider,
                    deviceIdentifier: session.deviceIdentifier,
                    clientId: session.clientId,
                    profile: profile
                )
            }
        case .v1:
            // Reference §5: the AuthN token is bound to (requestor, deviceId captured at regcode creation).
            let key = DeviceKey(serviceProvider: session.serviceProvider, deviceIdentifier: session.deviceIdentifier)
            self.v1Tokens[key] = profile
        }
        return profile
    }

    /// Applies a due scripted outcome, or the global auto-approval when the code has no script.
    func applyScriptIfDue(_ session: inout AuthenticationSession, now: Int64) {
        guard case .pending = session.status else { return }
        let outcome: CodeScript.Outcome
        let dueAt: Int64
        if let script = session.script {
            outcome = script.outcome
            guard outcome != .never, let scriptDueAt = session.scriptDueAt else { return }
            dueAt = scriptDueAt
        } else if let delay = self.configuration.autoApproveAfter {
            outcome = .approve
            dueAt = session.notBefore + delay.milliseconds
        } else {
            return
        }
        // The outcome is stamped at its due time, not at the (later) moment somebody looked.
        guard dueAt <= now, dueAt < session.effectiveEnd else { return }
        switch outcome {
        case .approve:
            let wanted = session.script?.mvpd ?? session.mvpd
            let mvpd =
                wanted.flatMap { self.configuration.mvpd(id: $0)?.id }
                ?? self.configuration.mvpds(integratedWith: session.serviceProvider).first?.id
            guard let mvpd else { return }
            _ = self.complete(&session, mvpd: mvpd, userId: session.script?.userId, attributes: nil, now: dueAt)
        case .deny:
            session.cutoff = (dueAt, .denied)
            self.sessions[session.code] = session
        case .never:
            return
        }
    }

    /// Polling by device (not by code) must also observe a scripted or automatic approval of the device's code.
    func observeV2Device(_ deviceKey: DeviceKey, now: Int64) {
        if let code = self.liveCodeByDevice[deviceKey], var session = self.sessions[code] {
            self.applyScriptIfDue(&session, now: now)
        }
    }

    func observeV1Device(_ deviceKey: DeviceKey, now: Int64) {
        for code in self.v1CodesByDevice[deviceKey] ?? [] {
            if var session = self.sessions[code] {
                self.applyScriptIfDue(&session, now: now)
            }
        }
    }

    /// The session as seen at `now`: a pending or completed session past its window (or cutoff) reads as expired.
    static func observed(_ session: AuthenticationSession, now: Int64) -> AuthenticationSession {
        var session = session
        if session.isLive, now >= session.effectiveEnd {
            session.status = .expired
        }
        return session
    }

    func uniqueCode() -> String {
        while true {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(7)
            for _ in 0..<7 {
                bytes.append(Self.codeAlphabet[Int.random(in: 0..<Self.codeAlphabet.count, using: &self.generator)])
            }
            let code = String(decoding: bytes, as: UTF8.self)
            if self.sessions[code] == nil { return code }
        }
    }

    func randomToken(bytes count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &self.generator) }
        return Base64.urlSafeEncode(Data(bytes))
    }

    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// Purges access tokens at expiry, sessions one code TTL after their window closed (kept that long so a late
    /// poll still learns the session is dead instead of "unknown code"), and profiles and v1 tokens
    /// ``expiredRetention`` after expiry.
    func sweepIfDue(now: Int64) {
        guard now - self.lastSweep >= Self.sweepInterval || now < self.lastSweep else { return }
        self.sweep(now: now)
    }

    /// Purges now; with a state file, the purged records leave the file too.
    func sweep(now: Int64) {
        self.lastSweep = now
        let retention = self.configuration.codeTTL.milliseconds
        for (code, session) in self.sessions where now >= session.effectiveEnd + retention {
            self.sessions[code] = nil
            let deviceKey = DeviceKey(serviceProvider: session.serviceProvider, deviceIdentifier: session.deviceIdentifier)
            switch session.api {
            case .v2:
                if self.liveCodeByDevice[deviceKey] == code { self.liveCodeByDevice[deviceKey] = nil }
            case .v1:
                let remaining = (self.v1CodesByDevice[deviceKey] ?? []).filter { $0 != code }
                self.v1CodesByDevice[deviceKey] = remaining.isEmpty ? nil : remaining
            }
        }
        for (token, grant) in self.tokens where now >= grant.expiresAt {
            self.tokens[token] = nil
        }
        for (clientId, issued) in self.tokensByClient {
            let remaining = issued.filter { self.tokens[$0] != nil }
            self.tokensByClient[clientId] = remaining.isEmpty ? nil : remaining
        }
        for (key, byMVPD) in self.profiles {
            let remaining = byMVPD.filter { now < $0.value.notAfter + Self.expiredRetention }
            if remaining.count != byMVPD.count { self.profiles[key] = remaining.isEmpty ? nil : remaining }
        }
        for (key, token) in self.v1Tokens where now >= token.notAfter + Self.expiredRetention {
            self.v1Tokens[key] = nil
        }
        for (subject, byMVPD) in self.ssoLinks {
            let remaining = byMVPD.filter { now < $0.value.profile.notAfter }
            if remaining.count != byMVPD.count { self.ssoLinks[subject] = remaining.isEmpty ? nil : remaining }
        }
        for (id, request) in self.partnerRequests where now >= request.notAfter + retention {
            self.partnerRequests[id] = nil
        }
        self.sweepSSOServiceLinkCodes(now: now)
        for (key, byResource) in self.v1Authorizations {
            let remaining = byResource.filter { now < $0.value.notAfter + Self.expiredRetention }
            if remaining.count != byResource.count { self.v1Authorizations[key] = remaining.isEmpty ? nil : remaining }
        }
    }
}
