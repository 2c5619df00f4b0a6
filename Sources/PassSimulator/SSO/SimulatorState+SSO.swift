#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SSO profiles found through subject links, partner (Apple) requests and profiles, single logout.
extension SimulatorState {
    /// The SSO profiles `subjects` reach for `serviceProvider`, by MVPD: one per linked MVPD that is integrated with
    /// the service provider and allows the subject's method, unexpired. The first subject reaching an MVPD wins.
    ///
    /// Each is the linking login's profile (same `notBefore`/`notAfter`: a shared TTL) with type `platformSSO` or
    /// `serviceTokenSSO`, issuer the MVPD, and the sample attributes `upstreamUserID` and `mvpd` added.
    func ssoProfiles(serviceProvider: String, subjects: [SSOSubject], now: Int64) -> [String: SimulatedProfile] {
        var found: [String: SimulatedProfile] = [:]
        for subject in subjects {
            for (mvpd, link) in self.ssoLinks[subject] ?? [:] where found[mvpd] == nil {
                guard now < link.profile.notAfter, self.integrationIsActive(serviceProvider: serviceProvider, mvpd: mvpd),
                    self.integrationSettings(serviceProvider: serviceProvider, mvpd: mvpd).allows(subject.method)
                else { continue }
                var attributes = link.profile.attributes
                attributes["upstreamUserID"] = ProfileAttribute(.string(link.profile.userId))
                attributes["mvpd"] = ProfileAttribute(.string(mvpd))
                found[mvpd] = SimulatedProfile(
                    mvpd: mvpd,
                    userId: link.profile.userId,
                    householdId: link.profile.householdId,
                    notBefore: link.profile.notBefore,
                    notAfter: link.profile.notAfter,
                    sessionId: link.profile.sessionId,
                    attributes: attributes,
                    type: subject.method.profileType
                )
            }
        }
        return found
    }

    /// The device's own unexpired profiles plus the SSO profiles `subjects` reach for MVPDs it has none for.
    func profilesWithSSO(
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String,
        subjects: [SSOSubject]
    ) -> [String: SimulatedProfile] {
        let own = self.profiles(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: clientId)
        guard !subjects.isEmpty else { return own }
        return self.ssoProfiles(serviceProvider: serviceProvider, subjects: subjects, now: self.now).merging(own) { _, mine in mine }
    }

    // MARK: Partner (Apple)

    /// Opens a partner request for the device, valid one code TTL; returns it.
    func openPartnerRequest(serviceProvider: String, mvpd: String, deviceIdentifier: String, clientId: String) -> PartnerRequest {
        let now = self.now
        self.sweepIfDue(now: now)
        let request = PartnerRequest(
            id: "_" + UUID().uuidString.lowercased(),
            sessionId: UUID().uuidString.lowercased(),
            serviceProvider: serviceProvider,
            mvpd: mvpd,
            deviceIdentifier: deviceIdentifier,
            clientId: clientId,
            notBefore: now,
            notAfter: now + self.configuration.codeTTL.milliseconds
        )
        self.partnerRequests[request.id] = request
        return request
    }

    /// The open (unconsumed, unexpired) partner request `id`.
    func openPartnerRequest(id: String) -> PartnerRequest? {
        guard let request = self.partnerRequests[id], !request.consumed, self.now < request.notAfter else { return nil }
        return request
    }

    /// How a partner answer was accepted.
    enum PartnerAnswerTrust: Sendable, Equatable {
        /// Signed by the identity provider key trusted for the MVPD.
        case signed
        /// Not signed by a trusted key, taken because of `--accept-unsigned-saml`.
        case acceptedUnsigned
    }

    /// The open partner request a `SAMLResponse` answers and its assertion, when it is signed by the identity
    /// provider trusted for the request's MVPD (or unsigned answers are accepted), issued by that MVPD's
    /// `platformMappingId` for this device and client, unexpired and naming a user; else `nil`
    /// (`invalid_parameter_saml_response`).
    func verifiedPartnerAnswer(
        _ samlResponse: String,
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String
    ) -> (request: PartnerRequest, assertion: SAMLMessages.Assertion, trust: PartnerAnswerTrust)? {
        guard let parsed = SAMLMessages.parse(base64: samlResponse) else { return nil }
        let assertion = parsed.assertion
        guard let request = self.openPartnerRequest(id: assertion.inResponseTo),
            request.serviceProvider == serviceProvider, assertion.audience == serviceProvider,
            request.deviceIdentifier == deviceIdentifier, request.clientId == clientId,
            self.now < assertion.notOnOrAfter, !assertion.nameId.isEmpty,
            self.platform(ofMVPD: request.mvpd)?.platformMappingId == assertion.issuer
        else { return nil }
        let trust = self.configuration.samlTrust
        if let key = trust.publicKey(forMVPD: request.mvpd), parsed.isSigned(by: key) { return (request, assertion, .signed) }
        return trust.acceptUnsigned ? (request, assertion, .acceptedUnsigned) : nil
    }

    /// The MVPD a partner answer is for, without checking it (to compare with the PFS provider before the SAML checks).
    func unverifiedPartnerMVPD(_ samlResponse: String) -> String? {
        guard let parsed = SAMLMessages.parse(base64: samlResponse) else { return nil }
        return self.partnerRequests[parsed.assertion.inResponseTo]?.mvpd
    }

    /// Exchanges a verified partner answer for the device's profile: `appleSSO` (issuer Apple, attributes from the
    /// SAML, the integration's TTL), or `degraded` (issuer Adobe) for a degraded integration. The request is consumed.
    func storePartnerProfile(request: PartnerRequest, assertion: SAMLMessages.Assertion, degraded: Bool) -> SimulatedProfile {
        let now = self.now
        var consumed = request
        consumed.consumed = true
        self.partnerRequests[request.id] = consumed
        let userId = assertion.attributes["userID"] ?? assertion.nameId
        let householdId = assertion.attributes["householdID"] ?? "household-\(userId)"
        var attributes: [String: ProfileAttribute] = [
            "userID": ProfileAttribute(.string(userId)),
            "householdID": ProfileAttribute(.string(householdId)),
        ]
        if let zip = assertion.attributes["zip"] {
            // Adobe's sample publishes the partner's zip encrypted.
            attributes["zip"] = ProfileAttribute(.string(Data(zip.utf8).base64EncodedString()), encrypted: true)
        }
        let profile = SimulatedProfile(
            mvpd: request.mvpd,
            userId: userId,
            householdId: householdId,
            notBefore: now,
            notAfter: now + self.profileTTL(serviceProvider: request.serviceProvider, mvpd: request.mvpd),
            sessionId: request.sessionId,
            attributes: attributes,
            type: degraded ? .degraded : .appleSSO
        )
        let key = self.profileKey(request.serviceProvider, request.deviceIdentifier, request.clientId)
        self.profiles[key, default: [:]][request.mvpd] = profile
        return profile
    }

    // MARK: Logout

    /// What a v2 logout removed.
    struct LogoutOutcome: Sendable {
        /// The caller's own profile for the MVPD, if it had one.
        var removedProfile: SimulatedProfile?
        /// How many subject links for the MVPD were removed.
        var removedLinks: Int
    }

    /// Removes the caller's profile for `mvpd` and, for single logout (sso.md §2.5 `[F-SLO]`), the links of `subjects`
    /// to that MVPD together with the regular profiles the linking logins left (so the first app is logged out too,
    /// sso.md §3.4 E17).
    func logout(serviceProvider: String, deviceIdentifier: String, clientId: String, mvpd: String, subjects: [SSOSubject]) -> LogoutOutcome {
        let removed = self.removeStoredProfile(self.profileKey(serviceProvider, deviceIdentifier, clientId), mvpd: mvpd, sessionId: nil)
        var links = 0
        for subject in subjects {
            guard var byMVPD = self.ssoLinks[subject], let link = byMVPD.removeValue(forKey: mvpd) else { continue }
            self.ssoLinks[subject] = byMVPD.isEmpty ? nil : byMVPD
            links += 1
            let source = self.profileKey(link.serviceProvider, link.deviceIdentifier, link.clientId)
            self.removeStoredProfile(source, mvpd: mvpd, sessionId: link.profile.sessionId)
        }
        return LogoutOutcome(removedProfile: removed, removedLinks: links)
    }

    /// Removes the profile for `mvpd` under `key` (only if it came from session `sessionId`, when given).
    @discardableResult
    private func removeStoredProfile(_ key: ProfileKey, mvpd: String, sessionId: String?) -> SimulatedProfile? {
        guard let profile = self.profiles[key]?[mvpd], sessionId == nil || profile.sessionId == sessionId else { return nil }
        self.profiles[key]?[mvpd] = nil
        if self.profiles[key]?.isEmpty == true { self.profiles[key] = nil }
        return profile
    }

    // MARK: Inspection

    /// Everything SSO-related, for `GET /_sim/sso`.
    func ssoSnapshot() -> SSOSnapshot {
        let now = self.now
        self.sweepIfDue(now: now)
        var byType: [String: [SSOSnapshot.Profile]] = [:]
        for type in ProfileType.allCases where type != .platformSSO && type != .serviceTokenSSO { byType[type.rawValue] = [] }
        for (key, byMVPD) in self.profiles {
            for (mvpd, profile) in byMVPD where now < profile.notAfter {
                byType[profile.type.rawValue, default: []].append(
                    SSOSnapshot.Profile(
                        serviceProvider: key.serviceProvider,
                        deviceIdentifier: key.deviceIdentifier,
                        clientId: key.clientId,
                        mvpd: mvpd,
                        type: profile.type,
                        issuer: profile.issuer,
                        userId: profile.userId,
                        notBefore: profile.notBefore,
                        notAfter: profile.notAfter
                    )
                )
            }
        }
        for key in byType.keys {
            byType[key]?.sort {
                ($0.serviceProvider, $0.deviceIdentifier, $0.clientId, $0.mvpd) < ($1.serviceProvider, $1.deviceIdentifier, $1.clientId, $1.mvpd)
            }
        }
        var links: [SSOSnapshot.Link] = []
        for (subject, byMVPD) in self.ssoLinks {
            for (mvpd, link) in byMVPD where now < link.profile.notAfter {
                links.append(
                    SSOSnapshot.Link(
                        method: subject.method,
                        issuer: subject.issuer,
                        subject: subject.subject,
                        mvpd: mvpd,
                        serviceProvider: link.serviceProvider,
                        userId: link.profile.userId,
                        notBefore: link.profile.notBefore,
                        notAfter: link.profile.notAfter
                    )
                )
            }
        }
        links.sort { ($0.method.rawValue, $0.issuer, $0.subject, $0.mvpd) < ($1.method.rawValue, $1.issuer, $1.subject, $1.mvpd) }
        let requests = self.partnerRequests.values.filter { !$0.consumed && now < $0.notAfter }.sorted {
            ($0.notBefore, $0.id) < ($1.notBefore, $1.id)
        }
        return SSOSnapshot(profiles: byType, links: links, partnerRequests: requests.map(SSOSnapshot.Request.init))
    }
}
