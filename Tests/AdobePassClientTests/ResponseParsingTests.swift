import AdobePassClient
import Foundation
import RegcodeEngine
import Testing

@Suite("AdobePassResponseParser")
struct ResponseParsingTests {
    /// `Wed, 21 Oct 2015 07:28:00 GMT`.
    static let now = Date(timeIntervalSince1970: 1_445_412_480)

    static func parse(
        _ request: BackendRequest,
        profile: APIProfile = .v2,
        status: Int = 200,
        retryAfter: String? = nil,
        _ body: String
    ) -> Result<BackendResponse, BackendFailure> {
        AdobePassResponseParser.parse(
            request: request,
            profile: profile,
            status: status,
            retryAfter: retryAfter,
            body: Data(body.utf8),
            now: now
        )
    }

    // MARK: Retry-After

    @Test(arguments: [
        ("120", Duration.seconds(120)),
        (" 0 ", Duration.zero),
        ("Wed, 21 Oct 2015 07:28:30 GMT", Duration.seconds(30)),
        ("Wednesday, 21-Oct-15 07:28:30 GMT", Duration.seconds(30)),
        ("Wed Oct 21 07:28:30 2015", Duration.seconds(30)),
        ("Wed, 21 Oct 2015 07:00:00 GMT", Duration.zero),
    ])
    func retryAfterForms(value: String, expected: Duration) {
        #expect(AdobePassResponseParser.retryAfterDuration(value, now: Self.now) == expected)
    }

    @Test(arguments: ["", "soon", "-5", "1.5", "Wed, 32 Oct 2015 07:28:30 GMT"])
    func unusableRetryAfterIsIgnored(value: String) {
        #expect(AdobePassResponseParser.retryAfterDuration(value, now: Self.now) == nil)
    }

    @Test func asctimeWithSingleDigitDay() {
        #expect(
            AdobePassResponseParser.retryAfterDuration("Thu Oct  1 00:00:10 2015", now: Date(timeIntervalSince1970: 1_443_657_600))
                == .seconds(10)
        )
    }

    @Test func retryAfterIsCarriedOnErrorStatuses() {
        let result = Self.parse(.pollProfile(code: "ABC1234"), status: 503, retryAfter: "7", "")
        #expect(result == .failure(.http(status: 503, retryAfter: .seconds(7), error: nil)))
    }

    // MARK: Error bodies

    @Test func dcrErrorBody() {
        #expect(AdobePassResponseParser.errorBody(Data(#"{"error":"invalid_client"}"#.utf8)) == EnhancedError(code: "invalid_client"))
        let described = AdobePassResponseParser.errorBody(
            Data(#"{"error":"invalid_request","error_description":"client_id is missing"}"#.utf8)
        )
        #expect(described == EnhancedError(code: "invalid_request", message: "client_id is missing"))
    }

    @Test func enhancedErrorBody() {
        let body = #"""
            {"action":"none","status":400,"code":"invalid_parameter_service_provider",
             "message":"The service provider parameter value is missing or invalid.","details":"d",
             "helpUrl":"https://example.com/help","trace":"12f6fef9-d2e0-422b-a9d7-60d799abe353"}
            """#
        let result = Self.parse(.configuration, status: 400, body)
        let expected = EnhancedError(
            status: 400,
            code: "invalid_parameter_service_provider",
            action: "none",
            message: "The service provider parameter value is missing or invalid.",
            details: "d",
            helpUrl: "https://example.com/help",
            trace: "12f6fef9-d2e0-422b-a9d7-60d799abe353"
        )
        #expect(result == .failure(.http(status: 400, retryAfter: nil, error: expected)))
    }

    @Test func enhancedErrorStatusAsString() {
        let error = AdobePassResponseParser.errorBody(Data(#"{"status":"410","code":"authorization_expired"}"#.utf8))
        #expect(error == EnhancedError(status: 410, code: "authorization_expired"))
    }

    @Test func throttlePageHasNoErrorBody() {
        let html =
            "<html><head><title>429 Too Many Requests</title></head><body><center><h1>429 Too Many Requests</h1>"
            + "</center><hr><center>openresty</center></body></html>"
        #expect(Self.parse(.pollProfile(code: "ABC1234"), status: 429, html) == .failure(.http(status: 429, retryAfter: nil, error: nil)))
    }

    @Test func classicV1ErrorBodyHasNoCode() {
        let result = Self.parse(
            .createSession(mvpd: nil),
            profile: .v1,
            status: 400,
            #"{"status":400,"message":"Required 'deviceId' is not present"}"#
        )
        #expect(result == .failure(.http(status: 400, retryAfter: nil, error: nil)))
    }

    // MARK: Malformed 2xx

    @Test(arguments: [
        (BackendRequest.configuration, "<html>ok</html>"),
        (BackendRequest.configuration, ""),
        (BackendRequest.configuration, "[]"),
        (BackendRequest.configuration, #"{"requestor":{"mvpds":[{"displayName":"No id"}]}}"#),
        (BackendRequest.createSession(mvpd: nil), #"{"actionName":"authorize","actionType":"direct","reasonType":"authenticated"}"#),
        (BackendRequest.authorize(mvpd: "Cablevision", resource: "r"), #"{"decisions":[{"resource":"r"}]}"#),
        (BackendRequest.authorize(mvpd: "Cablevision", resource: "r"), #"{"decisions":[]}"#),
        (BackendRequest.mediaToken(mvpd: "Cablevision", resource: "r"), #"{"decisions":[{"resource":"r","authorized":true}]}"#),
        (BackendRequest.preauthorize(mvpd: "Cablevision", resources: ["r"]), #"{"resources":[]}"#),
        (BackendRequest.userMetadata(mvpd: "Cablevision"), #"{"profile":{}}"#),
        (BackendRequest.createSession(mvpd: nil), #"{"code":"ABC1234","notAfter":"soon"}"#),
        (BackendRequest.pollProfile(code: "ABC1234"), #"{"profiles":[]}"#),
        (BackendRequest.pollProfile(code: "ABC1234"), #"{"profiles":{"Cablevision":{"type":"regular"}}}"#),
        (BackendRequest.obtainAccessToken(ClientCredentials(clientID: "c", clientSecret: "s")), #"{"access_token":"t"}"#),
        (BackendRequest.registerClient(softwareStatement: "x"), #"{"client_id":"c"}"#),
    ])
    func unparseable2xxIsMalformed(request: BackendRequest, body: String) {
        let result = Self.parse(request, status: 200, body)
        guard case .failure(.malformed(let status, let reason)) = result else {
            Issue.record("expected .malformed, got \(result)")
            return
        }
        #expect(status == 200)
        #expect(!reason.isEmpty)
    }

    // MARK: Success shapes

    @Test(arguments: [200, 201])
    func accessTokenAcceptsBothSuccessStatuses(status: Int) {
        let body = #"{"id":"a9","access_token":"2YotnFZFEjr1zCsicMWpAA","created_at":1752148106221,"expires_in":21600,"token_type":"bearer"}"#
        let result = Self.parse(.obtainAccessToken(ClientCredentials(clientID: "c", clientSecret: "s")), status: status, body)
        #expect(result == .success(.accessToken(token: "2YotnFZFEjr1zCsicMWpAA", expiresIn: .seconds(21600))))
    }

    @Test func registration() {
        let body =
            #"{"client_id":"s6BhdRkqt3","client_secret":"t7AkePiru4","redirect_uris":["adobepass://ios.app"],"grant_types":["client_credentials"]}"#
        #expect(
            Self.parse(.registerClient(softwareStatement: "x"), status: 201, body)
                == .success(.registered(ClientCredentials(clientID: "s6BhdRkqt3", clientSecret: "t7AkePiru4")))
        )
    }

    @Test func configurationMapsLogoURLAndFallsBackToIdForTheName() {
        let body = #"""
            {"device":"unknown","requestor":{"id":"REF30","mvpds":[
              {"id":"AdobePass_SMI","displayName":"Adobe Pass SMI","logoUrl":"https://example.com/smi.png","authPerAggregator":false},
              {"id":"Bare"}]}}
            """#
        #expect(
            Self.parse(.configuration, body)
                == .success(
                    .configuration(mvpds: [
                        MVPD(id: "AdobePass_SMI", displayName: "Adobe Pass SMI", logoURL: "https://example.com/smi.png"),
                        MVPD(id: "Bare", displayName: "Bare", logoURL: nil),
                    ])
                )
        )
    }

    @Test func sessionWithStringNotAfter() {
        let body = #"""
            {"actionName":"authenticate","actionType":"interactive","reasonType":"none","url":"/api/v2/authenticate/REF30/8ER640M",
             "code":"8ER640M","sessionId":"1b61","mvpd":"Cablevision","serviceProvider":"REF30",
             "notBefore":"1733735289035","notAfter":"1733737089035"}
            """#
        #expect(
            Self.parse(.createSession(mvpd: "Cablevision"), body)
                == .success(.session(IssuedCode(code: "8ER640M", expiresEpochMs: 1_733_737_089_035, mvpd: "Cablevision")))
        )
    }

    @Test func sessionWithNumericNotAfterAndNoMVPD() {
        let body = #"{"actionName":"resume","code":"8ER640M","notAfter":1733737089035}"#
        #expect(
            Self.parse(.createSession(mvpd: nil), body)
                == .success(.session(IssuedCode(code: "8ER640M", expiresEpochMs: 1_733_737_089_035, mvpd: nil)))
        )
    }

    @Test func emptyProfilesMeansPending() {
        #expect(Self.parse(.pollProfile(code: "8ER640M"), #"{"profiles":{}}"#) == .success(.profile(nil)))
    }

    @Test func profileWithPlainUserID() {
        let body = #"""
            {"profiles":{"Cablevision":{"notBefore":1752149281000,"notAfter":1783685280000,"issuer":"Cablevision","type":"regular",
              "attributes":{"userID":{"value":"user-1","state":"plain"},"zip":{"value":"ENC","state":"enc"}}}}}
            """#
        #expect(
            Self.parse(.pollProfile(code: "8ER640M"), body)
                == .success(.profile(AuthProfile(mvpd: "Cablevision", userID: "user-1", expiresEpochMs: 1_783_685_280_000)))
        )
    }

    @Test func encryptedOrStructuredUserIDIsNotExposed() {
        let encrypted = #"{"profiles":{"DTV":{"notAfter":10,"type":"regular","attributes":{"userID":{"value":"QUJD","state":"enc"}}}}}"#
        #expect(Self.parse(.pollProfile(code: "C"), encrypted) == .success(.profile(AuthProfile(mvpd: "DTV", userID: nil, expiresEpochMs: 10))))
        let list = #"{"profiles":{"DTV":{"notAfter":10,"type":"regular","attributes":{"userID":{"value":["a","b"],"state":"plain"}}}}}"#
        #expect(Self.parse(.pollProfile(code: "C"), list) == .success(.profile(AuthProfile(mvpd: "DTV", userID: nil, expiresEpochMs: 10))))
    }

    @Test func regularProfileWinsOverTemporary() {
        let body = #"""
            {"profiles":{
              "TempPass_TEST40":{"notAfter":9000000000000,"issuer":"Adobe","type":"temporary","attributes":{}},
              "Spectrum":{"notAfter":1783685280000,"issuer":"Spectrum","type":"regular","attributes":{}}}}
            """#
        #expect(
            Self.parse(.pollProfile(code: "C"), body)
                == .success(.profile(AuthProfile(mvpd: "Spectrum", userID: nil, expiresEpochMs: 1_783_685_280_000)))
        )
    }

    // MARK: v1

    @Test func v1PendingAndExpiredAuthNToken() {
        #expect(
            Self.parse(.pollProfile(code: "ABC"), profile: .v1, status: 404, #"{"status":404,"message":"Not Found"}"#)
                == .success(.profile(nil))
        )
        #expect(
            Self.parse(.pollProfile(code: "ABC"), profile: .v1, status: 410, #"{"status":410,"message":"Gone"}"#)
                == .failure(.http(status: 410, retryAfter: nil, error: nil))
        )
    }

    @Test func v1AuthNTokenWithStringExpiry() {
        let body = #"{"requestor":"sampleRequestor","mvpd":"sampleMvpdId","userId":"sampleUserId","expires":"1601114932000"}"#
        #expect(
            Self.parse(.pollProfile(code: "ABC"), profile: .v1, body)
                == .success(.profile(AuthProfile(mvpd: "sampleMvpdId", userID: "sampleUserId", expiresEpochMs: 1_601_114_932_000)))
        )
    }

    @Test func v1RegcodeWithNumericExpiry() {
        let body =
            #"{"id":"ef5a","code":"IYQD5JQ","requestor":"sampleRequestorId","mvpd":"sampleMvpdId","generated":1704963921144,"expires":1704965721144}"#
        #expect(
            Self.parse(.createSession(mvpd: nil), profile: .v1, status: 201, body)
                == .success(.session(IssuedCode(code: "IYQD5JQ", expiresEpochMs: 1_704_965_721_144, mvpd: "sampleMvpdId")))
        )
    }

    @Test func v1NotFoundOutsideThePollIsAnError() {
        #expect(
            Self.parse(.createSession(mvpd: nil), profile: .v1, status: 404, "")
                == .failure(.http(status: 404, retryAfter: nil, error: nil))
        )
    }

    @Test func v1ConfigurationInXMLStyleNesting() {
        let body = #"{"requestor":{"id":"R","mvpds":{"mvpd":[{"id":"A","displayName":"Alpha"},{"id":"B","displayName":"Beta","logoUrl":"l"}]}}}"#
        #expect(
            Self.parse(.configuration, profile: .v1, body)
                == .success(.configuration(mvpds: [MVPD(id: "A", displayName: "Alpha"), MVPD(id: "B", displayName: "Beta", logoURL: "l")]))
        )
    }
}
