import AdobePassClient
import Foundation
import RegcodeEngine
import Testing

/// Answers to authorization, preauthorization, metadata, logout and profile calls, REST v2 and v1.
@Suite("AdobePassResponseParser entitlements")
struct EntitlementParsingTests {
    static func parse(
        _ request: BackendRequest,
        profile: APIProfile = .v2,
        status: Int = 200,
        _ body: String
    ) -> Result<BackendResponse, BackendFailure> {
        ResponseParsingTests.parse(request, profile: profile, status: status, body)
    }

    static let details = #"Your subscription package does not include the "Live" channel"#

    // MARK: v2

    @Test func sessionsAnsweringAuthorizeMeansAlreadyAuthenticated() {
        let body =
            #"{"actionName":"authorize","actionType":"direct","reasonType":"authenticated","url":"/api/v2/REF30/decisions/authorize/DTV","mvpd":"DTV","serviceProvider":"REF30"}"#
        #expect(Self.parse(.createSession(mvpd: "Cablevision"), body) == .success(.alreadyAuthenticated(mvpd: "DTV")))
    }

    @Test func grantedDecisionCarriesTheMediaToken() {
        let body = #"""
            {"decisions":[{"resource":"Live","serviceProvider":"REF30","mvpd":"Cablevision","source":"mvpd","authorized":true,
              "token":{"notBefore":1697094207324,"notAfter":1697094802367,"serializedToken":"PHNpZ25hdHVyZUluZm8..."},
              "notBefore":1697094207324,"notAfter":1697098802367}]}
            """#
        let token = MediaToken(resource: "Live", serializedToken: "PHNpZ25hdHVyZUluZm8...", expiresEpochMs: 1_697_094_802_367)
        #expect(
            Self.parse(.authorize(mvpd: "Cablevision", resource: "Live"), body)
                == .success(
                    .authorization(
                        AuthorizationDecision(resource: "Live", authorized: true, expiresEpochMs: 1_697_098_802_367, token: token, source: .mvpd)
                    )
                )
        )
        #expect(Self.parse(.mediaToken(mvpd: "Cablevision", resource: "Live"), body) == .success(.mediaToken(token)))
    }

    @Test func deniedDecisionIsAnAnswerWithTheMVPDsDetails() {
        let body = #"""
            {"decisions":[{"resource":"Live","serviceProvider":"REF30","mvpd":"Cablevision","source":"mvpd","authorized":false,
              "error":{"action":"none","status":403,"code":"authorization_denied_by_mvpd","message":"Denied","details":"Your subscription package does not include the \"Live\" channel"}}]}
            """#
        let error = EnhancedError(status: 403, code: "authorization_denied_by_mvpd", action: "none", message: "Denied", details: Self.details)
        let denied = AuthorizationDecision(resource: "Live", authorized: false, error: error, source: .mvpd)
        #expect(Self.parse(.authorize(mvpd: "Cablevision", resource: "Live"), body) == .success(.authorization(denied)))
        // tokens/media on v2 is the same decision; a denial stays a denial.
        #expect(Self.parse(.mediaToken(mvpd: "Cablevision", resource: "Live"), body) == .success(.authorization(denied)))
    }

    @Test func missingProfileIsATopLevelFailure() {
        let body =
            #"{"action":"authentication","status":403,"code":"authenticated_profile_missing","message":"The authenticated profile is missing"}"#
        #expect(
            Self.parse(.authorize(mvpd: "Cablevision", resource: "Live"), status: 403, body)
                == .failure(
                    .http(
                        status: 403,
                        retryAfter: nil,
                        error: EnhancedError(
                            status: 403,
                            code: "authenticated_profile_missing",
                            action: "authentication",
                            message: "The authenticated profile is missing"
                        )
                    )
                )
        )
    }

    @Test func preauthorizationListsEveryDecision() {
        let body =
            #"{"decisions":[{"resource":"a","authorized":true},{"resource":"b","authorized":false,"error":{"code":"preauthorization_denied_by_mvpd"}}]}"#
        #expect(
            Self.parse(.preauthorize(mvpd: "Cablevision", resources: ["a", "b"]), body)
                == .success(
                    .preauthorization([
                        AuthorizationDecision(resource: "a", authorized: true),
                        AuthorizationDecision(resource: "b", authorized: false, error: EnhancedError(code: "preauthorization_denied_by_mvpd")),
                    ])
                )
        )
    }

    @Test func profileAttributesAreUserMetadata() {
        let body = #"""
            {"profiles":{"Cablevision":{"notBefore":1,"notAfter":2,"issuer":"Cablevision","type":"regular",
              "attributes":{"zip":{"value":["10001","10002"],"state":"plain"},"encryptedZip":{"value":"MTAwMDE=","state":"enc"},
                            "maxRating":{"value":{"MPAA":"R"},"state":"plain"}}}}}
            """#
        #expect(
            Self.parse(.userMetadata(mvpd: "Cablevision"), body)
                == .success(
                    .userMetadata(
                        UserMetadata(
                            values: ["zip": ["10001", "10002"], "encryptedZip": "MTAwMDE=", "maxRating": ["MPAA": "R"]],
                            encrypted: ["encryptedZip"]
                        )
                    )
                )
        )
        #expect(Self.parse(.userMetadata(mvpd: "Cablevision"), #"{"profiles":{}}"#) == .success(.userMetadata(nil)))
    }

    @Test func profilesPreferTheRequestedMVPD() {
        let body = #"""
            {"profiles":{"Cablevision":{"notBefore":1,"notAfter":9000000000000,"type":"regular","attributes":{}},
                         "DTV":{"notBefore":1,"notAfter":2000000000000,"type":"regular","attributes":{"userID":{"value":"u","state":"plain"}}}}}
            """#
        #expect(
            Self.parse(.fetchProfile(mvpd: "DTV"), body)
                == .success(.profile(AuthProfile(mvpd: "DTV", userID: "u", expiresEpochMs: 2_000_000_000_000)))
        )
        #expect(
            Self.parse(.pollProfile(code: "C", mvpd: "DTV"), body)
                == .success(.profile(AuthProfile(mvpd: "DTV", userID: "u", expiresEpochMs: 2_000_000_000_000)))
        )
        // Without a preference the longest-lived regular profile wins, as before.
        #expect(
            Self.parse(.pollProfile(code: "C"), body)
                == .success(.profile(AuthProfile(mvpd: "Cablevision", userID: nil, expiresEpochMs: 9_000_000_000_000)))
        )
        #expect(Self.parse(.checkAuthentication, body) == .success(.authenticationStatus(true)))
        #expect(Self.parse(.checkAuthentication, #"{"profiles":{}}"#) == .success(.authenticationStatus(false)))
    }

    @Test func logoutAnswer() {
        let body =
            #"{"logouts":{"Cablevision":{"actionName":"logout","actionType":"interactive","mvpd":"Cablevision","url":"http://x/adobe-services/logout"}}}"#
        #expect(
            Self.parse(.logout(mvpd: "Cablevision"), body)
                == .success(
                    .logoutInstructions([
                        LogoutInstruction(mvpd: "Cablevision", action: .logout, actionType: "interactive", url: "http://x/adobe-services/logout")
                    ])
                )
        )
        let answers =
            #"{"logouts":{"A":{"actionName":"partner_logout","actionType":"partner_interactive","mvpd":"A"},"B":{"actionName":"invalid","actionType":"none","mvpd":"B"}}}"#
        #expect(
            Self.parse(.logout(mvpd: "A"), answers)
                == .success(
                    .logoutInstructions([
                        LogoutInstruction(mvpd: "A", action: .partnerLogout, actionType: "partner_interactive"),
                        LogoutInstruction(mvpd: "B", action: .invalid, actionType: "none"),
                    ])
                )
        )
    }

    // MARK: v1

    @Test func v1AuthorizationThenMediaToken() {
        let authz = #"{"mvpd":"Cablevision","resource":"Live","requestor":"REF30","expires":"1348148289000"}"#
        #expect(
            Self.parse(.authorize(mvpd: "Cablevision", resource: "Live"), profile: .v1, authz)
                == .success(.authorization(AuthorizationDecision(resource: "Live", authorized: true, expiresEpochMs: 1_348_148_289_000)))
        )
        let media =
            #"{"resource":"Live","requestor":"REF30","expires":"1348649614000","serializedToken":"PHNpZ25hdH","userId":"u","mvpdId":"Cablevision"}"#
        #expect(
            Self.parse(.mediaToken(mvpd: "Cablevision", resource: "Live"), profile: .v1, media)
                == .success(.mediaToken(MediaToken(resource: "Live", serializedToken: "PHNpZ25hdH", expiresEpochMs: 1_348_649_614_000)))
        )
    }

    @Test func v1DenialIsAnAnswerWithTheDetails() {
        let body = #"{"status":403,"message":"User not authorized","details":"Your subscription package does not include the \"Live\" channel"}"#
        let denied = AuthorizationDecision(
            resource: "Live",
            authorized: false,
            error: EnhancedError(
                status: 403,
                code: "authorization_denied_by_mvpd",
                action: ErrorAction.none,
                message: "User not authorized",
                details: Self.details
            )
        )
        #expect(Self.parse(.authorize(mvpd: "Cablevision", resource: "Live"), profile: .v1, status: 403, body) == .success(.authorization(denied)))
        #expect(Self.parse(.mediaToken(mvpd: "Cablevision", resource: "Live"), profile: .v1, status: 403, body) == .success(.authorization(denied)))
    }

    @Test(arguments: [
        (#"{"status":403,"message":"User not Authenticated","details":null}"#, "authentication_session_missing"),
        (#"{"status":403,"message":"User not Authenticated","details":"Authentication token expired"}"#, "authentication_session_expired"),
    ])
    func v1NotAuthenticatedMapsToTheV1EnhancedCode(body: String, code: String) {
        guard
            case .failure(.http(403, nil, let error?)) = Self.parse(
                .authorize(mvpd: "Cablevision", resource: "Live"),
                profile: .v1,
                status: 403,
                body
            )
        else {
            Issue.record("expected .http(403) with an error")
            return
        }
        #expect(error.code == code)
        #expect(error.message == "User not Authenticated")
    }

    @Test func v1PreauthorizationAndItsFailures() {
        let body =
            #"{"resources":[{"id":"Live","authorized":true},{"id":"Movies","authorized":false,"error":{"status":403,"code":"authorization_denied_by_mvpd","details":"no"}}]}"#
        #expect(
            Self.parse(.preauthorize(mvpd: "Cablevision", resources: ["Live", "Movies"]), profile: .v1, body)
                == .success(
                    .preauthorization([
                        AuthorizationDecision(resource: "Live", authorized: true),
                        AuthorizationDecision(
                            resource: "Movies",
                            authorized: false,
                            error: EnhancedError(status: 403, code: "authorization_denied_by_mvpd", details: "no")
                        ),
                    ])
                )
        )
        let notAuthenticated = Self.parse(
            .preauthorize(mvpd: "C", resources: ["Live"]),
            profile: .v1,
            status: 412,
            #"{"status":412,"message":"User not authenticated","details":null}"#
        )
        #expect(
            notAuthenticated
                == .failure(
                    .http(
                        status: 412,
                        retryAfter: nil,
                        error: EnhancedError(
                            status: 412,
                            code: "authentication_session_missing",
                            action: .authentication,
                            message: "User not authenticated"
                        )
                    )
                )
        )
    }

    @Test func v1UserMetadataStates() {
        let body = #"{"updated":1334243471,"encrypted":["encryptedZip"],"data":{"zip":["12345","34567"],"householdID":"3456","encryptedZip":"abc"}}"#
        #expect(
            Self.parse(.userMetadata(mvpd: "C"), profile: .v1, body)
                == .success(
                    .userMetadata(
                        UserMetadata(values: ["zip": ["12345", "34567"], "householdID": "3456", "encryptedZip": "abc"], encrypted: ["encryptedZip"])
                    )
                )
        )
        #expect(
            Self.parse(.userMetadata(mvpd: "C"), profile: .v1, status: 404, #"{"status":404,"message":"Not Found"}"#)
                == .success(.userMetadata(UserMetadata()))
        )
        #expect(
            Self.parse(.userMetadata(mvpd: "C"), profile: .v1, status: 412, #"{"status":412,"message":"User not authenticated"}"#)
                == .success(.userMetadata(nil))
        )
    }

    @Test func v1StatusOnlyAnswers() {
        #expect(Self.parse(.logout(mvpd: "C"), profile: .v1, status: 204, "") == .success(.loggedOut))
        #expect(Self.parse(.checkAuthentication, profile: .v1, status: 200, "") == .success(.authenticationStatus(true)))
        #expect(
            Self.parse(.checkAuthentication, profile: .v1, status: 403, "<error><status>403</status><message>Not Authenticated</message></error>")
                == .success(.authenticationStatus(false))
        )
        #expect(Self.parse(.fetchProfile(mvpd: "C"), profile: .v1, status: 404, "") == .success(.profile(nil)))
        #expect(Self.parse(.fetchProfile(mvpd: "C"), profile: .v1, status: 410, "") == .success(.profile(nil)))
        // A refused signature stays a failure: the device must report it.
        #expect(
            Self.parse(.checkAuthentication, profile: .v1, status: 401, #"{"status":401,"message":"Not Authorized","details":"bad signature"}"#)
                == .failure(.http(status: 401, retryAfter: nil, error: nil))
        )
    }
}
