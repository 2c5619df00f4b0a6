import ControlRPC
import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple single sign-on on tvOS (cookbook flow E; sso.md §3.4 E7–E12) over the real control socket of a
/// real `regcoded` against `pass-sim`: the emulated TV Provider account, Apple's picker, the REST v2
/// partner exchange, permissions, and logout. pass-sim's defaults make `Comcast_SSO` a supported
/// provider (Apple id `Comcast`) and `Spectrum` a picker-only one.
extension EndToEnd {
    @Suite(.timeLimit(.minutes(3))) struct SingleSignOnAppleTests {
        typealias Lab = DaemonEndToEndTests.Lab
        typealias TwoApps = SingleSignOnTableTests.TwoApps

        /// One tvOS device, `tv-1`, whose app is idle, with the given `tv_provider` section.
        struct TV {
            let lab: Lab
            let client: ControlClient
            var events: ControlClient.Notifications.Iterator
            static let device = "tv-1"
            /// The device its calls go to.
            var device = Self.device

            static func start(tvProvider: String, apps: String = "", wire: BackendWire) async throws -> Lab {
                // Beside the database, so the file outlives this call (a SIGHUP reads it again).
                let directory = try TemporaryDirectory()
                let config = directory.path("regcoded.yaml")
                try """
                fleets:
                  - name: tv
                    count: 1
                    scenario: idle
                    tv_provider:
                \(tvProvider)
                \(apps)
                """.write(toFile: config, atomically: true, encoding: .utf8)
                // How a lab hands a separately started pass-sim the TV Provider's identity provider: the key regcoded
                // keeps beside its database, made beforehand, and its public half given to pass-sim.
                let publicKey = try provisionIdentityProvider(in: directory)
                return try await Lab.start(
                    extraArguments: ["--config", config],
                    simulatorArguments: ["--no-throttle", "--tv-provider-idp-key", publicKey],
                    wire: wire,
                    directory: directory
                )
            }

            /// Writes `regcoded.tv-provider-idp.key` where the lab's database goes; returns the public key's file.
            static func provisionIdentityProvider(in directory: TemporaryDirectory) throws -> String {
                let identityProvider = TVProviderIdentityProvider()
                try identityProvider.privateKeyPEM.write(toFile: directory.path("regcoded.tv-provider-idp.key"), atomically: true, encoding: .utf8)
                let publicKey = directory.path("idp-public.pem")
                try identityProvider.publicKeyPEM.write(toFile: publicKey, atomically: true, encoding: .utf8)
                return publicKey
            }

            func call(_ method: String, _ extra: [String: JSONValue] = [:]) async throws -> JSONValue {
                var params: [String: JSONValue] = ["device": .string(device)]
                for (key, value) in extra { params[key] = value }
                return try await client.call(method: method, params: .object(params))
            }

            /// Events up to and including the first whose label is in `until`.
            mutating func events(until: Set<String>) async -> [String] {
                var seen: [String] = []
                while let event = await DaemonEndToEndTests.nextEvent(&events, timeout: .seconds(30), where: { _ in true }) {
                    let label = TwoApps.label(event)
                    seen.append(label)
                    if label == "status(REGCODE)" {
                        let code = event["args"]?["statusDictionary"]?["message"]?.stringValue ?? ""
                        _ = try? await lab.approve(code)
                    }
                    if until.contains(label) { break }
                }
                return seen
            }

            mutating func afterCall(_ method: String, _ extra: [String: JSONValue] = [:], until: Set<String>) async throws -> [String] {
                _ = try await call(method, extra)
                let seen = await events(until: until)
                // checkAuthentication's answer is followed by its authenticationDetection tracking.
                if method == "checkAuthentication" { _ = await events(until: ["sendTrackingData(authenticationDetection)"]) }
                return seen
            }

            /// Requests pass-sim answered on the partner endpoints so far.
            func partnerRequests() async throws -> Int {
                let sso = try JSONValueParser.parse(try await lab.backend.request("/_sim/sso").body)
                return sso["profiles"]?["appleSSO"]?.arrayValue?.count ?? 0
            }
        }

        static func withTV(
            _ tvProvider: String,
            apps: String = "",
            wire: BackendWire = .http,
            _ body: (inout TV) async throws -> Void
        ) async throws {
            let lab = try await TV.start(tvProvider: tvProvider, apps: apps, wire: wire)
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["devices": [.string(TV.device)]])
                var tv = TV(lab: lab, client: client, events: client.notifications.makeAsyncIterator())
                try await body(&tv)
            }
        }

        static let complete: Set<String> = ["setRequestorComplete(1)", "setRequestorComplete(0)"]
        static let authStatus: Set<String> = ["setAuthenticationStatus(1)", "setAuthenticationStatus(0)"]

        @Test(arguments: BackendWire.allCases) func apple_silentExchange_tokenSource_logoutVSA203_relaunch(wire: BackendWire) async throws {
            try await Self.withTV("      provider: Comcast\n      user_id: alice\n      access: granted", wire: wire) { tv in
                // E7: the exchange is silent; setRequestorComplete is the only callback.
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.partnerRequests() == 1)
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(1)"])
                _ = try await tv.call("getMetadata", ["opCode": 3, "user_metadata_name": "tokenSource"])
                let metadata = await DaemonEndToEndTests.nextEvent(&tv.events) { $0["name"] == "setMetadataStatus" }
                #expect(metadata?["args"]?["metadata"] == "Apple")

                // E12: logout of an Apple token tells the user to sign out of the TV Provider too.
                #expect(
                    try await tv.afterCall("logout", until: Self.authStatus) == ["status(VSA203)", "setAuthenticationStatus(0)"]
                )
                #expect(try await tv.partnerRequests() == 0, "the backend's appleSSO profile was logged out")
                // The account is still signed in: the next launch signs the app in again, silently.
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(1)"])

                // Signing out in Settings ends it: logout, relaunch, and the app stays signed out.
                _ = try await tv.call("vsa.signOut")
                _ = try await tv.afterCall("logout", until: Self.authStatus)
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(0)"])
            }
        }

        /// The embedded simulator trusts the daemon's TV Provider identity provider by itself, with no `/_sim` route
        /// in the exchange; the key is kept beside the database for a separately started pass-sim.
        @Test func apple_embeddedSimulator_trustsTheDaemonsIdentityProvider() async throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            try """
            fleets:
              - name: tv
                count: 1
                scenario: idle
                tv_provider:
                  provider: Comcast
                  user_id: alice
                  access: granted
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let socket = directory.path("regcoded.sock")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--config", config, "--database", directory.path("regcoded.sqlite"), "--socket", socket,
                    "--simulator-listen", "127.0.0.1:0", "--no-print-codes", "--log-level", "info",
                ]
            )
            defer { daemon.signal(SIGTERM) }
            let deadline = ContinuousClock.now + .seconds(30)
            while await SecondDaemonTests.devices(at: socket) != 1 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(await SecondDaemonTests.devices(at: socket) == 1, "regcoded did not start: \(daemon.text)")
            let key = directory.path("regcoded.tv-provider-idp.key")
            let attributes = try FileManager.default.attributesOfItem(atPath: key)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let publicKey = try String(contentsOfFile: directory.path("regcoded.tv-provider-idp.pem"), encoding: .utf8)
            #expect(publicKey.contains("BEGIN PUBLIC KEY"))

            try await ControlClient.withConnection(to: socket) { client in
                _ = try await client.call(method: "subscribe", params: ["devices": [.string(TV.device)]])
                var events = client.notifications.makeAsyncIterator()
                _ = try await client.call(method: "setRequestor", params: ["device": .string(TV.device)])
                let complete = await DaemonEndToEndTests.nextEvent(&events) { $0["name"] == "setRequestorComplete" }
                #expect(complete?["args"]?["status"] == 1)
                _ = try await client.call(method: "checkAuthentication", params: ["device": .string(TV.device)])
                let status = await DaemonEndToEndTests.nextEvent(&events) { $0["name"] == "setAuthenticationStatus" }
                #expect(status?["args"]?["status"] == 1, "the silent exchange signed the app in")
                _ = try await client.call(
                    method: "getMetadata",
                    params: ["device": .string(TV.device), "opCode": 3, "user_metadata_name": "tokenSource"]
                )
                let metadata = await DaemonEndToEndTests.nextEvent(&events) { $0["name"] == "setMetadataStatus" }
                #expect(metadata?["args"]?["metadata"] == "Apple")
            }
        }

        @Test func apple_picker_supported_signsTheAccountIn() async throws {
            try await Self.withTV("      access: granted") { tv in
                _ = try await tv.afterCall("setRequestor", until: Self.complete)
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(0)"])
                #expect(try await tv.afterCall("getAuthentication", until: ["presentTvProviderDialog"]) == ["presentTvProviderDialog"])
                // E8: a supported provider: dismiss, exchange, authenticated, no code.
                #expect(
                    try await tv.afterCall("vsa.pick", ["provider": "Comcast"], until: Self.authStatus)
                        == ["dismissTvProviderDialog", "setAuthenticationStatus(1)"]
                )
                let status = try await tv.call("vsa.status")
                #expect(status["signedIn"] == true)
                #expect(status["provider"] == "Comcast")
                // No picker is open any more: a second answer is refused.
                await #expect(throws: RPCError.self) { try await tv.call("vsa.pick", ["cancel": true]) }
            }
        }

        @Test func apple_picker_pickerOnly_regcode() async throws {
            try await Self.withTV("      access: granted") { tv in
                _ = try await tv.afterCall("setRequestor", until: Self.complete)
                _ = try await tv.afterCall("getAuthentication", until: ["presentTvProviderDialog"])
                // E9 (KB-16609): a picker-only provider falls back to the registration code.
                #expect(
                    try await tv.afterCall("vsa.pick", ["provider": "Spectrum"], until: Self.authStatus)
                        == [
                            "dismissTvProviderDialog", "sendTrackingData(mvpdSelection)", "status(REGCODE)",
                            "setAuthenticationStatus(1)",
                        ]
                )
                #expect(try await tv.call("vsa.status")["signedIn"] == false, "a picker-only provider does not sign the account in")
                _ = await tv.events(until: ["sendTrackingData(authenticationDetection)"])
                _ = try await tv.call("getMetadata", ["opCode": 3, "user_metadata_name": "tokenSource"])
                let metadata = await DaemonEndToEndTests.nextEvent(&tv.events) { $0["name"] == "setMetadataStatus" }
                #expect(metadata?["args"]?["metadata"] == .null)
            }
        }

        @Test func apple_N003_otherProvider_and_N005_cancel() async throws {
            try await Self.withTV("      access: granted") { tv in
                _ = try await tv.afterCall("setRequestor", until: Self.complete)
                _ = try await tv.afterCall("getAuthentication", until: ["presentTvProviderDialog"])
                #expect(
                    try await tv.afterCall("vsa.pick", ["other": true], until: ["displayProviderDialog"])
                        == ["dismissTvProviderDialog", "status(N003)", "displayProviderDialog"]
                )
                _ = try await tv.afterCall("getAuthentication", until: ["presentTvProviderDialog"])
                #expect(
                    try await tv.afterCall("vsa.pick", ["cancel": true], until: Self.authStatus)
                        == ["dismissTvProviderDialog", "status(N005)", "setAuthenticationStatus(0)"]
                )
            }
        }

        @Test func apple_permission_VSA403_VSA404_atEachStep() async throws {
            try await Self.withTV("      provider: Comcast\n      access: denied") { tv in
                // E11, denied: at setRequestor, at checkAuthentication (signed in), at getAuthentication.
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["status(VSA403)", "setRequestorComplete(1)"])
                #expect(
                    try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["status(VSA403)", "setAuthenticationStatus(0)"]
                )
                #expect(
                    try await tv.afterCall("getAuthentication", until: ["displayProviderDialog"]) == ["status(VSA403)", "displayProviderDialog"]
                )
                // Not determined: the same with VSA404.
                _ = try await tv.call("vsa.setAccess", ["access": "notDetermined"])
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["status(VSA404)", "setRequestorComplete(1)"])
                #expect(
                    try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["status(VSA404)", "setAuthenticationStatus(0)"]
                )
                // Granted: the silent exchange happens at the next launch.
                _ = try await tv.call("vsa.setAccess", ["access": "granted"])
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(1)"])
            }
        }

        @Test func v2_partner_secondApp_silent() async throws {
            // Two teams: nothing is shared through storage, the TV Provider account is the only link.
            let apps = """
                    apps:
                      - id: A
                        bundle_id: com.a.App
                        team_id: T1
                      - id: B
                        bundle_id: com.b.App
                        team_id: T2
                """
            try await Self.withTV("      access: granted", apps: apps) { tv in
                _ = try await tv.afterCall("setRequestor", ["app": "A"], until: Self.complete)
                _ = try await tv.afterCall("getAuthentication", ["app": "A"], until: ["presentTvProviderDialog"])
                #expect(
                    try await tv.afterCall("vsa.pick", ["app": "A", "provider": "Comcast"], until: Self.authStatus)
                        == ["dismissTvProviderDialog", "setAuthenticationStatus(1)"]
                )
                _ = await tv.events(until: ["sendTrackingData(authenticationDetection)"])
                // E13: the second app exchanges silently at setRequestor (its own appleSSO profile, its own client).
                #expect(try await tv.afterCall("setRequestor", ["app": "B"], until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.afterCall("checkAuthentication", ["app": "B"], until: Self.authStatus) == ["setAuthenticationStatus(1)"])
                #expect(try await tv.partnerRequests() == 2)
            }
        }

        @Test func v2_partner_fallback_configuration_regcode() async throws {
            try await Self.withTV("      provider: Comcast\n      access: granted") { tv in
                // Single sign-on switched off for tvOS on the integration: the backend falls back to a code.
                let put = try await tv.lab.backend.request(
                    "/_sim/integrations/REF30/Comcast_SSO",
                    method: "PUT",
                    json: #"{"sso":{"appleTvos":false}}"#
                ).status
                #expect(put == 200)
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(0)"])
                // E14: configuration_fallback answers with a code; the device polls it like any other.
                #expect(
                    try await tv.afterCall("getAuthentication", until: Self.authStatus) == ["status(REGCODE)", "setAuthenticationStatus(1)"]
                )
                #expect(try await tv.partnerRequests() == 0)
            }
        }

        @Test func apple_fault_APPL_APPL_ERROR_VSA503_atEachStep() async throws {
            try await Self.withTV("      provider: Comcast\n      access: granted") { tv in
                _ = try await tv.call("vsa.injectFault", ["kind": "serviceTemporarilyUnavailable"])
                // E11, a TV Provider failure: APPL at setRequestor, APPL_ERROR at checkAuthentication, VSA503 at getAuthentication.
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["status(APPL)", "setRequestorComplete(1)"])
                #expect(
                    try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["status(APPL_ERROR)", "setAuthenticationStatus(0)"]
                )
                #expect(
                    try await tv.afterCall("getAuthentication", until: ["displayProviderDialog"]) == ["status(VSA503)", "displayProviderDialog"]
                )
                _ = try await tv.call("vsa.injectFault", ["kind": .null])
                #expect(try await tv.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                #expect(try await tv.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(1)"])
            }
        }

        @Test func apple_N004_providerWithoutSingleSignOnForTheRequestor() async throws {
            try await Self.withTV("      access: granted") { tv in
                // Spectrum boarded as SUPPORTED but without platform services: in the picker, not usable for SSO.
                let put = try await tv.lab.backend.request(
                    "/_sim/mvpds/Spectrum",
                    method: "PUT",
                    json:
                        #"{"displayName":"Spectrum","platformMappingId":"Spectrum","boardingStatus":"SUPPORTED","enablePlatformServices":false,"displayInPlatformPicker":true}"#
                ).status
                #expect(put == 200)
                _ = try await tv.afterCall("setRequestor", until: Self.complete)
                _ = try await tv.afterCall("getAuthentication", until: ["presentTvProviderDialog"])
                #expect(
                    try await tv.afterCall("vsa.pick", ["provider": "Spectrum"], until: ["displayProviderDialog"])
                        == ["dismissTvProviderDialog", "status(N004)", "displayProviderDialog"]
                )
            }
        }

        /// After a SIGHUP, a device added over the socket still answers the TV Provider's SAML request with the
        /// daemon's identity provider (a reload once dropped it from the catalog it applied).
        @Test func apple_afterReload_anAddedDeviceSignsInSilently() async throws {
            try await Self.withTV("      provider: Comcast\n      user_id: alice\n      access: granted") { tv in
                tv.lab.daemon.signal(SIGHUP)
                #expect(await tv.lab.daemon.waitForOutput("configuration reloaded"), "\(tv.lab.daemon.text)")
                _ = try await tv.client.call(method: "devices.add", params: ["device": "tv-2", "fleet": "tv"])
                try await ControlClient.withConnection(to: tv.lab.socket) { client in
                    _ = try await client.call(method: "subscribe", params: ["devices": ["tv-2"]])
                    var added = TV(lab: tv.lab, client: client, events: client.notifications.makeAsyncIterator(), device: "tv-2")
                    #expect(try await added.afterCall("setRequestor", until: Self.complete) == ["setRequestorComplete(1)"])
                    #expect(try await added.afterCall("checkAuthentication", until: Self.authStatus) == ["setAuthenticationStatus(1)"])
                    #expect(try await added.partnerRequests() == 1)
                }
                #expect(!tv.lab.daemon.text.contains("no identity provider"), "\(tv.lab.daemon.text)")
            }
        }
    }
}
