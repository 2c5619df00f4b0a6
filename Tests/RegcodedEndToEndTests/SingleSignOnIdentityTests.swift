import ControlSocket
import Foundation
import RegcodeSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// REST v2 single sign-on by platform identity and service token (sso.md §2.2, §2.3, §3.3, cases E15–E17): two
/// devices of a real `regcoded` (two fleets sharing one `sso_identity`) against one `pass-sim`. The first device
/// logs in with a code; the second is then authenticated without one; a logout of the second is a single logout.
extension EndToEnd {
    @Suite(.timeLimit(.minutes(3))) struct SingleSignOnIdentityTests {
        typealias Lab = DaemonEndToEndTests.Lab

        static let first = "first-1"
        static let second = "second-1"

        struct TwoDevices {
            let lab: Lab
            let client: ControlClient
            var events: ControlClient.Notifications.Iterator

            /// A daemon with fleets `first` and `second` (one v2 device each, idle, MVPD `Comcast_SSO`) whose
            /// `sso_identity` section is `identity` (YAML lines indented under the key).
            static func start(identity: String, wire: BackendWire) async throws -> Lab {
                let files = try TemporaryDirectory()
                let config = files.path("regcoded.yaml")
                let fleet = { (name: String) in
                    """
                      - name: \(name)
                        count: 1
                        profile: v2
                        mvpd: Comcast_SSO
                        scenario: idle
                        sso_identity:
                    \(identity)
                    """
                }
                try "fleets:\n\(fleet("first"))\n\(fleet("second"))\n".write(toFile: config, atomically: true, encoding: .utf8)
                return try await Lab.start(extraArguments: ["--config", config], simulatorArguments: ["--no-throttle"], wire: wire)
            }

            func call(_ method: String, _ device: String, _ extra: [String: JSONValue] = [:]) async throws {
                var params: [String: JSONValue] = ["device": .string(device)]
                for (key, value) in extra { params[key] = value }
                _ = try await client.call(method: method, params: .object(params))
            }

            mutating func next(_ device: String) async -> JSONValue? {
                await DaemonEndToEndTests.nextEvent(&events, timeout: .seconds(30)) { $0["device"]?.stringValue == device }
            }

            /// `device`'s events up to (and including) the first one named `last`, labelled.
            mutating func until(_ device: String, _ last: String, approving: Bool = false) async throws -> [String] {
                var seen: [String] = []
                while let event = await next(device) {
                    seen.append(SingleSignOnTableTests.TwoApps.label(event))
                    if approving, DaemonEndToEndTests.isRegcode(event) {
                        let code = try #require(event["args"]?["statusDictionary"]?["message"]?.stringValue)
                        #expect(try await lab.approve(code) == 200)
                    }
                    if event["name"]?.stringValue == last { break }
                }
                return seen
            }

            mutating func setRequestor(_ device: String) async throws -> [String] {
                try await call("setRequestor", device)
                return try await until(device, "setRequestorComplete")
            }

            /// getAuthentication up to its `setAuthenticationStatus` and the tracking after it; approves a code if one
            /// is shown.
            mutating func getAuthentication(_ device: String) async throws -> [String] {
                try await call("getAuthentication", device)
                var seen = try await until(device, "setAuthenticationStatus", approving: true)
                if let tracking = await next(device) { seen.append(SingleSignOnTableTests.TwoApps.label(tracking)) }
                return seen
            }

            func simulator(_ path: String) async throws -> JSONValue {
                try JSONValueParser.parse(try await lab.backend.request(path).body)
            }

            /// Polls answered and codes issued by pass-sim so far.
            func pollsAndCodes() async throws -> (polls: Int, codes: Int) {
                let stats = try await simulator("/_sim/stats")
                var polls = 0
                for (_, count) in stats["requests"]?["poll"]?.objectValue ?? [:] { polls += Int(count.intValue ?? 0) }
                let codes = try await simulator("/_sim/codes")["codes"]?.arrayValue?.count ?? -1
                return (polls, codes)
            }
        }

        static func withTwoDevices(identity: String, wire: BackendWire = .http, _ body: (inout TwoDevices) async throws -> Void) async throws {
            let lab = try await TwoDevices.start(identity: identity, wire: wire)
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["devices": [.string(Self.first), .string(Self.second)]])
                var devices = TwoDevices(lab: lab, client: client, events: client.notifications.makeAsyncIterator())
                try await body(&devices)
            }
        }

        static let authenticated = "setAuthenticationStatus(1)"
        static let codeLogin = ["sendTrackingData(mvpdSelection)", "status(REGCODE)", authenticated, "sendTrackingData(authenticationDetection)"]
        static let ssoLogin = ["sendTrackingData(mvpdSelection)", authenticated, "sendTrackingData(authenticationDetection)"]

        /// Device 1 logs in with a code; device 2, presenting the same identity, is authenticated without one.
        static func secondDeviceWithoutCode(_ devices: inout TwoDevices, linkMethod: String) async throws {
            #expect(try await devices.setRequestor(Self.first) == ["setRequestorComplete(1)"])
            #expect(try await devices.getAuthentication(Self.first) == Self.codeLogin)
            let links = try await devices.simulator("/_sim/sso")["links"]?.arrayValue ?? []
            #expect(links.count == 1, "device 1's login is linked to its identity: \(links)")
            #expect(links.first?["method"]?.stringValue == linkMethod)
            #expect(links.first?["mvpd"] == "Comcast_SSO")
            let before = try await devices.pollsAndCodes()
            #expect(before.codes == 1)

            #expect(try await devices.setRequestor(Self.second) == ["setRequestorComplete(1)"])
            #expect(try await devices.getAuthentication(Self.second) == Self.ssoLogin, "no status REGCODE")
            let after = try await devices.pollsAndCodes()
            #expect(after.polls == before.polls, "device 2 never polled")
            #expect(after.codes == before.codes, "device 2 got no code")

            // Device 2 is authorized with the single sign-on profile.
            try await devices.call("checkAuthorization", Self.second, ["resource": "Live"])
            #expect(try await devices.until(Self.second, "setToken").last == "setToken")
        }

        /// The identity tokens come over the same wire as every backend call.
        @Test(arguments: BackendWire.allCases) func v2_platformIdentity_secondDevice_noRegcode(wire: BackendWire) async throws {
            try await Self.withTwoDevices(identity: "      platform_user: alice", wire: wire) { devices in
                try await Self.secondDeviceWithoutCode(&devices, linkMethod: "platform")
            }
        }

        @Test func v2_serviceToken_crossDevice() async throws {
            try await Self.withTwoDevices(identity: "      service_user: bob") { devices in
                try await Self.secondDeviceWithoutCode(&devices, linkMethod: "serviceToken")
            }
        }

        @Test func v2_singleLogout() async throws {
            try await Self.withTwoDevices(identity: "      platform_user: alice") { devices in
                try await Self.secondDeviceWithoutCode(&devices, linkMethod: "platform")

                // Device 2 logs out: a single logout, device 1's login and the link are gone on the backend.
                try await devices.call("logout", Self.second)
                #expect(try await devices.until(Self.second, "setAuthenticationStatus").last == "setAuthenticationStatus(0)")
                let sso = try await devices.simulator("/_sim/sso")
                #expect(sso["links"]?.arrayValue?.isEmpty == true, "\(sso)")

                // Device 1 still holds its profile locally, but the backend no longer authorizes it.
                try await devices.call("checkAuthorization", Self.first, ["resource": "Live"])
                var seen: [JSONValue] = []
                while let event = await devices.next(Self.first) {
                    seen.append(event)
                    if event["name"] == "tokenRequestFailed" || event["name"] == "setToken" { break }
                }
                let names = seen.map(SingleSignOnTableTests.TwoApps.label)
                #expect(!names.contains("setToken"), "\(names)")
                let failed = try #require(seen.last(where: { $0["name"] == "tokenRequestFailed" }), "\(names)")
                #expect(failed["args"]?["errorCode"] == "User Not Authenticated Error")
            }
        }
    }
}
