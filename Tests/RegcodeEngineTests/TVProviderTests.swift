import AccessEnablerAPI
import RegcodeEngine
import Testing

/// The requestor's MVPDs: one per Apple boarding situation.
private enum Fixture {
    static let now: Int64 = 1_800_000_000_000
    static let hour: Int64 = 3_600_000

    /// Onboarded and single sign-on enabled.
    static let cablevision = MVPD(
        id: "Cablevision",
        displayName: "Optimum",
        platformMappingId: "apple.cablevision",
        boardingStatus: .supported,
        enablePlatformServices: true
    )
    /// Onboarded and enabled, second one (for filter ordering).
    static let spectrum = MVPD(
        id: "Spectrum",
        displayName: "Spectrum",
        platformMappingId: "apple.spectrum",
        boardingStatus: .supported,
        enablePlatformServices: true
    )
    /// Picker only (`PICKER`).
    static let dish = MVPD(id: "Dish", displayName: "DISH", platformMappingId: "apple.dish", boardingStatus: .picker)
    /// Not onboarded, but shown in the picker.
    static let frontier = MVPD(
        id: "Frontier",
        displayName: "Frontier",
        platformMappingId: "apple.frontier",
        displayInPlatformPicker: true
    )
    /// Onboarded by Apple, single sign-on off for this requestor.
    static let verizon = MVPD(
        id: "Verizon",
        displayName: "Fios",
        platformMappingId: "apple.verizon",
        boardingStatus: .supported
    )
    /// No platform fields at all.
    static let plain = MVPD(id: "Plain", displayName: "Plain TV")

    static let catalogue = AppleSSOCatalogue(mvpds: [cablevision, spectrum, dish, frontier, verizon, plain])
    static let noSSO = AppleSSOCatalogue(mvpds: [dish, frontier, verizon, plain])

    static let user = TVProviderUser(userID: "u1", householdID: "h1", zip: "10001")
    static func signedIn(_ provider: String = "apple.cablevision", expires: Int64 = now + hour) -> TVProviderAccount {
        TVProviderAccount(providerID: provider, user: user, expiresEpochMs: expires)
    }

    static func state(
        _ account: TVProviderAccount = signedIn(),
        _ access: TVProviderAccess = .granted,
        _ fault: TVProviderFault? = nil
    ) -> TVProviderState {
        TVProviderState(account: account, access: access, fault: fault)
    }
}

@Suite("TVProvider catalogue and picker")
struct TVProviderCatalogueTests {
    @Test func catalogueSplitsSingleSignOnAndPickerProviders() {
        let catalogue = Fixture.catalogue
        #expect(catalogue.ssoMVPDs.map(\.id) == ["Cablevision", "Spectrum"])
        #expect(catalogue.pickerMVPDs.map(\.id) == ["Cablevision", "Spectrum", "Dish", "Frontier", "Verizon"])
        #expect(catalogue.hasSingleSignOn)
        #expect(!Fixture.noSSO.hasSingleSignOn)
        #expect(catalogue.mvpd(forProvider: "apple.dish")?.id == "Dish")
        #expect(catalogue.mvpd(forProvider: "apple.unknown") == nil)
        #expect(catalogue.providerID(forMVPD: "Spectrum") == "apple.spectrum")
        #expect(catalogue.providerID(forMVPD: "Plain") == nil)
        #expect(catalogue.role(ofProvider: "apple.cablevision") == .singleSignOn(Fixture.cablevision))
        #expect(catalogue.role(ofProvider: "apple.dish") == .pickerOnly(Fixture.dish))
        #expect(catalogue.role(ofProvider: "apple.frontier") == .pickerOnly(Fixture.frontier))
        #expect(catalogue.role(ofProvider: "apple.verizon") == .singleSignOnDisabled(Fixture.verizon))
        #expect(catalogue.role(ofProvider: "apple.other") == .notIntegrated)
    }

    @Test func firstMVPDWinsADuplicateProviderID() {
        let twin = MVPD(id: "Twin", displayName: "Twin", platformMappingId: "apple.cablevision", boardingStatus: .picker)
        let catalogue = AppleSSOCatalogue(mvpds: [Fixture.cablevision, twin])
        #expect(catalogue.mvpd(forProvider: "apple.cablevision")?.id == "Cablevision")
    }

    @Test func pickerWithoutFilterShowsEveryPickerProvider() {
        let outcome = AppleSSORules().getAuthentication(
            catalogue: Fixture.catalogue,
            state: Fixture.state(.signedOut),
            now: Fixture.now
        )
        guard case .presentPicker(let picker) = outcome else {
            Issue.record("expected the picker, got \(outcome)")
            return
        }
        #expect(picker.providerIDs == ["apple.cablevision", "apple.spectrum", "apple.dish", "apple.frontier", "apple.verizon"])
        #expect(picker.featured.isEmpty)
        #expect(picker.offers(providerID: "apple.dish"))
        #expect(picker.viewController["kind"] == "VSAccountPicker")
        #expect(picker.viewController["providers"]?.arrayValue?.first?["mvpd"] == "Cablevision")
    }

    @Test func filterOrdersRestrictsAndFeatures() {
        let filter = TVProviderFilter([
            "TV_PROVIDERS": ["Spectrum", "Plain", "Dish", "Nope", "Spectrum"],
            "FEATURED_TV_PROVIDERS": ["Dish", "Cablevision"],
        ])
        #expect(filter.providers == ["Spectrum", "Plain", "Dish", "Nope", "Spectrum"])
        let picker = AppleSSORules().picker(catalogue: Fixture.catalogue, filter: filter)
        // Order of the filter, non-picker and unknown ids ignored, duplicates once.
        #expect(picker.providers.map(\.id) == ["Spectrum", "Dish"])
        // Featured: a subset of the shown providers.
        #expect(picker.featured.map(\.id) == ["Dish"])
        #expect(picker.featuredProviderIDs == ["apple.dish"])
    }

    @Test func flatListFilterOfOlderAccessEnablers() {
        let filter = TVProviderFilter(["Dish", "Cablevision"])
        #expect(filter == TVProviderFilter(providers: ["Dish", "Cablevision"]))
        let picker = AppleSSORules().picker(catalogue: Fixture.catalogue, filter: filter)
        #expect(picker.providers.map(\.id) == ["Dish", "Cablevision"])
    }

    @Test func filterLeavingNothingShowsAllUnlessConfiguredOtherwise() {
        let filter = TVProviderFilter(providers: ["Plain"])
        #expect(AppleSSORules().picker(catalogue: Fixture.catalogue, filter: filter).providers.count == 5)
        var strict = AppleSSORules()
        strict.emptyFilterShowsAll = false
        #expect(strict.picker(catalogue: Fixture.catalogue, filter: filter).providers.isEmpty)
        #expect(
            strict.getAuthentication(catalogue: Fixture.catalogue, state: Fixture.state(.signedOut), filter: filter, now: Fixture.now)
                == .classic
        )
    }

    @Test func filterIsIgnoredWithoutSingleSignOnMVPDs() {
        let filter = TVProviderFilter(providers: ["Dish"])
        #expect(
            AppleSSORules().getAuthentication(catalogue: Fixture.noSSO, state: Fixture.state(.signedOut), filter: filter, now: Fixture.now)
                == .classic
        )
    }
}

@Suite("TVProvider decisions")
struct TVProviderDecisionTests {
    let rules = AppleSSORules()
    let catalogue = Fixture.catalogue
    let now = Fixture.now

    // E7
    @Test func apple_silentExchange_onlySetRequestorComplete() {
        #expect(
            rules.setRequestor(catalogue: catalogue, state: Fixture.state(), alreadyAuthenticated: false, now: now)
                == .silentExchange(Fixture.cablevision)
        )
        // A valid Adobe token keeps its remaining TTL: no new exchange.
        #expect(rules.setRequestor(catalogue: catalogue, state: Fixture.state(), alreadyAuthenticated: true, now: now) == .none)
        // Signed in to a provider that is not a single sign-on MVPD of this requestor.
        for provider in ["apple.dish", "apple.verizon", "apple.unknown"] {
            #expect(
                rules.setRequestor(
                    catalogue: catalogue,
                    state: Fixture.state(Fixture.signedIn(provider)),
                    alreadyAuthenticated: false,
                    now: now
                ) == .none
            )
        }
        // Expired Apple sign-in, or nobody signed in.
        let expired = Fixture.state(Fixture.signedIn(expires: now))
        #expect(rules.setRequestor(catalogue: catalogue, state: expired, alreadyAuthenticated: false, now: now) == .none)
        #expect(
            rules.setRequestor(catalogue: catalogue, state: Fixture.state(.signedOut), alreadyAuthenticated: false, now: now) == .none
        )
    }

    @Test func noSingleSignOnMVPD_noAppleStatusAnywhere() {
        let denied = Fixture.state(Fixture.signedIn(), .denied, TVProviderFault(.serviceTemporarilyUnavailable))
        #expect(rules.setRequestor(catalogue: Fixture.noSSO, state: denied, alreadyAuthenticated: false, now: now) == .none)
        #expect(rules.checkAuthentication(catalogue: Fixture.noSSO, state: denied).isEmpty)
        #expect(rules.getAuthentication(catalogue: Fixture.noSSO, state: denied, now: now) == .classic)
    }

    // E11
    @Test func apple_permission_VSA403_VSA404_atEachStep() {
        let cases: [(TVProviderAccess, StatusID)] = [
            (.denied, .tvProviderAccessDenied),
            (.restricted, .tvProviderAccessDenied),
            (.notDetermined, .tvProviderAccessUndetermined),
        ]
        for (access, id) in cases {
            let state = Fixture.state(Fixture.signedIn(), access)
            // setRequestor: the status, no exchange.
            guard case .status(let report) = rules.setRequestor(catalogue: catalogue, state: state, alreadyAuthenticated: false, now: now)
            else {
                Issue.record("setRequestor: expected a status for \(access)")
                continue
            }
            #expect(report.id == id)
            #expect(report.level == .info)
            // checkAuthentication: the status only when signed in at system level.
            #expect(rules.checkAuthentication(catalogue: catalogue, state: state).map(\.id) == [id])
            #expect(rules.checkAuthentication(catalogue: catalogue, state: Fixture.state(.signedOut, access)).isEmpty)
            // getAuthentication: status, then displayProviderDialog (signed in or not).
            for account in [Fixture.signedIn(), .signedOut] {
                let outcome = rules.getAuthentication(catalogue: catalogue, state: Fixture.state(account, access), now: now)
                #expect(outcome.statuses.map(\.id) == [id])
                guard case .statusThenProviderDialog = outcome else {
                    Issue.record("getAuthentication: expected status then provider dialog for \(access)")
                    continue
                }
            }
        }
        let granted = Fixture.state()
        #expect(rules.checkAuthentication(catalogue: catalogue, state: granted).isEmpty)
    }

    @Test func permissionStatusDictionaries() {
        let statuses = AppleSSOStatuses()
        let undetermined = statuses.permission(.notDetermined)
        #expect(undetermined?.message == "Application Video Subscriber Account permission is undetermined.")
        #expect(undetermined?.level == .info)
        #expect(statuses.permission(.denied)?.message == "Application Video Subscriber Account permission is denied.")
        #expect(statuses.permission(.granted) == nil)
        // restricted → VSA403 is INFERRED and configurable.
        var other = AppleSSORules()
        other.statuses.restrictedStatus = .tvProviderAccessUndetermined
        let outcome = other.setRequestor(
            catalogue: catalogue,
            state: Fixture.state(Fixture.signedIn(), .restricted),
            alreadyAuthenticated: false,
            now: now
        )
        #expect(outcome.statuses.map(\.id) == [.tvProviderAccessUndetermined])
    }

    @Test func apple_fault_APPL_VSA503() {
        let fault = TVProviderFault(.serviceTemporarilyUnavailable)
        let state = Fixture.state(Fixture.signedIn(), .granted, fault)
        let details = "VSErrorDomain 3: The TV provider service is temporarily unavailable."
        #expect(fault.details == details)

        let atSetRequestor = rules.setRequestor(catalogue: catalogue, state: state, alreadyAuthenticated: false, now: now)
        #expect(
            atSetRequestor
                == .status(
                    StatusReport(id: .appleSSOError, level: .error, message: "Video Subscriber Account error.", extra: ["details": .string(details)])
                )
        )
        #expect(StatusID.appleSSOError.rawValue == "APPL")

        let atCheck = rules.checkAuthentication(catalogue: catalogue, state: state)
        #expect(atCheck.map(\.id) == [.appleSSOAuthenticationError])
        #expect(atCheck.first?.level == .error)
        #expect(atCheck.first?.extra["details"] == .string(details))
        #expect(StatusID.appleSSOAuthenticationError.rawValue == "APPL_ERROR")
        // Not signed in at system level: no APPL_ERROR.
        #expect(rules.checkAuthentication(catalogue: catalogue, state: Fixture.state(.signedOut, .granted, fault)).isEmpty)

        let atGet = rules.getAuthentication(catalogue: catalogue, state: state, now: now)
        guard case .statusThenProviderDialog(let report) = atGet else {
            Issue.record("expected VSA503 then displayProviderDialog, got \(atGet)")
            return
        }
        #expect(report.id == .tvProviderUnavailable)
        #expect(report.id.rawValue == "VSA503")
        #expect(report.level == .info)
        #expect(report.message == "Video Subscriber Account metadata request failed: The TV provider service is temporarily unavailable.")
    }

    @Test func faultCodesAndOnceFaults() {
        #expect(TVProviderFault.Kind.allCases.compactMap(\.code) == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(TVProviderFault(.noSAMLResponse).details.hasPrefix("VSAccountMetadata: "))
        #expect(TVProviderFault(.providerRejected).details == "VSErrorDomain 4: The TV provider rejected the request.")

        var once = Fixture.state(Fixture.signedIn(), .granted, TVProviderFault(.providerRejected, once: true))
        let first = rules.setRequestor(catalogue: catalogue, state: once, alreadyAuthenticated: false, now: now)
        #expect(first.statuses.map(\.id) == [.appleSSOError])
        once.consumeFault(reportedIn: first.statuses)
        #expect(once.fault == nil)
        #expect(rules.setRequestor(catalogue: catalogue, state: once, alreadyAuthenticated: false, now: now) == .silentExchange(Fixture.cablevision))

        var sticky = Fixture.state(Fixture.signedIn(), .granted, TVProviderFault(.providerRejected))
        sticky.consumeFault(reportedIn: rules.checkAuthentication(catalogue: catalogue, state: sticky))
        #expect(sticky.fault == TVProviderFault(.providerRejected))

        // A status that does not report the fault does not spend it.
        var unreported = Fixture.state(Fixture.signedIn(), .granted, TVProviderFault(.providerRejected, once: true))
        unreported.consumeFault(reportedIn: [AppleSSOStatuses().otherProvider])
        #expect(unreported.fault != nil)
    }

    // E8
    @Test func apple_picker_supported() {
        let signedOut = Fixture.state(.signedOut)
        guard case .presentPicker = rules.getAuthentication(catalogue: catalogue, state: signedOut, now: now) else {
            Issue.record("expected the picker")
            return
        }
        #expect(
            rules.pick(.provider("apple.spectrum"), catalogue: catalogue, account: .signedOut, now: now)
                == .exchange(Fixture.spectrum, signsIn: true)
        )
        // Already validly signed in to that provider: no new sign-in.
        #expect(
            rules.pick(.provider("apple.cablevision"), catalogue: catalogue, account: Fixture.signedIn(), now: now)
                == .exchange(Fixture.cablevision, signsIn: false)
        )
        // Signed in to another provider, or expired: the picker signs in.
        #expect(
            rules.pick(.provider("apple.spectrum"), catalogue: catalogue, account: Fixture.signedIn(), now: now)
                == .exchange(Fixture.spectrum, signsIn: true)
        )
        #expect(
            rules.pick(.provider("apple.cablevision"), catalogue: catalogue, account: Fixture.signedIn(expires: now - 1), now: now)
                == .exchange(Fixture.cablevision, signsIn: true)
        )
        #expect(rules.pick(.provider("apple.spectrum"), catalogue: catalogue, account: .signedOut, now: now).statuses.isEmpty)
    }

    @Test func signedInAfterSetRequestor_getAuthenticationExchangesWithoutPicker() {
        #expect(rules.getAuthentication(catalogue: catalogue, state: Fixture.state(), now: now) == .silentExchange(Fixture.cablevision))
        var always = AppleSSORules()
        always.signedInSkipsPicker = false
        guard case .presentPicker = always.getAuthentication(catalogue: catalogue, state: Fixture.state(), now: now) else {
            Issue.record("expected the picker")
            return
        }
        // Expired sign-in: the picker.
        guard
            case .presentPicker = rules.getAuthentication(
                catalogue: catalogue,
                state: Fixture.state(Fixture.signedIn(expires: now)),
                now: now
            )
        else {
            Issue.record("expected the picker")
            return
        }
    }

    // E9, KB-16609
    @Test func apple_picker_pickerOnly_regcode() {
        #expect(rules.pick(.provider("apple.dish"), catalogue: catalogue, account: .signedOut, now: now) == .pickerOnly(Fixture.dish))
        let frontier = rules.pick(.provider("apple.frontier"), catalogue: catalogue, account: .signedOut, now: now)
        #expect(frontier == .pickerOnly(Fixture.frontier))
        // No status code on this path (DOC `[ASSO]`: "no code").
        #expect(frontier.statuses.isEmpty)
    }

    // E10
    @Test func apple_N003() {
        let outcome = rules.pick(.other, catalogue: catalogue, account: .signedOut, now: now)
        guard case .other(let report) = outcome else {
            Issue.record("expected N003, got \(outcome)")
            return
        }
        #expect(report.id.rawValue == "N003")
        #expect(report.level == .info)
    }

    @Test func apple_N004() {
        for provider in ["apple.verizon", "apple.unknown"] {
            let outcome = rules.pick(.provider(provider), catalogue: catalogue, account: .signedOut, now: now)
            guard case .unsupported(let report) = outcome else {
                Issue.record("expected N004 for \(provider), got \(outcome)")
                continue
            }
            #expect(report.id == .tvProviderNotSupported)
            #expect(report.id.rawValue == "N004")
            #expect(report.level == .info)
        }
    }

    @Test func apple_N005() {
        let outcome = rules.pick(.cancel, catalogue: catalogue, account: Fixture.signedIn(), now: now)
        #expect(
            outcome
                == .cancelled(
                    StatusReport(id: .providerSelectionCancelled, level: .info, message: "authentication cancelled", extra: [:]),
                    errorCode: .providerNotSelected
                )
        )
        #expect(ErrorCode.providerNotSelected.rawValue == "Provider Not Selected Error")
    }

    // E12
    @Test func apple_logout_VSA203_onlyForAppleTokens() {
        let report = rules.logout(tokenSource: .apple)
        #expect(report?.id.rawValue == "VSA203")
        #expect(report?.level == .info)
        #expect(rules.logout(tokenSource: .adobe) == nil)
        #expect(rules.logout(tokenSource: nil) == nil)
        #expect(TokenSource.apple.userMetadataValue == "Apple")
        #expect(TokenSource.adobe.userMetadataValue == nil)
        // The account is untouched by logout: the relaunch exchanges again.
        #expect(
            rules.setRequestor(catalogue: catalogue, state: Fixture.state(), alreadyAuthenticated: false, now: now)
                == .silentExchange(Fixture.cablevision)
        )
    }

    @Test func apple_ttl_fourCells() {
        let appleValid = Fixture.signedIn(expires: now + Fixture.hour)
        let appleExpired = Fixture.signedIn(expires: now - 1)
        let adobeValid = now + 10 * 60_000
        let adobeExpired = now - 1
        #expect(rules.ttlCell(account: appleExpired, adobeNotAfter: adobeValid, now: now) == .authenticated(remainingMs: 600_000))
        #expect(rules.ttlCell(account: appleValid, adobeNotAfter: adobeValid, now: now) == .authenticated(remainingMs: 600_000))
        #expect(rules.ttlCell(account: appleValid, adobeNotAfter: adobeExpired, now: now) == .silentReexchange)
        #expect(rules.ttlCell(account: appleExpired, adobeNotAfter: adobeExpired, now: now) == .notAuthenticated)
        // No token at all behaves as an expired one; signed out as expired.
        #expect(rules.ttlCell(account: appleValid, adobeNotAfter: nil, now: now) == .silentReexchange)
        #expect(rules.ttlCell(account: .signedOut, adobeNotAfter: nil, now: now) == .notAuthenticated)
        // Expiry instants are exclusive.
        #expect(rules.ttlCell(account: Fixture.signedIn(expires: now), adobeNotAfter: now, now: now) == .notAuthenticated)
    }

    @Test func statusIdsAndCallbacks() {
        let ids: [StatusID] = [
            .tvProviderSignOutRequired, .tvProviderAccessDenied, .tvProviderAccessUndetermined, .tvProviderUnavailable,
            .appleSSOError, .appleSSOAuthenticationError, .otherTVProviderSelected, .tvProviderNotSupported,
            .providerSelectionCancelled,
        ]
        #expect(ids.map(\.rawValue) == ["VSA203", "VSA403", "VSA404", "VSA503", "APPL", "APPL_ERROR", "N003", "N004", "N005"])
        #expect(Callback(rawValue: "presentTvProviderDialog") == .presentTvProviderDialog)
        #expect(Callback(rawValue: "dismissTvProviderDialog") == .dismissTvProviderDialog)
    }
}
