import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("REST v1 registration codes and formats")
struct V1RegcodeTests {
    @Test func regcodeIs201WithTheRecordFieldsAndTypes() async throws {
        let harness = Harness()
        let now = harness.clock.epochMillisecondsNow
        try await harness.run { client in
            let credentials = try await client.credentials()
            let reply = try await client.regcode(
                Client.bearer(credentials),
                fields: "deviceId=ZGV2aWNlLTE%3D&mvpd=DTV&deviceType=appletv&appId=app-7&registrationURL=http%3A%2F%2Flogin.example"
            )
            #expect(reply.status == .created)
            #expect(reply.contentType.hasPrefix("application/json"))
            let body = try reply.json()
            let id = try #require(body["id"] as? String)
            #expect(UUID(uuidString: id) != nil, "id \(id)")
            let code = try #require(body["code"] as? String)
            #expect(SessionTests.isCode(code), "code \(code)")
            #expect(body["requestor"] as? String == "REF30")
            #expect(body["mvpd"] as? String == "DTV")
            // Numbers of epoch milliseconds (not strings), 30 minutes apart by default.
            #expect(!(body["generated"] is String) && !(body["expires"] is String))
            #expect(body["generated"] as? Int64 == now)
            #expect(body["expires"] as? Int64 == now + 1_800_000)
            let info = try #require(body["info"] as? [String: Any])
            #expect(info["deviceId"] as? String == "ZGV2aWNlLTE=")
            #expect(info["deviceType"] as? String == "appletv")
            #expect(info["appId"] as? String == "app-7")
            #expect(info["registrationURL"] as? String == "http://login.example")
            // Absent optional fields are present as null.
            #expect(info["deviceUser"] is NSNull)
            #expect(info["appVersion"] is NSNull)
            #expect(Set(info.keys) == ["deviceId", "deviceType", "deviceUser", "appId", "appVersion", "registrationURL"])

            let noMVPD = try await client.regcode(Client.bearer(credentials)).json()
            #expect(noMVPD["mvpd"] is NSNull)
        }
    }

    @Test func ttlDefaultsMaximumAndLimit() async throws {
        let harness = Harness()
        let now = harness.clock.epochMillisecondsNow
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            let empty = try await client.regcode(headers, fields: "deviceId=d&ttl=").json()
            #expect(empty["expires"] as? Int64 == now + 1_800_000)
            let explicit = try await client.regcode(headers, fields: "deviceId=d&ttl=600").json()
            #expect(explicit["expires"] as? Int64 == now + 600_000)
            let maximum = try await client.regcode(headers, fields: "deviceId=d&ttl=36000").json()
            #expect(maximum["expires"] as? Int64 == now + 36_000_000)
            try expectClassicError(try await client.regcode(headers, fields: "deviceId=d&ttl=36001"), status: .badRequest, message: "Bad Request")
            try expectClassicError(try await client.regcode(headers, fields: "deviceId=d&ttl=soon"), status: .badRequest, message: "Bad Request")
            try expectClassicError(try await client.regcode(headers, fields: "deviceId=d&mvpd=Nope"), status: .badRequest, message: "Bad Request")
        }
    }

    @Test func deviceIdIsMandatory() async throws {
        try await Harness().run { client in
            let headers = Client.bearer(try await client.credentials())
            try expectClassicError(
                try await client.regcode(headers, fields: "ttl=600"),
                status: .badRequest,
                message: "Required 'deviceId' is not present"
            )
            try expectClassicError(
                try await client.regcode(headers, fields: "deviceId="),
                status: .badRequest,
                message: "Required 'deviceId' is not present"
            )
            // In the query string it counts as well (the ESPN app sends an empty body).
            let query = try await client.send(.post, "/reggie/v1/REF30/regcode?deviceId=abc&format=json", headers: headers)
            #expect(query.status == .created)
        }
    }

    @Test func formatIsChosenByAcceptFormatOrSuffixWithXMLByDefault() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let bare = Client.bearer(credentials, json: false)

            let xml = try await client.regcode(bare)
            #expect(xml.status == .created)
            #expect(xml.contentType.hasPrefix("application/xml"))
            let leaves = try XMLLeaves(xml.text)
            #expect(leaves.root == "ns2:regcode")
            #expect(leaves["requestor"] == "REF30")
            #expect(leaves["deviceId"] == "dGVzdC1kZXZpY2U")
            #expect(leaves["code"].map(SessionTests.isCode) == true)
            #expect(leaves["generated"].flatMap { Int64($0) } != nil)

            let byAccept = try await client.regcode(Client.bearer(credentials))
            #expect(byAccept.contentType.hasPrefix("application/json"))
            #expect(try byAccept.json()["code"] is String)

            let byParameter = try await client.regcode(bare, fields: "deviceId=d&format=json")
            #expect(byParameter.contentType.hasPrefix("application/json"))
            #expect(try byParameter.json()["code"] is String)

            let bySuffix = try await client.form(.post, "/reggie/v1/REF30/regcode.json", headers: bare, fields: "deviceId=d")
            #expect(bySuffix.status == .created)
            #expect(try bySuffix.json()["code"] is String)

            var xmlAccept = bare
            xmlAccept[.accept] = "application/xml"
            let explicitXML = try await client.regcode(xmlAccept)
            #expect(explicitXML.contentType.hasPrefix("application/xml"))
            // Conflicting choices: JSON wins.
            let conflict = try await client.regcode(xmlAccept, fields: "deviceId=d&format=json")
            #expect(conflict.contentType.hasPrefix("application/json"))

            // Errors follow the same choice.
            let xmlError = try await client.send(
                .get,
                "/api/v1/tokens/authn.xml?requestor=REF30&deviceId=nobody",
                headers: Client.bearer(credentials)
            )
            #expect(xmlError.status == .notFound)
            #expect(xmlError.contentType.hasPrefix("application/json"))
            let plainError = try await client.send(.get, "/api/v1/tokens/authn?requestor=REF30&deviceId=nobody", headers: bare)
            #expect(plainError.status == .notFound)
            #expect(plainError.contentType.hasPrefix("application/xml"))
            let errorLeaves = try XMLLeaves(plainError.text)
            #expect(errorLeaves.root == "error")
            #expect(errorLeaves["status"] == "404")
            #expect(errorLeaves["message"] == "Not Found")
            let jsonError = try await client.send(.get, "/api/v1/tokens/authn?requestor=REF30&deviceId=nobody&format=json", headers: bare)
            #expect(jsonError.text == #"{"status":404,"message":"Not Found","details":null}"#)
        }
    }

    @Test func recordCanBeReadAndDeletedByCode() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newRegcode(Client.bearer(credentials))

            let record = try await client.send(.get, "/reggie/v1/REF30/regcode/\(code.lowercased()).json")
            #expect(record.status == .ok)
            #expect(try record.json()["code"] as? String == code)
            #expect(try XMLLeaves(try await client.send(.get, "/reggie/v1/REF30/regcode/\(code)").text)["code"] == code)
            #expect(try await client.send(.get, "/reggie/v1/OTHER/regcode/\(code)").status == .notFound)
            // A v2 code is not a v1 record, and the other way round.
            let v2Code = try await client.newCode(credentials)
            #expect(try await client.send(.get, "/reggie/v1/REF30/regcode/\(v2Code)").status == .notFound)
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_parameter_code")

            #expect(try await client.send(.delete, "/reggie/v1/REF30/regcode/\(code)").status == .noContent)
            try expectClassicError(
                try await client.send(.get, "/reggie/v1/REF30/regcode/\(code)", headers: Client.json),
                status: .notFound,
                message: "Not Found"
            )
            #expect(try await client.send(.delete, "/reggie/v1/REF30/regcode/\(code)").status == .notFound)
            // A deleted code can no longer be completed.
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .gone)
        }
    }

    @Test func configListsTheMVPDsInBothFormats() async throws {
        try await Harness().run { client in
            let headers = Client.bearer(try await client.credentials(), json: false)
            let json = try await client.send(.get, "/api/v1/config/REF30?format=json", headers: headers)
            #expect(json.status == .ok)
            let requestor = try #require(try json.json()["requestor"] as? [String: Any])
            #expect(requestor["id"] as? String == "REF30")
            let mvpds = try #require(requestor["mvpds"] as? [[String: Any]])
            #expect(mvpds.map { $0["id"] as? String } == SimulatedMVPD.defaults.map(\.id))
            #expect(mvpds.map { $0["displayName"] as? String } == SimulatedMVPD.defaults.map(\.displayName))
            #expect((mvpds.first?["logoUrl"] as? String)?.hasSuffix("/_sim/logos/Cablevision.svg") == true)

            let xml = try await client.send(.get, "/api/v1/config/REF30", headers: headers)
            #expect(xml.contentType.hasPrefix("application/xml"))
            let leaves = try XMLLeaves(xml.text)
            #expect(leaves.root == "config")
            #expect(leaves.values["displayName"] == SimulatedMVPD.defaults.map(\.displayName))
            #expect(xml.text.contains("<config><requestor>") && xml.text.contains("<mvpds><mvpd><id>Cablevision</id>"))

            #expect(try await client.send(.get, "/api/v1/config/REF30.json", headers: headers).contentType.hasPrefix("application/json"))
        }
    }

    @Test func configNeedsTheBearerTokenOrTheSignedHeader() async throws {
        let harness = Harness()
        try await harness.run { client in
            try expectClassicError(try await client.send(.get, "/api/v1/config/REF30?format=json"), status: .unauthorized, message: "Not Authorized")
            try expectClassicError(
                try await client.send(.get, "/api/v1/config/REF30?format=json", headers: [.authorization: "Bearer not-a-token"]),
                status: .unauthorized,
                message: "Not Authorized"
            )
            let signed = TestSigner.header(requestURI: "/api/v1/config/REF30", requestTime: harness.clock.epochMillisecondsNow)
            #expect(try await client.send(.get, "/api/v1/config/REF30?format=json", headers: [.authorization: signed]).status == .ok)
            let credentials = try await client.credentials()
            #expect(try await client.send(.get, "/api/v1/config/REF30?format=json&access_token=\(credentials.accessToken)").status == .ok)
        }
    }

    @Test func aCodeWithoutTTLLivesTheSimulatorsCodeTTL() async throws {
        let harness = Harness { $0.codeTTL = .seconds(120) }
        let now = harness.clock.epochMillisecondsNow
        try await harness.run { client in
            let headers = Client.bearer(try await client.credentials())
            #expect(try await client.regcode(headers, fields: "deviceId=d").json()["expires"] as? Int64 == now + 120_000)
            // A device that asks for a ttl gets it, as from Adobe.
            #expect(try await client.regcode(headers, fields: "deviceId=d&ttl=1800").json()["expires"] as? Int64 == now + 1_800_000)
        }
    }

    @Test func secondScreenAuthenticateCompletesTheV1Code() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let headers = Client.bearer(credentials)
            let code = try await client.newRegcode(headers, deviceId: "tv-9")

            let unknown = try await client.send(.get, "/api/v1/authenticate?reg_code=NOPE123&requestor_id=REF30&mso_id=DTV")
            #expect(unknown.status == .badRequest)
            #expect(unknown.contentType.hasPrefix("text/html"))

            let redirect = try await client.send(
                .get,
                "/api/v1/authenticate?reg_code=\(code)&requestor_id=REF30&mso_id=Spectrum&domain_name=adobe.com&noflash=true&redirect_url=https%3A%2F%2Fadobe.com"
            )
            #expect(redirect.status == .found)
            let location = try #require(redirect.headers[.location])
            #expect(PageTests.query(location) == ["code": code, "sp": "REF30", "mvpd": "Spectrum"])
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "tv-9").status == .notFound)

            let login = try await client.form(.post, "/_sim/mvpd/login", fields: "code=\(code)&sp=REF30&mvpd=Spectrum&username=dora")
            #expect(login.status == .ok)
            let token = try await client.v1(.get, "/api/v1/tokens/authn", headers, deviceId: "tv-9")
            #expect(token.status == .ok)
            #expect(try token.json()["mvpd"] as? String == "Spectrum")
            #expect(try token.json()["userId"] as? String == "dora")
            // The consumed code is no longer a readable record.
            #expect(try await client.send(.get, "/reggie/v1/REF30/regcode/\(code)").status == .notFound)
        }
    }

    @Test func activationPageSendsV1CodesToTheV1Authenticate() async throws {
        try await Harness().run { client in
            let code = try await client.newRegcode(Client.bearer(try await client.credentials()))
            let submitted = try await client.form(.post, "/activate", fields: "code=\(code)&mvpd=DTV")
            #expect(submitted.status == .seeOther)
            let location = try #require(submitted.headers[.location])
            #expect(location.hasPrefix("/api/v1/authenticate?"))
            let redirect = try await client.send(.get, location)
            #expect(redirect.status == .found)
            #expect(PageTests.query(try #require(redirect.headers[.location]))["mvpd"] == "DTV")
        }
    }
}
