import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `persona: rest-v2` devices as a lab meets them: on the embedded defaults, and against a separately started pass-sim
/// over each wire, each opens with the launch check, loads the MVPD list only for its picker, polls its code every
/// 3–5 s or more, and reports app states, never an AccessEnabler callback.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(3))) struct NativeAppEndToEndTests {
        /// How many devices have an `app.signedIn` event, waited for (bounded) until `count` have one.
        static func waitForSignIns(_ count: Int, in database: String, daemon: ChildProcess, timeout: Duration = .seconds(90)) async throws -> Int {
            try await waitForLogins(
                count,
                in: database,
                daemon: daemon,
                timeout: timeout,
                counting: "SELECT count(DISTINCT device) FROM events WHERE name = 'app.signedIn'"
            )
        }

        /// The endpoints each device called before its polls, in order, as the request log has them.
        static func callSequences(_ database: String) throws -> [String: [String]] {
            let rows = try SQLiteShell.run(
                database,
                "SELECT device, group_concat(endpoint, ' ') FROM (SELECT device, endpoint FROM request_attempts ORDER BY id) GROUP BY device"
            )
            var sequences: [String: [String]] = [:]
            for row in rows.split(separator: "\n") {
                let fields = row.split(separator: "|", maxSplits: 1)
                guard fields.count == 2 else { continue }
                sequences[String(fields[0])] = fields[1].split(separator: " ").map(String.init)
            }
            return sequences
        }

        @Test func twentyNativeAppsSignInOnTheEmbeddedDefaults() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--persona", "rest-v2", "--devices", "20", "--simulator-auto-approve-after", "2s", "--database", database, "--socket",
                    directory.path("s.sock"), "--http", "127.0.0.1:0", "--http-auth", "none",
                ]
            )
            let signedIn = try await Self.waitForSignIns(20, in: database, daemon: daemon)
            #expect(signedIn == 20, "\(daemon.text.suffix(2_000))")
            let sequences = try Self.callSequences(database)
            #expect(sequences.count == 20)
            for (device, calls) in sequences {
                #expect(calls == ["register", "token", "profiles", "configuration", "sessions"], "\(device): \(calls)")
            }
            let names = try SQLiteShell.run(database, "SELECT DISTINCT name FROM events ORDER BY name").split(separator: "\n").map(String.init)
            #expect(names == ["app.configurationLoaded", "app.profilesChecked", "app.providerPicker", "app.sessionCreated", "app.signedIn"])
            let codes = try SQLiteShell.run(
                database,
                "SELECT count(*) FROM events WHERE name = 'app.sessionCreated' AND json_extract(args, '$.code') IS NOT NULL"
            )
            #expect(codes == "20")
            // The terminal says it as it does for the SDK's devices.
            #expect(daemon.text.components(separatedBy: ": authenticated").count - 1 == 20, "\(daemon.text.suffix(2_000))")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        /// Against pass-sim started by itself, with its default throttle, over plain HTTP, HTTPS with HTTP/1.1 and
        /// HTTPS with HTTP/2: the checklist's order of calls, and polls no faster than every 3 s.
        @Test(arguments: BackendWire.allCases)
        func aNativeFleetFollowsTheChecklistAgainstASeparatePassSim(wire: BackendWire) async throws {
            let backend = try await PassSimProcess.start(["--script", "approve:6"], wire: wire)
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                backend.daemonArguments + ["--persona", "rest-v2", "--devices", "3", "--database", database, "--socket", socket]
            )
            let signedIn = try await Self.waitForSignIns(3, in: database, daemon: daemon)
            #expect(signedIn == 3, "\(daemon.text.suffix(2_000))")
            for (device, calls) in try Self.callSequences(database) {
                #expect(calls == ["register", "token", "profiles", "configuration", "sessions"], "\(device): \(calls)")
            }
            // From the moment the code shows, every 3–5 s or more (Adobe's "no faster").
            let gaps = try SQLiteShell.run(
                database,
                "SELECT min(sent_at - previous) FROM (SELECT sent_at, lag(sent_at) OVER (PARTITION BY device ORDER BY id) AS previous FROM poll_attempts) WHERE previous IS NOT NULL"
            )
            #expect((Int(gaps) ?? 0) >= 3_000, "shortest gap between polls: \(gaps) ms")
            let polls = try SQLiteShell.run(database, "SELECT count(*) FROM poll_attempts")
            #expect((Int(polls) ?? 0) >= 3)

            // Opened again, each app finds its profile with the launch check and asks for no configuration.
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            let again = try ChildProcess(
                "regcoded",
                backend.daemonArguments + ["--persona", "rest-v2", "--devices", "3", "--database", database, "--socket", socket]
            )
            defer { again.signal(SIGTERM) }
            try #require(await again.waitForOutput("regcoded ready"), "\(again.text)")
            var checked = 0
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, checked < 3 {
                checked =
                    Int(
                        (try? SQLiteShell.run(
                            database,
                            "SELECT count(*) FROM events WHERE name = 'app.profilesChecked' AND json_extract(args, '$.chosen') IS NOT NULL"
                        )) ?? ""
                    ) ?? 0
                if checked < 3 { try await Task.sleep(for: .milliseconds(300)) }
            }
            #expect(checked == 3)
            let configurations = try SQLiteShell.run(database, "SELECT count(*) FROM request_attempts WHERE endpoint = 'configuration'")
            #expect(configurations == "3", "the second opening asked for no configuration")
            let launchChecks = try SQLiteShell.run(database, "SELECT count(*) FROM request_attempts WHERE endpoint = 'profiles.mvpd'")
            #expect(launchChecks == "3", "a returning app checks its known MVPD")
        }

        /// The verbs drive an idle native app step by step, and refuse a device of the other persona.
        @Test func theLabVerbsDriveAnIdleNativeApp() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                ["--persona", "rest-v2", "--devices", "1", "--database", database, "--socket", socket, "--simulator-auto-approve-after", "1s"]
                    + ["--config", try Self.idleConfiguration(directory)]
            )
            try #require(await daemon.waitForOutput("regcoded ready"), "\(daemon.text)")
            try await ControlClient.withConnection(to: socket) { client in
                _ = try await client.call(method: "app.launch", params: ["device": "stb-1"])
                _ = try await client.call(method: "app.login", params: ["device": "stb-1", "mvpd": "Cablevision"])
            }
            #expect(try await Self.waitForSignIns(1, in: database, daemon: daemon) == 1, "\(daemon.text.suffix(2_000))")
            try await ControlClient.withConnection(to: socket) { client in
                _ = try await client.call(method: "app.play", params: ["device": "stb-1", "resource": "REF30"])
                _ = try await client.call(method: "app.browse", params: ["device": "stb-1", "resources": ["REF30", "Other"]])
                _ = try await client.call(method: "app.logout", params: ["device": "stb-1"])
            }
            var names: [String] = []
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, !names.contains("app.loggedOut") {
                names = try SQLiteShell.run(database, "SELECT name FROM events ORDER BY seq").split(separator: "\n").map(String.init)
                if !names.contains("app.loggedOut") { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(
                names == [
                    "app.profilesChecked", "app.sessionCreated", "app.signedIn", "app.decision", "app.preauthorization", "app.loggedOut",
                ],
                "\(names)"
            )
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        static func idleConfiguration(_ directory: TemporaryDirectory) throws -> String {
            let path = directory.path("regcoded.yaml")
            try "fleets:\n  - name: stb\n    count: 1\n    scenario: idle\n    persona: rest-v2\n".write(
                toFile: path,
                atomically: true,
                encoding: .utf8
            )
            return path
        }
    }
}
