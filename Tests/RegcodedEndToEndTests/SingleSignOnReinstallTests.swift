import ControlRPC
import Foundation
import RegcodeSupport
import Testing

/// `apps.reinstall` (sso.md §3.4 E6): every app of a vendor uninstalled and installed again gets a new
/// IDFV, so a new AccessEnabler device id, while the shared storage keeps the token the app obtained
/// before; an AccessEnabler ≥ 2.5 finds its own token bound to another id and reports `SEC412`.
extension EndToEnd {
    @Suite(.timeLimit(.minutes(3))) struct SingleSignOnReinstallTests {
        typealias TwoApps = SingleSignOnTableTests.TwoApps

        static func deviceIDs(_ apps: TwoApps) async throws -> [String: String] {
            let listed = try await apps.client.call(method: "apps.list", params: ["device": .string(TwoApps.device)])
            var ids: [String: String] = [:]
            for app in listed["apps"]?.arrayValue ?? [] {
                if let id = app["app"]?.stringValue { ids[id] = app["deviceId"]?.stringValue }
            }
            return ids
        }

        @Test func sec412_afterVendorReinstall() async throws {
            try await SingleSignOnTableTests.withTwoApps(("com.x.y.AppA", "T1", "2.5"), ("com.x.y.AppB", "T1", "2.5")) { apps in
                #expect(try await apps.setRequestor("A") == ["setRequestorComplete(1)"])
                #expect(try await apps.logIn("A") == SingleSignOnTableTests.loginEvents)
                #expect(try await apps.tokens().compactMap { $0["owner"]?.stringValue } == ["A"])
                let before = try await Self.deviceIDs(apps)
                // Same team and prefix: one vendor, one id (the device's stored one).
                #expect(before["A"] != nil && before["A"] == before["B"])

                let answer = try await apps.client.call(
                    method: "apps.reinstall",
                    params: ["device": .string(TwoApps.device), "app": "A"]
                )
                let reinstalled = answer["reinstalled"]?.arrayValue ?? []
                #expect(reinstalled.compactMap { $0["app"]?.stringValue } == ["A", "B"], "both apps are the vendor's")
                #expect(reinstalled.allSatisfy { $0["vendorGeneration"] == 1 })
                let after = try await Self.deviceIDs(apps)
                #expect(after["A"] != before["A"], "a new IDFV: a new AccessEnabler device id")
                #expect(after["A"] == after["B"])
                #expect(reinstalled.first?["deviceId"]?.stringValue == after["A"])
                #expect(reinstalled.first?["previousDeviceId"]?.stringValue == before["A"])
                // The shared storage survived the uninstall: A's old token is still there.
                #expect(try await apps.tokens().compactMap { $0["owner"]?.stringValue } == ["A"])

                // A's setRequestor finds its own token bound to its previous id: SEC412, token deleted.
                try await apps.call("setRequestor", "A")
                var seen: [JSONValue] = []
                while let event = await apps.next("A") {
                    seen.append(event)
                    if event["name"] == "setRequestorComplete" { break }
                }
                #expect(seen.map(TwoApps.label) == ["sso.tokenWiped", "status(SEC412)", "setRequestorComplete(1)"])
                #expect(seen.first?["args"]?["reason"] == "ownDeviceIdChanged")
                let status = seen.first { $0["name"] == "status" }?["args"]?["statusDictionary"]
                #expect(status?["errorId"] == "SEC412")
                #expect(status?["level"] == "warning")
                #expect(try await apps.checkAuthentication("A") == [SingleSignOnTableTests.notAuthenticated])
                #expect(try await apps.tokens().isEmpty, "A's token is gone")

                // An app the device does not host: invalid params naming the member.
                do {
                    _ = try await apps.client.call(method: "apps.reinstall", params: ["device": .string(TwoApps.device), "app": "Z"])
                    Issue.record("apps.reinstall of an unknown app succeeded")
                } catch let error as RPCError {
                    #expect(error.code == -32602)
                    #expect(error.data?["member"] == "app")
                }
            }
        }
    }
}
