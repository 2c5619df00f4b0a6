import AdobePassClient
import Foundation
import RegcodeEngine
import Testing

/// Single sign-on answers of REST v2 (sso.md §2.1–§2.4): SSO profile types and `authorize`/`authenticatedSSO`.
@Suite("AdobePassResponseParser: single sign-on")
struct SSOProfileParsingTests {
    static func parse(_ request: BackendRequest, _ body: String) -> Result<BackendResponse, BackendFailure> {
        ResponseParsingTests.parse(request, body)
    }

    @Test(arguments: ["platformSSO", "serviceTokenSSO", "appleSSO"])
    func singleSignOnProfileIsAdoptedAndCountsAsAuthenticated(type: String) {
        let body = #"""
            {"profiles":{"Comcast_SSO":{"notBefore":1724337476000,"notAfter":1724345252000,"issuer":"Comcast_SSO","type":"\#(type)",
              "attributes":{"upstreamUserID":{"value":"3852","state":"plain"},"userID":{"value":"u-1","state":"plain"},
              "mvpd":{"value":"Comcast_SSO","state":"plain"}}}}}
            """#
        #expect(
            Self.parse(.fetchProfile(mvpd: "Comcast_SSO"), body)
                == .success(
                    .profile(
                        AuthProfile(
                            mvpd: "Comcast_SSO",
                            userID: "u-1",
                            expiresEpochMs: 1_724_345_252_000,
                            source: type == "appleSSO" ? .apple : .adobe,
                            type: ProfileType(rawValue: type)
                        )
                    )
                )
        )
        #expect(Self.parse(.checkAuthentication, body) == .success(.authenticationStatus(true)))
    }

    @Test func regularBeatsSingleSignOnWhichBeatsTemporary() {
        let body = #"""
            {"profiles":{
              "TempPass":{"notAfter":9000000000000,"type":"temporary","attributes":{}},
              "Comcast_SSO":{"notAfter":8000000000000,"type":"platformSSO","attributes":{}},
              "Spectrum":{"notAfter":1783685280000,"type":"regular","attributes":{}}}}
            """#
        #expect(
            Self.parse(.fetchProfile(mvpd: "Other"), body)
                == .success(.profile(AuthProfile(mvpd: "Spectrum", userID: nil, expiresEpochMs: 1_783_685_280_000)))
        )
        let withoutRegular = #"""
            {"profiles":{
              "TempPass":{"notAfter":9000000000000,"type":"temporary","attributes":{}},
              "Comcast_SSO":{"notAfter":8000000000000,"type":"serviceTokenSSO","attributes":{}}}}
            """#
        #expect(
            Self.parse(.fetchProfile(mvpd: "Other"), withoutRegular)
                == .success(.profile(AuthProfile(mvpd: "Comcast_SSO", userID: nil, expiresEpochMs: 8_000_000_000_000, type: .serviceTokenSSO)))
        )
    }

    @Test(arguments: ["authenticated", "authenticatedSSO", "none", "degraded"])
    func sessionsAuthorizeWithAnyReasonMeansAlreadyAuthenticated(reason: String) {
        let body = #"""
            {"actionName":"authorize","actionType":"direct","reasonType":"\#(reason)","mvpd":"Comcast_SSO",
             "serviceProvider":"REF30","url":"/api/v2/REF30/decisions/authorize/Comcast_SSO"}
            """#
        #expect(Self.parse(.createSession(mvpd: "Comcast_SSO"), body) == .success(.alreadyAuthenticated(mvpd: "Comcast_SSO")))
        #expect(Self.parse(.createSession(mvpd: nil), body) == .success(.alreadyAuthenticated(mvpd: "Comcast_SSO")))
    }
}
