import ControlSocket
import Foundation
import PassSimulator
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// regcoded against a pass-sim serving HTTPS itself, as an operator meets it: a certificate it does not trust is named
/// at once everywhere it reports (device, request rows, daemon.status, systemd's STATUS=, the log), the CA file fixes
/// it, `per-device` holds one TLS connection per device, and mutual TLS is refused or accepted.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct TLSEndToEndTests {
        static func status(_ socket: String) async throws -> JSONValue {
            try await ControlClient.withConnection(to: socket) { try await $0.call(method: "daemon.status") }
        }

        /// Each device's last outcome's code (`devices.list`), as the console and `regcodectl devices` show it.
        static func outcomeCodes(_ socket: String) async throws -> [String] {
            let list = try await ControlClient.withConnection(to: socket) { try await $0.call(method: "devices.list") }
            return (list["devices"]?.arrayValue ?? []).map { $0["lastOutcome"]?["why"]?.stringValue ?? "" }
        }

        static func simulatorConnections(_ backend: PassSimProcess) async throws -> JSONValue {
            try JSONValueParser.parse(try await backend.request("/_sim/stats").body)["connections"] ?? .null
        }

        @Test func anUntrustedCertificateIsNamedAtOnceEverywhereAndBacksOff() async throws {
            let directory = try TemporaryDirectory()
            let backend = try await PassSimProcess.start(["--no-throttle"], wire: .httpsHTTP2)
            let notify = try NotifySocket(path: directory.path("notify"))
            let socket = directory.path("s.sock")
            let database = directory.path("db.sqlite")
            // No CA file: the system's roots do not hold pass-sim's own CA.
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--backend", backend.url, "--software-statement", backend.statementFile, "--database", database, "--socket", socket, "--devices",
                    "2",
                ],
                environment: ["NOTIFY_SOCKET": notify.path]
            )
            let messages = notify.collect(until: { $0.contains("every device fails") }, timeout: .seconds(20))
            let line = try #require(messages.last { $0.contains("every device fails") }, "\(messages) \(daemon.text)")
            #expect(line.contains("fleet stb") && line.contains("tls.ca_file"))

            let transport = try await Self.status(socket)["transport"]
            #expect(transport?["failingFleets"]?["stb"]?["code"] == "tls-untrusted-issuer")
            #expect(transport?["handshakes"]?["failed"]?.intValue ?? 0 >= 2)
            // Each refusal is stored with its reason, and it took no deadline to come: the handshake's own time.
            let rows = try SQLiteShell.run(
                database,
                "SELECT count(*), max(latency_ms) < 1000 FROM request_attempts WHERE error_code = 'tls-untrusted-issuer'"
            )
            let fields = rows.split(separator: "|")
            #expect(Int(fields.first ?? "") ?? 0 >= 2 && fields.last == "1", "\(rows)")
            let devices = try ChildProcess("regcodectl", ["devices", "--socket", socket])
            _ = await devices.waitForExit()
            #expect(devices.text.components(separatedBy: "— tls-").count - 1 == 2, "\(devices.text)")
            #expect(try await Self.outcomeCodes(socket) == ["tls-untrusted-issuer", "tls-untrusted-issuer"])
            // One warning for the cause, naming the fix, however many devices and attempts.
            #expect(daemon.text.components(separatedBy: "TLS connection to the backend failed").count - 1 == 1, "\(daemon.text)")
            #expect(daemon.text.contains("set tls.ca_file"))
            // Backing off, not a storm: a handful of handshakes per device in these seconds.
            let accepted = try await Self.simulatorConnections(backend)["tls_accepted"]?.intValue ?? 0
            #expect(accepted >= 2 && accepted <= 2 * 8, "\(accepted) handshakes")
            daemon.signal(SIGTERM)
            _ = await daemon.waitForExit()
        }

        /// `--simulator-tls`: the in-process backend over HTTPS and HTTP/2, trusted without a setting, its CA kept
        /// beside the database for the next start.
        @Test func theEmbeddedSimulatorServesHTTPSWithItsOwnCA() async throws {
            let directory = try TemporaryDirectory()
            let socket = directory.path("s.sock")
            let database = directory.path("db.sqlite")
            let arguments = [
                "--database", database, "--socket", socket, "--devices", "2", "--simulator-tls",
                "--simulator-listen", "127.0.0.1:0", "--simulator-auto-approve-after", "1",
            ]
            let daemon = try ChildProcess("regcoded", arguments)
            #expect(try await waitForLogins(2, in: database, daemon: daemon, timeout: .seconds(30)) == 2, "\(daemon.text)")
            #expect(daemon.text.contains("activation page: https://127.0.0.1:"))
            let transport = try await Self.status(socket)["transport"]
            #expect(transport?["tls"] == true)
            #expect(transport?["connections"]?["tlsHTTP2"]?.intValue ?? 0 >= 1, "\(String(describing: transport))")
            #expect(transport?["connections"]?["plainHTTP1"] == 0)
            #expect(FileManager.default.fileExists(atPath: directory.path("db.pass-sim-tls/ca.pem")))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        @Test func perDeviceOverTLSHoldsOneConnectionPerDevice() async throws {
            let directory = try TemporaryDirectory()
            let backend = try await PassSimProcess.start(["--no-throttle", "--auto-approve-after", "1s"], wire: .httpsHTTP2)
            let config = directory.path("regcoded.yaml")
            try "fleets:\n  - name: boxes\n    count: 4\n    connections: per-device\n".write(toFile: config, atomically: true, encoding: .utf8)
            let socket = directory.path("s.sock")
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", socket] + backend.daemonArguments
            )
            let authenticated = try await waitForLogins(4, in: database, daemon: daemon, timeout: .seconds(40))
            #expect(authenticated == 4, "\(daemon.text.suffix(2000))")
            let connections = try await Self.simulatorConnections(backend)
            // One per device, and the one that asked for these figures (curl speaks HTTP/2 there too).
            #expect(connections["tls_h2"] == 5, "\(connections)")
            #expect(connections["tls_http1"] == 0 && connections["plain"] == 0, "\(connections)")
            let transport = try await Self.status(socket)["transport"]
            #expect(transport?["connections"]?["tlsHTTP2"] == 4)
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        @Test func mutualTLSIsRefusedWithoutTheClientCertificateAndAcceptedWithIt() async throws {
            let directory = try TemporaryDirectory()
            let clientAuthority = try TestCertificateAuthority(commonName: "lab boxes")
            let client = try clientAuthority.issueClientCertificate(commonName: "box")
            let clientCA = directory.path("client-ca.pem")
            try clientAuthority.certificatePEM.write(toFile: clientCA, atomically: true, encoding: .utf8)
            try client.certificatePEM.write(toFile: directory.path("box.pem"), atomically: true, encoding: .utf8)
            try client.privateKeyPEM.write(toFile: directory.path("box-key.pem"), atomically: true, encoding: .utf8)
            let backend = try await PassSimProcess.start(["--no-throttle", "--tls-client-ca", clientCA], wire: .httpsHTTP2)

            /// Runs one daemon until `done` holds for its devices' outcome codes and database (bounded); returns the codes.
            func run(_ name: String, extra: [String], done: ([String], String) -> Bool) async throws -> [String] {
                let socket = directory.path("\(name).sock")
                let database = directory.path("\(name).sqlite")
                let daemon = try ChildProcess(
                    "regcoded",
                    ["--database", database, "--socket", socket, "--devices", "1"] + backend.daemonArguments + extra
                )
                let deadline = ContinuousClock.now + .seconds(20)
                var seen: [String] = []
                while ContinuousClock.now < deadline, !done(seen, database), daemon.process.isRunning {
                    try await Task.sleep(for: .milliseconds(300))
                    seen = (try? await Self.outcomeCodes(socket)) ?? []
                }
                daemon.signal(SIGTERM)
                _ = await daemon.waitForExit()
                return seen
            }

            let anonymous = try await run("anonymous", extra: []) { codes, _ in codes == ["tls-client-certificate-refused"] }
            #expect(anonymous == ["tls-client-certificate-refused"])
            let identity = ["--tls-client-certificate", directory.path("box.pem"), "--tls-client-key", directory.path("box-key.pem")]
            let identified = try await run("identified", extra: identity) { _, database in
                (try? SQLiteShell.run(database, "SELECT count(*) FROM codes")) == "1"
            }
            #expect(!identified.contains { $0.hasPrefix("tls-") }, "\(identified)")
            #expect(try SQLiteShell.run(directory.path("identified.sqlite"), "SELECT count(*) FROM codes") == "1")
        }
    }
}
