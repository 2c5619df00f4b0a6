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

/// The tech note's combination table ("SSO on iOS when using the Access Enabler"), row by row: two
/// apps on one device, over the real control socket of a real `regcoded` against `pass-sim` (v1, the
/// note's era). Each row asserts the callbacks in order and that an app signed in through shared
/// storage made no login of its own (no code requested, nothing polled).
extension EndToEnd {
    @Suite(.timeLimit(.minutes(3))) struct SingleSignOnTableTests {
        typealias Lab = DaemonEndToEndTests.Lab

        /// A daemon whose one device hosts apps `A` and `B` as `apps` describes, every app idle.
        struct TwoApps {
            let lab: Lab
            let client: ControlClient
            var events: ControlClient.Notifications.Iterator

            static let device = "sso-1"

            static func start(platform: String, osVersion: String, apps: String, profile: String = "v1", wire: BackendWire) async throws -> Lab {
                let files = try TemporaryDirectory()
                let config = files.path("regcoded.yaml")
                // The statement pass-sim issued (Lab passes it with --software-statement); each app registers its own client.
                try """
                fleets:
                  - name: sso
                    count: 1
                    profile: \(profile)
                    mvpd: Comcast_SSO
                    scenario: idle
                    device:
                      platform: \(platform)
                      os_version: "\(osVersion)"
                    apps:
                \(apps)
                """.write(toFile: config, atomically: true, encoding: .utf8)
                return try await Lab.start(extraArguments: ["--config", config], simulatorArguments: ["--no-throttle"], wire: wire)
            }

            /// An app entry of the configuration.
            static func app(_ id: String, bundle: String, team: String, ae: String) -> String {
                """
                      - id: \(id)
                        bundle_id: \(bundle)
                        team_id: \(team)
                        access_enabler: "\(ae)"
                """
            }

            func call(_ method: String, _ app: String, _ extra: [String: JSONValue] = [:]) async throws {
                var params: [String: JSONValue] = ["device": .string(Self.device), "app": .string(app)]
                for (key, value) in extra { params[key] = value }
                _ = try await client.call(method: method, params: .object(params))
            }

            /// The next event of `app`, whatever its name.
            mutating func next(_ app: String) async -> JSONValue? {
                await DaemonEndToEndTests.nextEvent(&events, timeout: .seconds(30)) { $0["app"]?.stringValue == app }
            }

            /// The names (with the status id, or the authentication status) of `app`'s next `count` events.
            mutating func names(_ app: String, _ count: Int) async -> [String] {
                var names: [String] = []
                for _ in 0..<count {
                    guard let event = await next(app) else { break }
                    names.append(Self.label(event))
                }
                return names
            }

            static func label(_ event: JSONValue) -> String {
                let name = event["name"]?.stringValue ?? "?"
                switch name {
                case "status": return "status(\(event["args"]?["statusDictionary"]?["errorId"]?.stringValue ?? "?"))"
                case "setAuthenticationStatus": return "setAuthenticationStatus(\(event["args"]?["status"]?.intValue ?? -1))"
                case "setRequestorComplete": return "setRequestorComplete(\(event["args"]?["status"]?.intValue ?? -1))"
                case "sendTrackingData": return "sendTrackingData(\(event["args"]?["eventName"]?.stringValue ?? "?"))"
                default: return name
                }
            }

            /// setRequestor, checkAuthentication and a full second-screen login of `app`; returns the events seen.
            mutating func logIn(_ app: String) async throws -> [String] {
                try await call("getAuthentication", app)
                var seen: [String] = []
                while let event = await next(app) {
                    seen.append(Self.label(event))
                    if event["name"] == "status", event["args"]?["statusDictionary"]?["errorId"] == "REGCODE" {
                        let code = try #require(event["args"]?["statusDictionary"]?["message"]?.stringValue)
                        #expect(try await lab.approve(code) == 200)
                    }
                    // An iOS device shows no code: the login page it navigates to carries it.
                    if event["name"] == "navigateToUrl" {
                        let url = try #require(event["args"]?["url"]?.stringValue)
                        #expect(try await lab.approve(try #require(Self.code(inLoginURL: url))) == 200)
                    }
                    if event["name"] == "setAuthenticationStatus" { break }
                }
                _ = await next(app)  // authenticationDetection tracking
                return seen
            }

            /// The code of a login URL: v1's `reg_code` parameter, or v2's last path segment.
            static func code(inLoginURL url: String) -> String? {
                guard let components = URLComponents(string: url) else { return nil }
                if let code = components.queryItems?.first(where: { $0.name == "reg_code" })?.value { return code }
                return components.path.split(separator: "/").last.map(String.init)
            }

            mutating func setRequestor(_ app: String) async throws -> [String] {
                try await call("setRequestor", app)
                var seen: [String] = []
                while let event = await next(app) {
                    seen.append(Self.label(event))
                    if event["name"] == "setRequestorComplete" { break }
                }
                return seen
            }

            /// checkAuthentication's events up to its `setAuthenticationStatus` (and the tracking after it).
            mutating func checkAuthentication(_ app: String) async throws -> [String] {
                try await call("checkAuthentication", app)
                var seen: [String] = []
                while let event = await next(app) {
                    seen.append(Self.label(event))
                    if event["name"] == "setAuthenticationStatus" { break }
                }
                _ = await next(app)
                return seen
            }

            /// Codes requested and polls answered by pass-sim so far.
            func loginRequests() async throws -> Int {
                let stats = try JSONValueParser.parse(try await lab.backend.request("/_sim/stats").body)
                var total = 0
                for endpoint in ["sessions", "poll"] {
                    for (_, count) in stats["requests"]?[endpoint]?.objectValue ?? [:] { total += Int(count.intValue ?? 0) }
                }
                return total
            }

            func tokens() async throws -> [JSONValue] {
                try await client.call(method: "storage.list", params: ["device": .string(Self.device)])["tokens"]?.arrayValue ?? []
            }

            func explain(_ app: String) async throws -> JSONValue {
                try await client.call(method: "sso.explain", params: ["device": .string(Self.device), "app": .string(app)])
            }
        }

        static func withTwoApps(
            platform: String = "ios",
            osVersion: String = "17.0",
            profile: String = "v1",
            wire: BackendWire = .http,
            _ a: (bundle: String, team: String, ae: String),
            _ b: (bundle: String, team: String, ae: String),
            _ body: (inout TwoApps) async throws -> Void
        ) async throws {
            let apps = TwoApps.app("A", bundle: a.bundle, team: a.team, ae: a.ae) + "\n" + TwoApps.app("B", bundle: b.bundle, team: b.team, ae: b.ae)
            let lab = try await TwoApps.start(platform: platform, osVersion: osVersion, apps: apps, profile: profile, wire: wire)
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["devices": [.string(TwoApps.device)]])
                var session = TwoApps(lab: lab, client: client, events: client.notifications.makeAsyncIterator())
                try await body(&session)
            }
        }

        static let authenticated = "setAuthenticationStatus(1)"
        static let notAuthenticated = "setAuthenticationStatus(0)"
        /// A second-screen login of an iOS app (the default platform here): the login page, no code shown.
        static let loginEvents = ["sendTrackingData(mvpdSelection)", "navigateToUrl", authenticated]
        /// The same on tvOS: the registration code.
        static let tvOSLoginEvents = ["sendTrackingData(mvpdSelection)", "status(REGCODE)", authenticated]

        // MARK: The table

        @Test(arguments: BackendWire.allCases) func ssoTable_R1_sameTeamSamePrefix(wire: BackendWire) async throws {
            try await Self.withTwoApps(wire: wire, ("com.x.y.AppA", "T1", "1.10"), ("com.x.y.AppB", "T1", "1.10")) { apps in
                #expect(try await apps.setRequestor("A") == ["setRequestorComplete(1)"])
                #expect(try await apps.checkAuthentication("A") == [Self.notAuthenticated])
                #expect(try await apps.logIn("A") == Self.loginEvents)

                let before = try await apps.loginRequests()
                #expect(try await apps.setRequestor("B") == ["setRequestorComplete(1)"])
                #expect(try await apps.checkAuthentication("B") == ["sso.tokenShared", Self.authenticated])
                #expect(try await apps.loginRequests() == before, "B signed in without a code or a poll")
                // B is authorized by the backend with the token A obtained: the device ids are equal.
                try await apps.call("checkAuthorization", "B", ["resource": "Live"])
                #expect(await apps.next("B").map(TwoApps.label) == "setToken")
                #expect(try await apps.checkAuthentication("A") == [Self.authenticated])
                let explained = try await apps.explain("B")
                #expect(explained["domain"] == "team:T1")
                #expect(explained["candidates"]?.arrayValue?.first?["reason"] == "used")
                #expect(explained["deviceId"] == (try await apps.explain("A"))["deviceId"])

                // E5: logout in a shared domain signs every app of it out.
                try await apps.call("logout", "A")
                #expect(await apps.next("A").map(TwoApps.label) == Self.notAuthenticated)
                #expect(try await apps.checkAuthentication("B") == [Self.notAuthenticated])
                #expect(try await apps.tokens().isEmpty)
            }
        }

        @Test func ssoTable_R2_sameTeamOtherPrefix_AE110() async throws {
            try await Self.withTwoApps(("com.x.y.AppA", "T1", "1.10"), ("com.z.AppB", "T1", "1.10")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.loginEvents)
                #expect(try await apps.setRequestor("B") == ["setRequestorComplete(1)"])
                // B sees A's token in the team's storage and does not use it: another device id.
                #expect(try await apps.checkAuthentication("B") == ["sso.tokenIgnored", Self.notAuthenticated])
                #expect(try await apps.explain("B")["candidates"]?.arrayValue?.first?["reason"] == "deviceIdMismatch")
                // getAuthentication looks again, ignores A's token again, and B logs in with its own code.
                #expect(try await apps.logIn("B") == ["sso.tokenIgnored"] + Self.loginEvents)
                // A's own token comes first in storage: A uses it and never reaches B's.
                #expect(try await apps.checkAuthentication("A") == [Self.authenticated])
                let owners = try await apps.tokens().compactMap { $0["owner"]?.stringValue }
                #expect(owners.sorted() == ["A", "B"])
            }
        }

        @Test func ssoTable_R2prime_AE18_wipes() async throws {
            try await Self.withTwoApps(("com.x.y.AppA", "T1", "1.8"), ("com.z.AppB", "T1", "1.8")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.loginEvents)
                #expect(try await apps.tokens().compactMap { $0["owner"]?.stringValue } == ["A"])
                // B's setRequestor erases A's data (1.8's sanitizer); no status callback in that version.
                #expect(try await apps.setRequestor("B") == ["sso.tokenWiped", "setRequestorComplete(1)"])
                #expect(try await apps.tokens().isEmpty)
                #expect(try await apps.checkAuthentication("B") == [Self.notAuthenticated])
                #expect(try await apps.logIn("B") == Self.loginEvents)
                #expect(try await apps.tokens().compactMap { $0["owner"]?.stringValue } == ["B"])
                // Switching back to A erases B's session in turn: A is signed out.
                #expect(try await apps.setRequestor("A") == ["sso.tokenWiped", "setRequestorComplete(1)"])
                #expect(try await apps.tokens().isEmpty)
                #expect(try await apps.checkAuthentication("A") == [Self.notAuthenticated])
            }
        }

        @Test(arguments: ["com.x.y.AppB", "com.other.AppB"])
        func ssoTable_R3_otherTeam(bundleB: String) async throws {
            try await Self.withTwoApps(("com.x.y.AppA", "T1", "1.10"), (bundleB, "T2", "1.10")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.loginEvents)
                _ = try await apps.setRequestor("B")
                // Different teams: separate storage, B sees nothing at all.
                #expect(try await apps.checkAuthentication("B") == [Self.notAuthenticated])
                #expect(try await apps.explain("B")["domain"] == "team:T2")
                #expect(try await apps.logIn("B") == Self.loginEvents)
                #expect(try await apps.checkAuthentication("A") == [Self.authenticated])
                #expect(try await apps.checkAuthentication("B") == [Self.authenticated])
            }
        }

        @Test func ssoTable_iOS6_MAC_global() async throws {
            try await Self.withTwoApps(osVersion: "6.1", ("com.x.y.AppA", "T1", "1.10"), ("org.other.AppB", "T2", "1.10")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.loginEvents)
                let before = try await apps.loginRequests()
                _ = try await apps.setRequestor("B")
                // One pasteboard for every app and a MAC-based device id: any team shares.
                #expect(try await apps.checkAuthentication("B") == ["sso.tokenShared", Self.authenticated])
                #expect(try await apps.loginRequests() == before)
                let explainedB = try await apps.explain("B")
                #expect(explainedB["domain"] == "global")
                #expect(explainedB["deviceId"] == (try await apps.explain("A"))["deviceId"])
            }
        }

        @Test func tvOSLegacy_NSUserDefaults_noSharing() async throws {
            try await Self.withTwoApps(platform: "tvos", ("com.x.y.AppA", "T1", "2.5"), ("com.x.y.AppB", "T1", "2.5")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.tvOSLoginEvents)
                _ = try await apps.setRequestor("B")
                #expect(try await apps.checkAuthentication("B") == [Self.notAuthenticated])
                #expect(try await apps.explain("B")["domain"] == "app:com.x.y.AppB")
                // Like R3: B authenticates once itself, with its own code, although the device ids are equal.
                let before = try await apps.loginRequests()
                #expect(try await apps.logIn("B") == Self.tvOSLoginEvents)
                #expect(try await apps.loginRequests() > before, "B asked for a code of its own")
                #expect(try await apps.checkAuthentication("A") == [Self.authenticated])
                #expect(try await apps.checkAuthentication("B") == [Self.authenticated])
            }
        }

        @Test func ae37_boundary_noSharing() async throws {
            try await Self.withTwoApps(("com.x.y.AppA", "T1", "3.6.0"), ("com.x.y.AppB", "T1", "3.7.0")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.loginEvents)
                _ = try await apps.setRequestor("B")
                #expect(try await apps.checkAuthentication("B") == [Self.notAuthenticated])
                #expect(try await apps.explain("A")["domain"] == "keychain:T1:v30")
                #expect(try await apps.explain("B")["domain"] == "keychain:T1:v37")
                // Like R3 (DOC `[UP370]`): B authenticates itself, with its own code.
                let before = try await apps.loginRequests()
                #expect(try await apps.logIn("B") == Self.loginEvents)
                #expect(try await apps.loginRequests() > before, "B asked for a code of its own")
                #expect(try await apps.checkAuthentication("A") == [Self.authenticated])
                #expect(try await apps.checkAuthentication("B") == [Self.authenticated])
            }
        }

        /// REST v2 binds a basic profile to the device and the app's own client (FAQ 13): the R1 setup shares
        /// nothing there, and the lookup says why (cross-app SSO on v2 goes through the SSO methods).
        @Test func v2_basicProfiles_boundToClient() async throws {
            try await Self.withTwoApps(profile: "v2", ("com.x.y.AppA", "T1", "1.10"), ("com.x.y.AppB", "T1", "1.10")) { apps in
                _ = try await apps.setRequestor("A")
                #expect(try await apps.logIn("A") == Self.loginEvents)
                _ = try await apps.setRequestor("B")
                #expect(try await apps.checkAuthentication("B") == ["sso.tokenIgnored", Self.notAuthenticated])
                #expect(try await apps.explain("B")["candidates"]?.arrayValue?.first?["reason"] == "boundToOtherClient")
                // B logs in with its own client; A's token stays: both apps keep their own login.
                #expect(try await apps.logIn("B") == ["sso.tokenIgnored"] + Self.loginEvents)
                #expect(try await apps.checkAuthentication("A") == [Self.authenticated])
                #expect(try await apps.checkAuthentication("B") == ["sso.tokenIgnored", Self.authenticated])
                let owners = try await apps.tokens().compactMap { $0["owner"]?.stringValue }
                #expect(owners.sorted() == ["A", "B"])
                // Each app is authorized with its own profile.
                try await apps.call("checkAuthorization", "A", ["resource": "Live"])
                #expect(await apps.next("A").map(TwoApps.label) == "setToken")
                try await apps.call("checkAuthorization", "B", ["resource": "Live"])
                #expect(await apps.next("B").map(TwoApps.label) == "setToken")
            }
        }
    }
}
