import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `protocol: oauth-device` fleets as a lab meets them: on the embedded defaults, against a separately started
/// pass-sim over each wire, and against authorization servers nobody here wrote (django-oauth-toolkit and Authlib
/// from PyPI, started by Tests/oauth-servers/launch.sh, approved on their own pages by a real HTTP session).
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(4))) struct OAuthDeviceEndToEndTests {
        static func count(_ query: String, in database: String) -> Int {
            Int((try? SQLiteShell.run(database, query)) ?? "") ?? 0
        }

        /// Devices with an `oauth.authorized` event, waited for (bounded) until `count` have one.
        static func waitForAuthorized(_ count: Int, in database: String, daemon: ChildProcess, timeout: Duration = .seconds(90)) async throws -> Int {
            try await waitForLogins(
                count,
                in: database,
                daemon: daemon,
                timeout: timeout,
                counting: "SELECT count(DISTINCT device) FROM events WHERE name = 'oauth.authorized'"
            )
        }

        /// Waits (bounded) until `query` counts at least `count`.
        static func waitUntil(_ count: Int, _ query: String, in database: String, timeout: Duration = .seconds(30)) async throws -> Int {
            var found = 0
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                found = Self.count(query, in: database)
                if found >= count { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            return found
        }

        /// Polls sent before the protocol allowed them (the poll log's `planned_at` is that moment), in all and after a
        /// `slow_down` answer to the same code.
        static func earlyPolls(_ database: String) -> (all: Int, afterSlowDown: Int) {
            let all = count("SELECT count(*) FROM poll_attempts WHERE sent_at < planned_at", in: database)
            let afterSlowDown = count(
                """
                SELECT count(*) FROM poll_attempts p WHERE p.sent_at < p.planned_at AND EXISTS (
                    SELECT 1 FROM poll_attempts s WHERE s.device = p.device AND s.code = p.code AND s.outcome = 'slow-down' AND s.id < p.id)
                """,
                in: database
            )
            return (all, afterSlowDown)
        }

        @Test func twentyOAuthDevicesLogInOnTheEmbeddedDefaults() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let arguments = [
                "--protocol", "oauth-device", "--devices", "20", "--simulator-auto-approve-after", "2s", "--database", database, "--socket",
                directory.path("s.sock"),
            ]
            let daemon = try ChildProcess("regcoded", arguments)
            let authorized = try await Self.waitForAuthorized(20, in: database, daemon: daemon)
            #expect(authorized == 20, "\(daemon.text.suffix(2_000))")
            // Discovery, then the device authorization; every poll at or after the interval.
            for (device, calls) in try NativeAppEndToEndTests.callSequences(database) {
                #expect(calls == ["oauth.discovery", "oauth.device_authorization"], "\(device): \(calls)")
            }
            #expect(Self.earlyPolls(database).all == 0)
            #expect(Self.count("SELECT count(*) FROM logins", in: database) == 20)
            #expect(Self.count("SELECT count(*) FROM codes WHERE status = 'authenticated'", in: database) == 20)
            // The terminal shows each code with the page to enter it at, then each login.
            #expect(daemon.text.components(separatedBy: "/device\n").count - 1 >= 20, "\(daemon.text.prefix(2_000))")
            #expect(daemon.text.components(separatedBy: ": authenticated").count - 1 == 20, "\(daemon.text.suffix(2_000))")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)

            // Started again, every device still holds its tokens: no device asks for a code again.
            let again = try ChildProcess("regcoded", arguments)
            try #require(await again.waitForOutput("regcoded ready"), "\(again.text)")
            #expect(again.text.components(separatedBy: ": authenticated (resumed)").count - 1 == 20, "\(again.text.prefix(2_000))")
            try await Task.sleep(for: .seconds(2))
            #expect(Self.count("SELECT count(*) FROM request_attempts WHERE endpoint = 'oauth.device_authorization'", in: database) == 20)
            #expect(Self.count("SELECT count(*) FROM devices WHERE state = 'authenticated'", in: database) == 20)
            again.signal(SIGTERM)
            #expect(await again.waitForExit() == 0)
        }

        /// The lab's verbs and `simulator.approve` drive one device on the embedded simulator: a code, a cancel, a second
        /// code approved by its user code, and `devices.get` showing the client and the grant (never a token).
        @Test func theLabDrivesAnOAuthDevice() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let configuration = directory.path("regcoded.yaml")
            try "fleets:\n  - name: tv\n    count: 1\n    scenario: idle\n    protocol: oauth-device\n"
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            let daemon = try ChildProcess("regcoded", ["--config", configuration, "--database", database, "--socket", socket])
            defer { daemon.signal(SIGTERM) }
            try #require(await daemon.waitForOutput("regcoded ready"), "\(daemon.text)")
            try await ControlClient.withConnection(to: socket) { client in
                _ = try await client.call(method: "oauth.login", params: ["device": "tv-1"])
                #expect(try await Self.waitUntil(1, "SELECT count(*) FROM events WHERE name = 'oauth.codeShown'", in: database) == 1)
                _ = try await client.call(method: "oauth.cancel", params: ["device": "tv-1"])
                #expect(try await Self.waitUntil(1, "SELECT count(*) FROM events WHERE name = 'oauth.cancelled'", in: database) == 1)
                _ = try await client.call(method: "oauth.login", params: ["device": "tv-1"])
                #expect(try await Self.waitUntil(2, "SELECT count(*) FROM events WHERE name = 'oauth.codeShown'", in: database) == 2)
                let code = try SQLiteShell.run(
                    database,
                    "SELECT json_extract(args, '$.user_code') FROM events WHERE name = 'oauth.codeShown' ORDER BY seq DESC LIMIT 1"
                )
                _ = try await client.call(method: "simulator.approve", params: ["code": .string(code)])
                #expect(try await Self.waitForAuthorized(1, in: database, daemon: daemon) == 1)
                let detail = try await client.call(method: "devices.get", params: ["device": "tv-1"])
                #expect(detail["protocol"] == "oauth-device")
                #expect(detail["oauth"]?["provider"] == "generic")
                #expect(detail["oauth"]?["tokens"]?["refreshable"] == .bool(true))
                let token = try SQLiteShell.run(database, "SELECT json_extract(oauth_state, '$.tokens.accessToken') FROM devices")
                #expect(token.count > 8)
                #expect(!"\(detail)".contains(token))
            }
            #expect(Self.count("SELECT count(*) FROM codes WHERE status = 'cancelled'", in: database) == 1)
            #expect(Self.count("SELECT count(*) FROM codes WHERE status = 'authenticated'", in: database) == 1)
        }

        /// Against pass-sim started by itself, with its default throttle, over plain HTTP, HTTPS with HTTP/1.1 and
        /// HTTPS with HTTP/2: the devices log in, and `oauth.logout` revokes both tokens.
        @Test(arguments: BackendWire.allCases)
        func aFleetLogsInAndOutAgainstASeparatePassSim(wire: BackendWire) async throws {
            let backend = try await PassSimProcess.start(["--script", "approve:3"], wire: wire)
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                backend.backendArguments + ["--protocol", "oauth-device", "--devices", "3", "--database", database, "--socket", socket]
            )
            defer { daemon.signal(SIGTERM) }
            let authorized = try await Self.waitForAuthorized(3, in: database, daemon: daemon)
            #expect(authorized == 3, "\(daemon.text.suffix(2_000))")
            #expect(Self.earlyPolls(database).all == 0)
            // pass-sim's throttle covers its OAuth endpoints too; each device polls from its own loopback address
            // (`client_address: bind`, the default there) at the interval, so none was refused.
            #expect(Self.count("SELECT count(*) FROM poll_attempts WHERE outcome NOT IN ('pending', 'authenticated')", in: database) == 0)
            try await ControlClient.withConnection(to: socket) { client in
                for index in 1...3 {
                    _ = try await client.call(method: "oauth.logout", params: ["device": .string("stb-\(index)")])
                }
                // An Adobe Pass call is refused on an OAuth device.
                do {
                    _ = try await client.call(method: "getAuthentication", params: ["device": "stb-1"])
                    Issue.record("getAuthentication was accepted on an OAuth device")
                } catch {
                    #expect("\(error)".contains("OAuth device"), "\(error)")
                }
            }
            let loggedOut = try await Self.waitUntil(3, "SELECT count(*) FROM events WHERE name = 'oauth.loggedOut'", in: database)
            #expect(loggedOut == 3)
            let revoked = Self.count(
                "SELECT count(*) FROM events WHERE name = 'oauth.revoked' AND json_extract(args, '$.status') = 200",
                in: database
            )
            #expect(revoked == 6, "refresh and access token of each device")
        }

        /// The whole session against pass-sim: a confidential client (`client_secret_post`, its secret from a file),
        /// 4-second access tokens refreshed at half-life with rotation, and userinfo used every second.
        @Test func aSessionIsRefreshedAndExercised() async throws {
            let settings = try TemporaryDirectory()
            let oauthConfig = settings.path("oauth.json")
            try
                #"{"clients": [{"client_id": "lab-box", "token_endpoint_auth_method": "client_secret_post", "client_secret": "box-s3cret"}], "access_token_ttl": 4}"#
                .write(toFile: oauthConfig, atomically: true, encoding: .utf8)
            let backend = try await PassSimProcess.start(["--script", "approve:2", "--oauth-config", oauthConfig])
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let secret = directory.path("secret")
            try "box-s3cret\n".write(toFile: secret, atomically: true, encoding: .utf8)
            let configuration = directory.path("regcoded.yaml")
            try """
            fleets:
              - name: box
                count: 3
                protocol: oauth-device
                oauth:
                  client_id: lab-box
                  client_authentication: client_secret_post
                  client_secret_file: \(secret)
                  exercise: userinfo
                  exercise_every: 1s
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
            let daemon = try ChildProcess(
                "regcoded",
                backend.backendArguments + ["--config", configuration, "--database", database, "--socket", directory.path("s.sock")]
            )
            defer { daemon.signal(SIGTERM) }
            #expect(try await Self.waitForAuthorized(3, in: database, daemon: daemon) == 3, "\(daemon.text.suffix(2_000))")
            let refreshed = try await Self.waitUntil(
                6,
                "SELECT count(*) FROM events WHERE name = 'oauth.tokenRefreshed' AND json_extract(args, '$.rotated') = 1",
                in: database
            )
            #expect(refreshed >= 6, "two rotations per device")
            let used = Self.count(
                "SELECT count(*) FROM events WHERE name = 'oauth.tokenExercised' AND json_extract(args, '$.status') = 200",
                in: database
            )
            #expect(used >= 3)
            #expect(Self.count("SELECT count(*) FROM request_attempts WHERE outcome <> 'ok'", in: database) == 0)
            // The secret is never stored.
            for file in [database, database + "-wal"] where FileManager.default.fileExists(atPath: file) {
                #expect(!(try String(contentsOfFile: file, encoding: .isoLatin1)).contains("box-s3cret"), "\(file)")
            }
        }

        /// A server another project wrote, as a lab would point regcoded at it: `backend` is the server, the fleet
        /// names its provider row, and a person approves each code on the server's own pages.
        @Test(arguments: [
            ServerRun(server: "dot", tls: false, devices: 20), ServerRun(server: "dot", tls: true, devices: 5),
            ServerRun(server: "authlib", tls: false, devices: 5),
        ])
        func aFleetLogsInThroughAServerNobodyHereWrote(run: ServerRun) async throws {
            let server = try await OAuthServerProcess.start(run.server, tls: run.tls)
            defer { server.stop() }
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let provider = run.server == "dot" ? "django-oauth-toolkit" : "generic"
            let configuration = directory.path("regcoded.yaml")
            try """
            fleets:
              - name: tv
                count: \(run.devices)
                protocol: oauth-device
                oauth:
                  provider: \(provider)
                  client_id: regcoded-tv
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
            var arguments = ["--config", configuration, "--backend", server.base, "--database", database, "--socket", socket]
            if let ca = server.caFile { arguments += ["--tls-ca-file", ca] }
            let daemon = try ChildProcess("regcoded", arguments)
            defer { daemon.signal(SIGTERM) }

            let shown = try await Self.waitUntil(run.devices, "SELECT count(*) FROM events WHERE name = 'oauth.codeShown'", in: database)
            try #require(shown == run.devices, "\(daemon.text.suffix(2_000))")
            let codes = try SQLiteShell.run(database, "SELECT json_extract(args, '$.user_code') FROM events WHERE name = 'oauth.codeShown'")
            for code in codes.split(separator: "\n") {
                try await server.approve(userCode: String(code))
            }
            let authorized = try await Self.waitForAuthorized(run.devices, in: database, daemon: daemon)
            #expect(authorized == run.devices, "\(daemon.text.suffix(2_000))")
            let early = Self.earlyPolls(database)
            #expect(early.all == 0 && early.afterSlowDown == 0)
            #expect(Self.count("SELECT count(*) FROM poll_attempts WHERE outcome = 'pending'", in: database) >= 1)

            try await ControlClient.withConnection(to: socket) { client in
                for index in 1...run.devices {
                    _ = try await client.call(method: "oauth.logout", params: ["device": .string("tv-\(index)")])
                }
            }
            let loggedOut = try await Self.waitUntil(run.devices, "SELECT count(*) FROM events WHERE name = 'oauth.loggedOut'", in: database)
            #expect(loggedOut == run.devices, "\(daemon.text.suffix(2_000))")
            let revocations = Self.count(
                "SELECT count(*) FROM request_attempts WHERE stage = 'logout' AND outcome = 'ok'",
                in: database
            )
            #expect(revocations >= run.devices, "every device revoked its tokens")
        }
    }

    struct ServerRun: Sendable, CustomTestStringConvertible {
        var server: String
        var tls: Bool
        var devices: Int
        var testDescription: String { "\(server)\(tls ? " over https" : "") with \(devices) devices" }
    }
}

/// An authorization server of another project, started by Tests/oauth-servers/launch.sh (its own virtual
/// environment and database, nginx in front for TLS) until `stop()`.
struct OAuthServerProcess {
    let process: ChildProcess
    let base: String
    let caFile: String?
    let user: String
    let password: String

    static let directory = BuiltProducts.repository.appendingPathComponent("Tests/oauth-servers")

    static func start(_ server: String, tls: Bool) async throws -> OAuthServerProcess {
        let process = try ChildProcess(
            "/bin/sh",
            [directory.appendingPathComponent("launch.sh").path, "--server", server, "--interval", "1"] + (tls ? ["--tls"] : []),
            absolute: true
        )
        let deadline = ContinuousClock.now + .seconds(180)
        while ContinuousClock.now < deadline, process.process.isRunning {
            if let line = process.text.split(separator: "\n").first(where: { $0.hasPrefix("{\"server\"") }) {
                let fields = try JSONValueParser.parse(Data(line.utf8))
                return OAuthServerProcess(
                    process: process,
                    base: try #require(fields["base"]?.stringValue),
                    caFile: fields["ca_file"]?.stringValue,
                    user: try #require(fields["user"]?.stringValue),
                    password: try #require(fields["password"]?.stringValue)
                )
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        process.signal(SIGTERM)
        throw OAuthServerFailure(output: process.text)
    }

    /// A person's approval on the server's own pages (approve.py: sign in, type the code, press Accept).
    func approve(userCode: String) async throws {
        var arguments = [
            "-c", #". "$1/../test-venv.sh"; shift; exec "$python" "$@""#, "approve", Self.directory.path,
            Self.directory.appendingPathComponent("approve.py").path, "--base", base, "--user-code", userCode, "--user", user,
            "--password", password,
        ]
        if let caFile { arguments += ["--cacert", caFile] }
        let approval = try ChildProcess("/bin/sh", arguments, absolute: true)
        let status = await approval.waitForExit(timeout: .seconds(60))
        guard status == 0 else { throw OAuthServerFailure(output: "approve.py \(userCode): \(approval.text)") }
    }

    func stop() {
        process.signal(SIGTERM)
    }
}

struct OAuthServerFailure: Error, CustomStringConvertible {
    var output: String
    var description: String { "the OAuth server did not start: \(output.suffix(2_000))" }
}
