import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

@Suite("TVProvider AP-Partner-Framework-Status")
struct TVProviderPartnerFrameworkStatusTests {
    static let account = TVProviderAccount(
        providerID: "Cablevision",
        user: TVProviderUser(userID: "u1"),
        expiresEpochMs: 2_025_430_636_000
    )

    static func decoded(_ header: String) -> String? {
        Data(base64Encoded: header).flatMap { String(data: $0, encoding: .utf8) }
    }

    @Test func grantedSignedInMatchesTheDocSample() {
        let status = PartnerFrameworkStatus(state: TVProviderState(account: Self.account, access: .granted))
        #expect(
            Self.decoded(status.headerValue)
                == #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"expirationDate":"2025430636000","id":"Cablevision"}}"#
        )
        #expect(PartnerFrameworkStatus.headerName == "AP-Partner-Framework-Status")
    }

    @Test func notGrantedOrSignedOutSendsEmptyProviderInfo() {
        for access in [TVProviderAccess.denied, .restricted, .notDetermined] {
            let status = PartnerFrameworkStatus(state: TVProviderState(account: Self.account, access: access))
            #expect(
                Self.decoded(status.headerValue)
                    == #"{"frameworkPermissionInfo":{"accessStatus":"\#(access.rawValue)"},"frameworkProviderInfo":{}}"#
            )
        }
        let signedOut = PartnerFrameworkStatus(state: TVProviderState(account: .signedOut, access: .granted))
        #expect(signedOut.providerID == nil)
        #expect(signedOut.expirationDateMs == nil)
    }

    @Test func faultsBecomeErrors() {
        let provider = PartnerFrameworkStatus(
            state: TVProviderState(account: Self.account, access: .granted, fault: TVProviderFault(.serviceTemporarilyUnavailable))
        )
        #expect(provider.providerError == .init(code: "3", message: "The TV provider service is temporarily unavailable."))
        #expect(provider.providerID == nil)
        #expect(provider.permissionError == nil)
        let permission = PartnerFrameworkStatus(
            state: TVProviderState(account: Self.account, access: .granted, fault: TVProviderFault(.accessNotGranted))
        )
        #expect(permission.permissionError?.code == "0")
        #expect(permission.providerError == nil)
        let noMetadata = PartnerFrameworkStatus(
            state: TVProviderState(account: Self.account, access: .granted, fault: TVProviderFault(.noMetadata))
        )
        #expect(noMetadata.providerError?.code == "noMetadata")
    }

    @Test(arguments: [
        PartnerFrameworkStatus(state: TVProviderState(account: TVProviderPartnerFrameworkStatusTests.account, access: .granted)),
        PartnerFrameworkStatus(state: TVProviderState(account: TVProviderPartnerFrameworkStatusTests.account, access: .denied)),
        PartnerFrameworkStatus(
            state: TVProviderState(
                account: TVProviderPartnerFrameworkStatusTests.account,
                access: .granted,
                fault: TVProviderFault(.providerRejected)
            )
        ),
        PartnerFrameworkStatus(
            state: TVProviderState(
                account: TVProviderPartnerFrameworkStatusTests.account,
                access: .granted,
                fault: TVProviderFault(.accessNotGranted)
            )
        ),
        PartnerFrameworkStatus(accessStatus: nil),
    ])
    func roundTrip(status: PartnerFrameworkStatus) {
        #expect(PartnerFrameworkStatus(headerValue: status.headerValue) == status)
    }

    @Test func parsesNumbersUnknownValuesAndRejectsGarbage() {
        let json = #"{"frameworkPermissionInfo":{"accessStatus":"maybe"},"frameworkProviderInfo":{"id":"X","expirationDate":1735689600000}}"#
        let parsed = PartnerFrameworkStatus(headerValue: Data(json.utf8).base64EncodedString())
        #expect(parsed == PartnerFrameworkStatus(accessStatus: nil, providerID: "X", expirationDateMs: 1_735_689_600_000))
        #expect(PartnerFrameworkStatus(headerValue: "not base64!") == nil)
        #expect(PartnerFrameworkStatus(headerValue: Data("[1]".utf8).base64EncodedString()) == nil)
        // The doc's fallback sample.
        let fallback = #"{"frameworkPermissionInfo":{"accessStatus":"denied"},"frameworkProviderInfo":{}}"#
        #expect(
            PartnerFrameworkStatus(headerValue: Data(fallback.utf8).base64EncodedString()) == PartnerFrameworkStatus(accessStatus: .denied)
        )
    }
}

@Suite("TVProvider MVPD platform fields")
struct TVProviderMVPDCodingTests {
    @Test func olderSnapshotsDecodeWithDefaults() throws {
        let old = #"{"id":"A","displayName":"Alpha","logoURL":"l"}"#
        let mvpd = try JSONDecoder().decode(MVPD.self, from: Data(old.utf8))
        #expect(mvpd == MVPD(id: "A", displayName: "Alpha", logoURL: "l"))
        #expect(mvpd.platformMappingId == nil)
        #expect(mvpd.boardingStatus == nil)
        #expect(!mvpd.enablePlatformServices)
        #expect(!mvpd.displayInPlatformPicker)
        #expect(mvpd.enforcePlatformPermissions)
    }

    @Test func platformFieldsRoundTripAndUnknownBoardingStatusIsNil() throws {
        let mvpd = MVPD(
            id: "A",
            displayName: "Alpha",
            platformMappingId: "apple.a",
            boardingStatus: .picker,
            enablePlatformServices: true,
            displayInPlatformPicker: true,
            enforcePlatformPermissions: false
        )
        let data = try JSONEncoder().encode(mvpd)
        #expect(try JSONDecoder().decode(MVPD.self, from: data) == mvpd)
        let odd = #"{"id":"A","displayName":"Alpha","boardingStatus":"ONBOARDING"}"#
        #expect(try JSONDecoder().decode(MVPD.self, from: Data(odd.utf8)).boardingStatus == nil)
    }
}
