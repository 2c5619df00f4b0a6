import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("REST v1 tokens, authorization, metadata and logout")
struct V1TokenTests {
    @Test func tokensAuthnIsPendingThenIssuedThenGoneAfterLogout() async throws {
        let harness = Harness()
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            let code = try await client.newRegcode(headers)
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authn", headers),
                status: .notFound,
                message: "Not Found",
                details: .some(nil)
            )

            harness.clock.advance(by: .seconds(20))
            let approvedAt = harness.clock.epochMillisecondsNow
            let approval = try await client.approve(#"{"code":"\#(code)","mvpd":"DTV","userId":"erin"}"#)
            #expect(approval.status == .ok)
            #expect(try approval.json()["api"] as? String == "v1")
            #expect(try approval.json()["deviceIdentifier"] as? String == "dGVzdC1kZXZpY2U")

            let token = try await client.v1(.get, "/api/v1/tokens/authn", headers)
            #expect(token.status == .ok)
            let body = try token.json()
            #expect(body["requestor"] as? String == "REF30")
            #expect(body["mvpd"] as? String == "DTV")
            #expect(body["userId"] as? String == "erin")
            // A string of epoch milliseconds, unlike the regcode numbers.
            #expect(body["expires"] as? String == String(approvedAt + 30 * 24 * 3_600_000))
            let xml = try XMLLeaves(
                try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(try await client.credentials(), json: false)).text
            )
            #expect(xml.root == "authentication")
            #expect(xml["userId"] == "erin")

            // The token belongs to (requestor, deviceId): another device has none.
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "other").status == .notFound)

            let logout = try await client.v1(.delete, "/api/v1/logout", headers)
            #expect(logout.status == .noContent)
            #expect(logout.text.isEmpty)
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers).status == .notFound)
            #expect(try await client.v1(.delete, "/api/v1/logout", headers).status == .noContent)
        }
    }

    @Test func expiredAuthenticationTokenIs410AndCheckauthnSaysSo() async throws {
        let harness = Harness { $0.profileTTL = .seconds(3600) }
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            try expectClassicError(try await client.v1(.get, "/api/v1/checkauthn", headers), status: .forbidden, message: "Not Authenticated")
            let code = try await client.newRegcode(headers)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            #expect(try await client.v1(.get, "/api/v1/checkauthn", headers).status == .ok)

            harness.clock.advance(by: .milliseconds(3_599_999))
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers).status == .ok)
            harness.clock.advance(by: .milliseconds(1))
            try expectClassicError(try await client.v1(.get, "/api/v1/tokens/authn", headers), status: .gone, message: "Gone")
            try expectClassicError(
                try await client.v1(.get, "/api/v1/checkauthn", headers),
                status: .forbidden,
                message: "Authentication token expired"
            )
            try expectClassicError(
                try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30"),
                status: .forbidden,
                message: "User not Authenticated"
            )
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/usermetadata", headers),
                status: .preconditionFailed,
                message: "User not authenticated"
            )
        }
    }

    @Test func aNewRegcodeDropsTheDevicesOldTokenSoThePollIsPending() async throws {
        let harness = Harness { $0.profileTTL = .seconds(3600) }
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            let first = try await client.newRegcode(headers)
            #expect(try await client.approve(#"{"code":"\#(first)"}"#).status == .ok)
            #expect(try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30").status == .ok)
            harness.clock.advance(by: .seconds(3600))
            try expectClassicError(try await client.v1(.get, "/api/v1/tokens/authn", headers), status: .gone, message: "Gone")

            // Logging in again: the fresh code is pending, not answered with the old token's 410.
            let second = try await client.newRegcode(headers)
            try expectClassicError(try await client.v1(.get, "/api/v1/tokens/authn", headers), status: .notFound, message: "Not Found")
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30"),
                status: .preconditionFailed,
                message: "User not authenticated"
            )
            #expect(try await client.approve(#"{"code":"\#(second)"}"#).status == .ok)
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers).status == .ok)

            // The same holds while the old token is still valid, and other devices keep theirs.
            let other = try await client.newRegcode(headers, deviceId: "b3RoZXI")
            #expect(try await client.approve(#"{"code":"\#(other)"}"#).status == .ok)
            _ = try await client.newRegcode(headers)
            try expectClassicError(try await client.v1(.get, "/api/v1/tokens/authn", headers), status: .notFound, message: "Not Found")
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "b3RoZXI").status == .ok)
        }
    }

    @Test func checkauthnByCodeAndTheAuthenticateAlias() async throws {
        try await Harness().run { client in
            let headers = Client.bearer(try await client.credentials())
            let code = try await client.newRegcode(headers)
            try expectClassicError(
                try await client.send(.get, "/api/v1/checkauthn/\(code).json?requestor=REF30"),
                status: .forbidden,
                message: "Forbidden"
            )
            try expectClassicError(
                try await client.send(.get, "/api/v1/authenticate/\(code)?requestor=REF30", headers: headers),
                status: .notFound,
                message: "Not Found"
            )
            try expectClassicError(
                try await client.send(.get, "/api/v1/authenticate/\(code).json?requestor=REF30"),
                status: .unauthorized,
                message: "Not Authorized"
            )

            #expect(try await client.approve(#"{"code":"\#(code)","userId":"finn"}"#).status == .ok)
            #expect(try await client.send(.get, "/api/v1/checkauthn/\(code)?requestor=REF30").status == .ok)
            let alias = try await client.send(.get, "/api/v1/authenticate/\(code)?requestor=REF30", headers: headers)
            #expect(alias.status == .ok)
            #expect(try alias.json()["userId"] as? String == "finn")
            #expect(try alias.json()["expires"] is String)
        }
    }

    @Test func authorizeAllowsOrDeniesWithDetails() async throws {
        let harness = Harness { $0.denyResources = ["HBO": "Upgrade to the premium tier to watch HBO."] }
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            try expectClassicError(
                try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30"),
                status: .forbidden,
                message: "User not Authenticated"
            )
            let code = try await client.newRegcode(headers)
            #expect(try await client.approve(#"{"code":"\#(code)","mvpd":"Verizon"}"#).status == .ok)
            try expectClassicError(
                try await client.v1(.get, "/api/v1/authorize", headers),
                status: .badRequest,
                message: "Required 'resource' is not present"
            )

            let allowed = try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30")
            #expect(allowed.status == .ok)
            let body = try allowed.json()
            #expect(body["mvpd"] as? String == "Verizon")
            #expect(body["resource"] as? String == "REF30")
            #expect(body["requestor"] as? String == "REF30")
            #expect(body["expires"] as? String == String(harness.clock.epochMillisecondsNow + 24 * 3_600_000))

            try expectClassicError(
                try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=HBO"),
                status: .forbidden,
                message: "User not authorized",
                details: "Upgrade to the premium tier to watch HBO."
            )
            // Deny lists change at runtime; an MVPD-wide denial covers every resource.
            let put = try await client.send(.put, "/_sim/deny", body: #"{"mvpds":{"Verizon":""}}"#)
            #expect(put.status == .ok)
            let lists = try await client.send(.get, "/_sim/deny").json()
            #expect(lists["mvpds"] as? [String: String] == ["Verizon": ""])
            #expect(lists["resources"] as? [String: String] == [:])
            let denied = try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30")
            try expectClassicError(denied, status: .forbidden, message: "User not authorized")
            #expect((try denied.json()["details"] as? String)?.contains("Verizon") == true)
            // The resource authorized before keeps its AuthZ token.
            #expect(try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30").status == .ok)
        }
    }

    @Test func authorizationTokenStatuses() async throws {
        let harness = Harness { $0.authorizationTTL = .seconds(600) }
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30"),
                status: .preconditionFailed,
                message: "User not authenticated"
            )
            #expect(try await client.approve(#"{"code":"\#(try await client.newRegcode(headers))"}"#).status == .ok)
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30"),
                status: .notFound,
                message: "Not Found"
            )
            #expect(try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30").status == .ok)
            let stored = try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30")
            #expect(stored.status == .ok)
            #expect(try stored.json()["resource"] as? String == "REF30")
            harness.clock.advance(by: .seconds(600))
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30"),
                status: .gone,
                message: "Gone"
            )
            // Logout clears AuthZ as well as AuthN.
            #expect(try await client.v1(.get, "/api/v1/authorize", headers, query: "&resource=REF30").status == .ok)
            #expect(try await client.v1(.delete, "/api/v1/logout", headers).status == .noContent)
            #expect(try await client.v1(.get, "/api/v1/tokens/authz", headers, query: "&resource=REF30").status == .preconditionFailed)
        }
    }

    @Test func mediaTokenOnBothPaths() async throws {
        let harness = Harness { $0.denyResources = ["PPV": ""] }
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/media", headers, query: "&resource=REF30"),
                status: .forbidden,
                message: "User not Authenticated"
            )
            #expect(try await client.approve(#"{"code":"\#(try await client.newRegcode(headers))","userId":"gus"}"#).status == .ok)
            for path in ["/api/v1/tokens/media", "/api/v1/mediatoken"] {
                let reply = try await client.v1(.get, path, headers, query: "&resource=REF30")
                #expect(reply.status == .ok, "\(path)")
                let body = try reply.json()
                #expect(body["resource"] as? String == "REF30")
                #expect(body["requestor"] as? String == "REF30")
                #expect(body["userId"] as? String == "gus")
                #expect(body["mvpdId"] as? String == "Cablevision")
                #expect(body["expires"] as? String == String(harness.clock.epochMillisecondsNow + 420_000))
                let serialized = try #require(body["serializedToken"] as? String)
                let decoded = String(decoding: try #require(Data(base64Encoded: serialized)), as: UTF8.self)
                #expect(decoded.hasPrefix("<signatureInfo>"))
                #expect(decoded.contains("<resourceID>REF30</resourceID>"))
                #expect(decoded.contains("<requestorID>REF30</requestorID>"))
            }
            let xml = try XMLLeaves(
                try await client.v1(.get, "/api/v1/mediatoken", [.authorization: headers[.authorization]!], query: "&resource=REF30").text
            )
            #expect(xml.root == "play")
            #expect(xml["mvpdId"] == "Cablevision")
            #expect(xml["serializedToken"]?.isEmpty == false)

            let denied = try await client.v1(.get, "/api/v1/tokens/media", headers, query: "&resource=PPV")
            try expectClassicError(
                denied,
                status: .forbidden,
                message: "User not authorized",
                details: #"Your subscription package does not include the "PPV" channel."#
            )
        }
    }

    @Test func preauthorizeAnswersEachResource() async throws {
        let harness = Harness {
            $0.denyResources = ["TestStream3": "Your subscription package does not include the \"TestStream3\" channel."]
            $0.preauthorizeResourceLimit = 3
        }
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            try expectClassicError(
                try await client.v1(.get, "/api/v1/preauthorize", headers, query: "&resource=TestStream1"),
                status: .preconditionFailed,
                message: "User not authenticated"
            )
            #expect(try await client.approve(#"{"code":"\#(try await client.newRegcode(headers))"}"#).status == .ok)
            let reply = try await client.v1(.get, "/api/v1/preauthorize", headers, query: "&resource=TestStream1,TestStream3")
            #expect(reply.status == .ok)
            #expect(reply.headers[Client.name("Adobe-Response-Confidence")] == "full")
            let resources = try #require(try reply.json()["resources"] as? [[String: Any]])
            #expect(resources.map { $0["id"] as? String } == ["TestStream1", "TestStream3"])
            #expect(resources.map { $0["authorized"] as? Bool } == [true, false])
            #expect(resources[0]["error"] == nil)
            let error = try #require(resources[1]["error"] as? [String: Any])
            #expect(error["status"] as? Int == 403)
            #expect(error["code"] as? String == "authorization_denied_by_mvpd")
            #expect(error["message"] as? String == "User not authorized")
            #expect(error["details"] as? String == "Your subscription package does not include the \"TestStream3\" channel.")
            #expect(error["action"] as? String == "none")

            try expectClassicError(
                try await client.v1(.get, "/api/v1/preauthorize", headers, query: "&resource=a,b,c,d"),
                status: .forbidden,
                message: "Forbidden"
            )
        }
    }

    @Test func userMetadataCarriesTheProfileAttributes() async throws {
        let harness = Harness()
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            let code = try await client.newRegcode(headers)
            let approvedAt = harness.clock.epochMillisecondsNow
            let approval = try await client.approve(
                #"{"code":"\#(code)","userId":"hana","attributes":{"zip":["90210"],"householdID":"house-1","allowMirroring":{"value":"true","state":"enc"}}}"#
            )
            #expect(approval.status == .ok)

            let reply = try await client.v1(.get, "/api/v1/tokens/usermetadata", headers)
            #expect(reply.status == .ok)
            let body = try reply.json()
            #expect(body["updated"] as? Int64 == approvedAt / 1000)
            #expect(Set(try #require(body["encrypted"] as? [String])) == ["encryptedZip", "allowMirroring"])
            let data = try #require(body["data"] as? [String: Any])
            #expect(data["userID"] as? String == "hana")
            #expect(data["householdID"] as? String == "house-1")
            #expect(data["zip"] as? [String] == ["90210"])
            let rating = try #require(data["maxRating"] as? [String: String])
            #expect(rating["MPAA"] != nil && rating["VCHIP"] != nil)
            #expect((data["channelID"] as? [String])?.isEmpty == false)
            #expect(data["encryptedZip"] is String)

            let xml = try await client.v1(.get, "/api/v1/tokens/usermetadata", [.authorization: headers[.authorization]!])
            let leaves = try XMLLeaves(xml.text)
            #expect(leaves.root == "metadata")
            #expect(leaves["userID"] == "hana")

            // Removing every attribute leaves a token without metadata: 404.
            let bare = try await client.newRegcode(headers, deviceId: "bare-tv")
            let removeAll = #"{"userID":null,"householdID":null,"zip":null,"maxRating":null,"channelID":null,"encryptedZip":null}"#
            #expect(try await client.approve(#"{"code":"\#(bare)","attributes":\#(removeAll)}"#).status == .ok)
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/usermetadata", headers, deviceId: "bare-tv"),
                status: .notFound,
                message: "Not Found"
            )
        }
    }

    @Test func autoApprovalAndAccessTokenParameterWorkForV1() async throws {
        let harness = Harness { $0.autoApproveAfter = .seconds(5) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            // The DCR token may also travel as the access_token form field.
            let reply = try await client.form(
                .post,
                "/reggie/v1/REF30/regcode",
                headers: Client.json,
                fields: "deviceId=auto-tv&access_token=\(credentials.accessToken)&mvpd=DTV"
            )
            #expect(reply.status == .created)
            let headers = Client.bearer(credentials)
            harness.clock.advance(by: .milliseconds(4_999))
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "auto-tv").status == .notFound)
            harness.clock.advance(by: .milliseconds(1))
            let token = try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "auto-tv")
            #expect(token.status == .ok)
            #expect(try token.json()["mvpd"] as? String == "DTV")
        }
    }

    @Test func v1PathsAreThrottledByDeviceId() async throws {
        try await Harness().run { client in
            let headers = Client.bearer(try await client.credentials())
            for _ in 1...11 {
                #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "busy").status == .notFound)
            }
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "busy").status == .tooManyRequests)
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "calm").status == .notFound)
            // A form body's deviceId counts too.
            for _ in 1...11 { _ = try await client.regcode(headers, fields: "deviceId=former") }
            #expect(try await client.regcode(headers, fields: "deviceId=former").status == .tooManyRequests)
            // The browser's authenticate page is not throttled.
            for _ in 1...12 {
                #expect(try await client.send(.get, "/api/v1/authenticate?reg_code=NOPE123&requestor_id=REF30").status == .badRequest)
            }
        }
    }
}
