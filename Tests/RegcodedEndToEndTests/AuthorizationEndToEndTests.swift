import ControlRPC
import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The AccessEnabler entitlement calls over the real control socket of a real `regcoded` against `pass-sim`.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct AuthorizationEndToEndTests {
        typealias Lab = DaemonEndToEndTests.Lab

        static func next(_ events: inout ControlClient.Notifications.Iterator, _ name: String) async -> JSONValue? {
            await DaemonEndToEndTests.nextEvent(&events) { $0["name"]?.stringValue == name }
        }

        static func rpcErrorCode(_ body: () async throws -> JSONValue) async -> Int? {
            do {
                _ = try await body()
                return nil
            } catch let error as RPCError {
                return error.code
            } catch {
                return nil
            }
        }

        @Test(arguments: BackendWire.allCases) func authorizationPreauthorizationMetadataAndLogoutOverTheSocket(wire: BackendWire) async throws {
            // A dozen calls in a few seconds: the throttle has its own tests.
            let lab = try await Lab.start(simulatorArguments: ["--no-throttle"], wire: wire)
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                try await lab.approveShownCode(&events)

                let accepted = try await client.call(method: "getAuthorization", params: ["device": "stb-1", "resource": "Live"])
                #expect(accepted["accepted"] == true)
                let token = try #require(await Self.next(&events, "setToken"))
                #expect(token["args"]?["resource"] == "Live")
                #expect(token["args"]?["token"]?.stringValue.flatMap { Data(base64Encoded: $0) } != nil)
                let tracking = try #require(await Self.next(&events, "sendTrackingData"))
                #expect(tracking["args"]?["eventName"] == "authorizationDetection")
                #expect(tracking["args"]?["data"]?.arrayValue?.first == "YES")

                #expect(
                    try await lab.backend.request("/_sim/deny", method: "PUT", json: #"{"resources":{"Denied":"No Denied channel"},"mvpds":{}}"#)
                        .status == 200
                )
                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "Denied"])
                let failed = try #require(await Self.next(&events, "tokenRequestFailed"))
                #expect(failed["args"] == ["resource": "Denied", "errorCode": "User Not Authorized Error", "errorDescription": "No Denied channel"])

                _ = try await client.call(method: "checkPreauthorizedResources", params: ["device": "stb-1", "resources": ["Live", "Denied"]])
                let preauthorized = try #require(await Self.next(&events, "preauthorizedResources"))
                #expect(preauthorized["args"]?["resources"] == ["Live"])
                // The denied item's item-level error rides along.
                #expect(preauthorized["args"]?["errors"]?.arrayValue?.map { $0["resource"] } == ["Denied"])
                #expect(preauthorized["args"]?["errors"]?.arrayValue?.map { $0["details"] } == ["No Denied channel"])

                // The key dictionary nested or at the top level; echoed as given.
                _ = try await client.call(method: "getMetadata", params: ["device": "stb-1", "opCode": 2])
                let deviceID = try #require(await Self.next(&events, "setMetadataStatus"))
                #expect(deviceID["args"]?["arguments"] == ["opCode": 2])
                #expect(deviceID["args"]?["key"] == 2)
                _ = try await client.call(
                    method: "getMetadata",
                    params: ["device": "stb-1", "key": ["opCode": 3, "user_metadata_name": "householdID"]]
                )
                let household = try #require(await Self.next(&events, "setMetadataStatus"))
                #expect(household["args"]?["arguments"] == ["opCode": 3, "user_metadata_name": "householdID"])
                #expect(household["args"]?["metadata"]?.stringValue?.isEmpty == false)
                #expect(household["args"]?["encrypted"] == false)

                // Bad input is refused with invalid params, and the connection lives on.
                for params: JSONValue in [
                    ["device": "stb-1", "opCode": 9],
                    ["device": "stb-1", "key": ["opCode": 1]],
                    ["device": "stb-1", "key": ["opCode": 0], "opCode": 0],
                    ["device": "stb-1"],
                ] {
                    #expect(await Self.rpcErrorCode { try await client.call(method: "getMetadata", params: params) } == -32602, "\(params)")
                }
                #expect(await Self.rpcErrorCode { try await client.call(method: "checkAuthorization", params: ["device": "stb-1"]) } == -32602)
                #expect(
                    await Self.rpcErrorCode {
                        try await client.call(method: "checkPreauthorizedResources", params: ["device": "stb-1", "resources": "Live"])
                    } == -32602
                )
                #expect(
                    await Self.rpcErrorCode { try await client.call(method: "setRequestor", params: ["device": "stb-1", "secret": "s"]) } == -32602
                )
                #expect(await Self.rpcErrorCode { try await client.call(method: "logout", params: ["device": "nope"]) } == 1001)

                _ = try await client.call(method: "logout", params: ["device": "stb-1"])
                let loggedOut = try #require(await Self.next(&events, "setAuthenticationStatus"))
                #expect(loggedOut["args"] == ["status": 0, "errorCode": "User Not Authenticated Error"])
            }
            // regcodectl reaches the new methods too.
            let call = try ChildProcess("regcodectl", ["call", "--socket", lab.socket, "getSelectedProvider", #"{"device":"stb-1"}"#])
            #expect(await call.waitForExit() == 0)
            #expect(call.text.contains("\"accepted\""))
            let stored = try SQLiteShell.run(lab.database, "SELECT args FROM events WHERE name = 'selectedProvider' ORDER BY seq DESC LIMIT 1")
            #expect(stored == #"{"mvpd":null}"#)
        }

        @Test func legacySetRequestorKeysFixARefusedV1DeviceAndNeverShow() async throws {
            let secret = SigningKeysFixture.secret
            let files = try TemporaryDirectory()
            try "not-the-secret\n".write(toFile: files.path("signing-secret"), atomically: true, encoding: .utf8)
            try """
            fleets:
              - name: stb
                count: 1
                profile: v1
                public_key: \(SigningKeysFixture.publicKey)
                signing_secret_file: \(files.path("signing-secret"))
            """.write(toFile: files.path("regcoded.yaml"), atomically: true, encoding: .utf8)
            // The fleet signs with its key pair, so the daemon is given no software statement (DCR would take over).
            let lab = try await Lab.start(
                extraArguments: ["--config", files.path("regcoded.yaml")],
                simulatorArguments: ["--no-throttle"],
                softwareStatement: false
            )
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                // The configured secret is wrong: pass-sim refuses the signature of the first call (the MVPD list, which
                // needs credentials as Adobe's does) and the device says so.
                let refused = try #require(await DaemonEndToEndTests.nextEvent(&events) { $0["args"]?["statusDictionary"]?["errorId"] == "SEC403" })
                #expect(refused["args"]?["statusDictionary"]?["level"] == "error")
                let failed = try #require(await Self.next(&events, "setRequestorComplete"))
                #expect(failed["args"] == ["status": 0])

                let reply = try await client.call(
                    method: "setRequestor",
                    params: ["device": "stb-1", "secret": .string(secret), "publicKey": .string(SigningKeysFixture.publicKey)]
                )
                #expect(reply["accepted"] == true)
                #expect(reply.objectValue?.keys.sorted() == ["accepted", "device", "state"])
                let configured = try #require(await Self.next(&events, "setRequestorComplete"))
                #expect(configured["args"] == ["status": 1])

                _ = try await client.call(method: "getAuthentication", params: ["device": "stb-1", "mvpd": "Cablevision"])
                try await lab.approveShownCode(&events)
                _ = try await client.call(method: "getAuthorization", params: ["device": "stb-1", "resource": "Live"])
                let token = try #require(await Self.next(&events, "setToken"))
                #expect(token["args"]?["resource"] == "Live")
            }
            // The secret given over the socket is nowhere: not in events, not in the database, not in the logs.
            #expect(try SQLiteShell.run(lab.database, "SELECT count(*) FROM events WHERE args LIKE '%\(secret)%'") == "0")
            #expect(try SQLiteShell.run(lab.database, "SELECT count(*) FROM devices WHERE settings LIKE '%\(secret)%'") == "0")
            #expect(!lab.daemon.text.contains(secret))
            #expect(!lab.daemon.text.contains("not-the-secret"))
        }
    }
}

/// pass-sim's built-in lab key pair (reference §3.1's synthetic vector, not a real Adobe key).
enum SigningKeysFixture {
    static let publicKey = "samplePublicKey"
    static let secret = "sampleSecretKey"
}
