import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// Real regcoded against a real pass-sim, as the backend sees the devices' addresses: one shared address in `host`
/// mode (Adobe's per-address throttle answers 429), one bound loopback address per device by default (distinct
/// peers, no 429, no invented `X-Forwarded-For`).
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(6))) struct ClientAddressEndToEndTests {
        static func stats(_ sim: PassSimProcess) async throws -> JSONValue {
            try JSONValueParser.parse(try await sim.request("/_sim/stats").body)
        }

        /// Answers with `status` over every endpoint class.
        static func answers(_ stats: JSONValue, status: String) -> Int {
            var total = 0
            for (_, statuses) in stats["requests"]?.objectValue ?? [:] { total += Int(statuses[status]?.intValue ?? 0) }
            return total
        }

        static func throttledAttempts(_ database: String) -> Int {
            let sql = """
                SELECT (SELECT count(*) FROM poll_attempts WHERE outcome = 'throttled')
                     + (SELECT count(*) FROM request_attempts WHERE outcome = 'throttled')
                """
            return Int((try? SQLiteShell.run(database, sql)) ?? "") ?? 0
        }

        @Test func fiftyDevicesSharingTheHostsAddressAreThrottledAndWarnedAbout() async throws {
            let directory = try TemporaryDirectory()
            let sim = try await PassSimProcess.start()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                sim.daemonArguments + [
                    "--database", database, "--socket", socket, "--devices", "50", "--poll-interval", "5", "--client-address", "host",
                ]
            )
            // 50 devices × 0.2 polls/s = 10 requests/s against 1 request/s per address: 90 % answered 429.
            #expect(await daemon.waitForOutput("share this host's address"), "\(daemon.text.suffix(2000))")
            #expect(daemon.text.contains("50 × 0.2 polls/s = 10 requests/s per address"), "\(daemon.text.suffix(2000))")
            #expect(daemon.text.contains("expect about 90% of polls answered 429"), "\(daemon.text.suffix(2000))")
            var throttled = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, throttled == 0, daemon.process.isRunning {
                try await Task.sleep(for: .milliseconds(500))
                throttled = Self.throttledAttempts(database)
            }
            #expect(throttled > 0, "no throttled request: \(daemon.text.suffix(2000))")
            let status = try await ControlClient.withConnection(to: socket) { try await $0.call(method: "daemon.status") }
            #expect(status["transport"]?["sharedAddressWarning"]?.stringValue?.contains("10 requests/s per address") == true, "\(status)")
            let stats = try await Self.stats(sim)
            #expect(Self.answers(stats, status: "429") > 0, "\(stats)")
            // Every device came from 127.0.0.1, as this test's own requests do.
            #expect(stats["peers"]?["distinct"]?.intValue == 1, "\(stats)")
            #expect(stats["peers"]?["forwarded_for_requests"]?.intValue == 0, "\(stats)")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text.suffix(2000))")
        }

        @Test func byDefaultFiftyDevicesBindFiftyLoopbackAddressesAndAreNotThrottled() async throws {
            let directory = try TemporaryDirectory()
            let sim = try await PassSimProcess.start(["--auto-approve-after", "4s"])
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                sim.daemonArguments + ["--database", database, "--socket", directory.path("s.sock"), "--devices", "50", "--poll-interval", "3"]
            )
            let logins = try await waitForLogins(50, in: database, daemon: daemon, timeout: .seconds(120))
            #expect(logins == 50, "\(daemon.text.suffix(2000))")
            #expect(!daemon.text.contains("share this host's address"))
            let addresses = try SQLiteShell.run(database, "SELECT client_address FROM devices").split(separator: "\n").map(String.init)
            #expect(Set(addresses).count == 50 && addresses.allSatisfy { $0.hasPrefix("127.128.") }, "\(addresses)")
            let stats = try await Self.stats(sim)
            // The 50 devices' bound addresses, and 127.0.0.1: this test asking for the stats.
            #expect(stats["peers"]?["distinct"]?.intValue == 51, "\(stats)")
            #expect(stats["peers"]?["forwarded_for_requests"]?.intValue == 0, "\(stats)")
            #expect(Self.answers(stats, status: "429") == 0, "\(stats)")
            #expect(Self.throttledAttempts(database) == 0)
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text.suffix(2000))")
        }

        @Test func twentyDevicesLogInOnTheEmbeddedDefaults() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--database", database, "--socket", directory.path("s.sock"), "--devices", "20", "--simulator-auto-approve-after", "1",
                    "--poll-interval", "3", "--no-print-codes",
                ]
            )
            #expect(try await waitForLogins(20, in: database, daemon: daemon, timeout: .seconds(90)) == 20, "\(daemon.text.suffix(2000))")
            #expect(!daemon.text.contains("share this host's address"))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text.suffix(2000))")
        }

        @Test func aBindAddressThatIsNotLocalStopsTheStart() throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            try """
            backend: http://127.0.0.1:9
            fleets:
              - name: lab
                count: 2
                client_address:
                  mode: bind
                  addresses: [127.0.1.1, 192.0.2.77]
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let run = try Command.run(
                BuiltProducts.url("regcoded"),
                ["--config", config, "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock")]
            )
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr.contains("fleets[0].client_address.addresses"), "\(run.stderr)")
            #expect(run.stderr.contains("192.0.2.77 is not an address of this host"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.path("db.sqlite")))
        }

        @Test func theReplacedForwardedForKeyIsRefusedNamingItsSuccessor() throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            try "fleets:\n  - name: lab\n    forwarded_for: true\n".write(toFile: config, atomically: true, encoding: .utf8)
            let run = try Command.run(
                BuiltProducts.url("regcoded"),
                ["--config", config, "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock")]
            )
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr.contains("client_address: forwarded-for"), "\(run.stderr)")
        }
    }
}
