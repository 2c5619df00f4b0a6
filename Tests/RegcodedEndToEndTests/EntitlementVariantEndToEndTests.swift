import ControlRPC
import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// Each entitlement variant end to end: a real `regcoded` device against a real `pass-sim` configured with the
/// variant (`--entitlements`, `PUT /_sim/entitlements`), the callbacks it emits checked in order over the socket.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(3))) struct EntitlementVariantEndToEndTests {
        typealias Lab = DaemonEndToEndTests.Lab
        typealias Events = ControlClient.Notifications.Iterator

        /// A lab whose simulator starts with `entitlements` and whose fleet reads `fleet` (YAML lines of one fleet).
        static func lab(entitlements: String, fleet: [String] = [], mvpd: String? = nil) async throws -> (Lab, TemporaryDirectory) {
            let files = try TemporaryDirectory()
            try entitlements.write(toFile: files.path("entitlements.json"), atomically: true, encoding: .utf8)
            var extra: [String] = mvpd.map { ["--mvpd", $0] } ?? []
            if !fleet.isEmpty {
                try (["fleets:", "  - name: stb", "    count: 1"] + fleet.map { "    " + $0 }).joined(separator: "\n")
                    .write(toFile: files.path("regcoded.yaml"), atomically: true, encoding: .utf8)
                extra += ["--config", files.path("regcoded.yaml")]
            }
            let lab = try await Lab.start(
                extraArguments: extra,
                simulatorArguments: ["--no-throttle", "--entitlements", files.path("entitlements.json")]
            )
            return (lab, files)
        }

        /// The events up to and including the first that matches `last`; nil when none arrives in time.
        static func events(_ iterator: inout Events, until last: @escaping @Sendable (JSONValue) -> Bool) async -> [JSONValue]? {
            let collected = Collected()
            let found = await DaemonEndToEndTests.nextEvent(&iterator) { event in
                collected.append(event)
                return last(event)
            }
            return found == nil ? nil : collected.events
        }

        /// What a sequence of events reads as: the callback name, with a status's id (`status:N011`).
        static func names(_ events: [JSONValue]) -> [String] {
            events.map { event in
                let name = event["name"]?.stringValue ?? "?"
                if name == "status" { return "status:" + (event["args"]?["statusDictionary"]?["errorId"]?.stringValue ?? "?") }
                if name == "setAuthenticationStatus" { return "setAuthenticationStatus:" + String(event["args"]?["status"]?.intValue ?? -1) }
                return name
            }
        }

        static func isName(_ name: String) -> @Sendable (JSONValue) -> Bool {
            { $0["name"]?.stringValue == name }
        }

        static func isStatus(_ id: String) -> @Sendable (JSONValue) -> Bool {
            { $0["name"] == "status" && $0["args"]?["statusDictionary"]?["errorId"]?.stringValue == id }
        }

        static func isAuthenticationStatus(_ status: Int64) -> @Sendable (JSONValue) -> Bool {
            { $0["name"] == "setAuthenticationStatus" && $0["args"]?["status"]?.intValue == status }
        }

        static func logins(_ lab: Lab) throws -> String {
            try SQLiteShell.run(lab.database, "SELECT group_concat(mvpd || ':' || kind, ',') FROM logins ORDER BY id")
        }

        @Test func aTempPassLoginFromThePickerSaysN011AndItsAuthorizationZ011() async throws {
            let (lab, files) = try await Self.lab(
                entitlements: #"{"tempPass": {"TempPass_TEST40": {"ttl": 3600, "displayName": "Temp Pass 1 h"}}}"#,
                fleet: ["login: {provider: temppass}"]
            )
            defer { _ = files }
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                let picker = try #require(await DaemonEndToEndTests.nextEvent(&events, where: Self.isName("displayProviderDialog")))
                let mvpds = try #require(picker["args"]?["mvpds"]?.arrayValue)
                #expect(mvpds.first { $0["ID"] == "TempPass_TEST40" }?["tempPass"] == true)
                #expect(mvpds.filter { $0["tempPass"] == true }.count == 1, "\(mvpds)")

                let login = try #require(await Self.events(&events, until: Self.isStatus("N011")))
                #expect(Self.names(login) == ["sendTrackingData", "setAuthenticationStatus:1", "sendTrackingData", "status:N011"])
                #expect(login.first?["args"]?["data"]?.arrayValue?.first == "TempPass_TEST40")
                #expect(login.last?["args"]?["statusDictionary"]?["level"] == "info")

                _ = try await client.call(method: "getAuthorization", params: ["device": "stb-1", "resource": "REF30"])
                let authorized = try #require(await Self.events(&events, until: Self.isStatus("Z011")))
                #expect(Self.names(authorized) == ["setToken", "sendTrackingData", "status:Z011"])
                #expect(authorized.last?["args"]?["statusDictionary"]?["resource"] == "REF30")
            }
            #expect(try Self.logins(lab) == "TempPass_TEST40:temppass")
        }

        @Test func devicesAddTakesTheLoginOptionOverTheSocket() async throws {
            let (lab, files) = try await Self.lab(entitlements: #"{"tempPass": {"TempPass_TEST40": {"ttl": 3600}}}"#)
            defer { _ = files }
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                let added = try await client.call(
                    method: "devices.add",
                    params: ["device": "tp-1", "scenario": "login", "login": ["provider": "temppass"]]
                )
                #expect(added["loginProvider"] == "temppass")
                let status = try #require(
                    await DaemonEndToEndTests.nextEvent(&events) {
                        $0["device"] == "tp-1" && $0["name"] == "status" && $0["args"]?["statusDictionary"]?["errorId"] == "N011"
                    }
                )
                #expect(status["args"]?["statusDictionary"]?["mvpd"] == "TempPass_TEST40")
                let device = try await client.call(method: "devices.get", params: ["device": "tp-1"])
                #expect(device["authenticated"]?["kind"] == "temppass")
                do {
                    _ = try await client.call(method: "devices.add", params: ["device": "tp-2", "login": ["provider": "free"]])
                    Issue.record("an unknown login provider was accepted")
                } catch let error as RPCError {
                    #expect(error.code == -32602)
                }
            }
            // The configured device picks a regular MVPD: it shows a code and is never logged in with TempPass.
            #expect(try SQLiteShell.run(lab.database, "SELECT count(*) FROM logins WHERE device = 'stb-1'") == "0")
        }

        @Test func aSpentPromotionalTempPassSaysN111AndLogsTheDeviceOut() async throws {
            let (lab, files) = try await Self.lab(
                entitlements: #"{"tempPass": {"flexibleTempPass": {"ttl": 86400, "maxResources": 1}}}"#,
                fleet: ["login: {provider: temppass, temppass_email: lab@example.com}"]
            )
            defer { _ = files }
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                _ = try #require(await DaemonEndToEndTests.nextEvent(&events, where: Self.isStatus("N011")))

                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "REF30"])
                let first = try #require(await Self.events(&events, until: Self.isStatus("Z011")))
                #expect(Self.names(first) == ["setToken", "sendTrackingData", "status:Z011"])

                // The one resource the promotion allows is used: the next is refused and the TempPass is over.
                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "Live"])
                let spent = try #require(await Self.events(&events, until: Self.isName("sendTrackingData")))
                #expect(Self.names(spent) == ["status:N111", "setAuthenticationStatus:0", "tokenRequestFailed", "sendTrackingData"])
                #expect(spent.first?["args"]?["statusDictionary"]?["details"] == "temporary_access_resources_limit_exceeded")
                #expect(spent.first?["args"]?["statusDictionary"]?["level"] == "warning")
                #expect(spent.dropFirst(2).first?["args"]?["errorCode"] == "User Not Authorized Error")
            }
        }

        @Test func anAuthNAllDegradationLogsInWithN010AuthorizesWithZ010AndAuthZNoneSaysZ169() async throws {
            let (lab, files) = try await Self.lab(
                entitlements: #"{"degradation": [{"serviceProvider": "REF30", "mvpd": "Cablevision", "rule": "AuthNAll"}]}"#,
                mvpd: "Cablevision"
            )
            defer { _ = files }
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                let login = try #require(await Self.events(&events, until: Self.isStatus("N010")))
                #expect(Array(Self.names(login).suffix(3)) == ["setAuthenticationStatus:1", "sendTrackingData", "status:N010"])
                #expect(!Self.names(login).contains("status:REGCODE"), "no code under AuthNAll")

                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "REF30"])
                let authorized = try #require(await Self.events(&events, until: Self.isStatus("Z010")))
                #expect(Self.names(authorized) == ["setToken", "sendTrackingData", "status:Z010"])

                let rule = #"{"degradation": [{"serviceProvider": "REF30", "mvpd": "Cablevision", "rule": "AuthZNone"}]}"#
                #expect(try await lab.backend.request("/_sim/entitlements", method: "PUT", json: rule).status == 200)
                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "REF30"])
                let denied = try #require(await Self.events(&events, until: Self.isName("sendTrackingData")))
                #expect(Self.names(denied) == ["status:Z169", "tokenRequestFailed", "sendTrackingData"])
                #expect(denied.first?["args"]?["statusDictionary"]?["details"] == "authorization_denied_by_degradation_rule")
            }
            #expect(try Self.logins(lab) == "Cablevision:degraded")
        }

        @Test func outOfHomeAHomeBasedLoginIsDeniedWithZ100AndEnded() async throws {
            // Every address the device may come from is "home" at first (a bound loopback address, or a forwarded one).
            let home = #"{"homeNetworks": {"Cablevision": {"addresses": ["198.18.0.0/15", "127.0.0.0/8", "::1/128"]}}}"#
            let (lab, files) = try await Self.lab(entitlements: home, mvpd: "Cablevision")
            defer { _ = files }
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                try await lab.approveShownCode(&events)
                // The login's own tracking comes next; the calls below start after it.
                _ = try #require(await DaemonEndToEndTests.nextEvent(&events, where: Self.isName("sendTrackingData")))
                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "REF30"])
                let granted = try #require(await Self.events(&events, until: Self.isName("sendTrackingData")))
                #expect(Self.names(granted) == ["setToken", "sendTrackingData"])

                // The device leaves home: its address is no longer in the MVPD's home network.
                let away = #"{"homeNetworks": {"Cablevision": {"addresses": ["10.255.0.0/16"]}}}"#
                #expect(try await lab.backend.request("/_sim/entitlements", method: "PUT", json: away).status == 200)
                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "REF30"])
                let denied = try #require(await Self.events(&events, until: Self.isName("sendTrackingData")))
                #expect(Self.names(denied) == ["status:Z100", "setAuthenticationStatus:0", "tokenRequestFailed", "sendTrackingData"])
                #expect(denied.first?["args"]?["statusDictionary"]?["details"] == "authorization_denied_by_hba_policies")
                #expect(denied.dropFirst(2).first?["args"]?["errorCode"] == "User Not Authorized Error")
            }
        }

        @Test func parentalControlAndNetworkItemErrorsAndSeveralResourcesItemByItem() async throws {
            let errors = #"""
                {"itemErrors": {"resources": {"adult-movie": "authorization_denied_by_parental_controls",
                                              "live-news": "network_connection_timeout"}}}
                """#
            let (lab, files) = try await Self.lab(entitlements: errors, mvpd: "Cablevision")
            defer { _ = files }
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                try await lab.approveShownCode(&events)
                // The login's own tracking comes next; the calls below start after it.
                _ = try #require(await DaemonEndToEndTests.nextEvent(&events, where: Self.isName("sendTrackingData")))

                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "adult-movie"])
                let parental = try #require(await Self.events(&events, until: Self.isName("sendTrackingData")))
                #expect(Self.names(parental) == ["status:Z100", "tokenRequestFailed", "sendTrackingData"])
                #expect(parental.first?["args"]?["statusDictionary"]?["details"] == "authorization_denied_by_parental_controls")

                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "live-news"])
                let network = try #require(await Self.events(&events, until: Self.isName("sendTrackingData")))
                #expect(Self.names(network) == ["status:Z120", "tokenRequestFailed", "sendTrackingData"])
                #expect(network.first?["args"]?["statusDictionary"]?["details"] == "network_connection_timeout")

                _ = try await client.call(
                    method: "checkPreauthorizedResources",
                    params: ["device": "stb-1", "resources": ["live-news", "REF30", "adult-movie", "Live"]]
                )
                let preauthorized = try #require(await DaemonEndToEndTests.nextEvent(&events, where: Self.isName("preauthorizedResources")))
                #expect(preauthorized["args"]?["resources"] == ["REF30", "Live"])
                let items = preauthorized["args"]?["errors"]?.arrayValue ?? []
                #expect(items.map { $0["resource"] } == ["live-news", "adult-movie"])
                #expect(items.map { $0["code"] } == ["network_connection_timeout", "authorization_denied_by_parental_controls"])
                #expect(items.map { $0["action"] } == ["retry", "none"])

                // The login is kept through all of it.
                let device = try await client.call(method: "devices.get", params: ["device": "stb-1"])
                #expect(device["authenticated"]?["kind"] == "regular")
            }
        }
    }
}

/// Events seen while waiting, shared with the waiting task.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [JSONValue] = []

    func append(_ event: JSONValue) { lock.withLock { list.append(event) } }

    var events: [JSONValue] { lock.withLock { list } }
}
