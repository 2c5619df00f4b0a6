import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// A separately started pass-sim registers only statements it signed; `pass-sim statement` issues them.
    @Suite struct SoftwareStatementEndToEndTests {
        typealias Lab = DaemonEndToEndTests.Lab

        static func isRegistrationRefused(_ event: JSONValue) -> Bool {
            event["name"] == "status" && event["args"]?["statusDictionary"]?["errorId"] == "R400"
        }

        @Test func theStatementPassSimIssuedLogsADeviceIn() async throws {
            let lab = try await Lab.start(simulatorArguments: ["--auto-approve-after", "1"])
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                #expect(await DaemonEndToEndTests.nextEvent(&events, where: DaemonEndToEndTests.isAuthenticated) != nil, "\(lab.daemon.text)")
            }
            // With --backend too, the person at the terminal reads the code and the login.
            #expect(lab.daemon.text.contains("regcoded: stb-1: code "), "\(lab.daemon.text)")
            #expect(await lab.daemon.waitForOutput("regcoded: stb-1: authenticated"), "\(lab.daemon.text)")
        }

        /// The house smoke over HTTPS: a separately started pass-sim and no statement.
        @Test func withoutAStatementTheUnsignedLabStatementIsRefused() async throws {
            let lab = try await Lab.start(devices: 3, simulatorArguments: ["--auto-approve-after", "1"], wire: .httpsHTTP2, softwareStatement: false)
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                #expect(await DaemonEndToEndTests.nextEvent(&events, where: Self.isRegistrationRefused) != nil, "\(lab.daemon.text)")
            }
            #expect(lab.simulator.text.contains("invalid_software_statement"), "\(lab.simulator.text)")
            // One line says what to do, however many devices are refused.
            let hint = "the backend refused the unsigned lab statement"
            #expect(await lab.daemon.waitForOutput(hint), "\(lab.daemon.text)")
            #expect(lab.daemon.text.components(separatedBy: hint).count == 2, "\(lab.daemon.text)")
            #expect(lab.daemon.text.contains("pass-sim statement --statement-key"))
            #expect(lab.daemon.text.contains("--accept-unsigned-statements"))
        }

        @Test func acceptingUnsignedStatementsKeepsAnOldSetUpWorkingAndSaysSo() async throws {
            let lab = try await Lab.start(
                simulatorArguments: ["--auto-approve-after", "1", "--accept-unsigned-statements"],
                softwareStatement: false
            )
            #expect(lab.simulator.text.contains("software statements are accepted unsigned"), "\(lab.simulator.text)")
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                #expect(await DaemonEndToEndTests.nextEvent(&events, where: DaemonEndToEndTests.isAuthenticated) != nil, "\(lab.daemon.text)")
            }
        }

        @Test func theStatementCommandNeedsTheKeyAndKeepsIt() throws {
            let directory = try TemporaryDirectory()
            let pem = directory.path("key.pem")
            let refused = try Command.run(BuiltProducts.url("pass-sim"), ["statement", "--software-id", "lab"])
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains("--statement-key"), "\(refused.stderr)")

            let first = try Command.run(BuiltProducts.url("pass-sim"), ["statement", "--statement-key", pem, "--software-id", "lab"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stderr.contains("created the statement key"))
            #expect(first.stdout.split(separator: ".").count == 3)
            let mode = try FileManager.default.attributesOfItem(atPath: pem)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let key = try String(contentsOfFile: pem, encoding: .utf8)

            let second = try Command.run(
                BuiltProducts.url("pass-sim"),
                ["statement", "--statement-key", pem, "--software-id", "lab", "--redirect-uri", "adobepass://a", "--redirect-uri", "https://b"]
            )
            #expect(second.status == 0, "\(second.stderr)")
            #expect(!second.stderr.contains("created"))
            #expect(try String(contentsOfFile: pem, encoding: .utf8) == key)
            let payload = try #require(second.stdout.split(separator: ".").dropFirst().first)
            let claims = try #require(Self.decodeBase64URL(String(payload)))
            let json = try #require(try JSONSerialization.jsonObject(with: claims) as? [String: Any])
            #expect(json["software_id"] as? String == "lab")
            #expect(json["redirect_uris"] as? [String] == ["adobepass://a", "https://b"])

            // Beside a state file: its name without .sqlite.
            let besideState = try Command.run(
                BuiltProducts.url("pass-sim"),
                ["statement", "--state", directory.path("sim.sqlite"), "--software-id", "lab"]
            )
            #expect(besideState.status == 0, "\(besideState.stderr)")
            #expect(FileManager.default.fileExists(atPath: directory.path("sim.statement-key.pem")))
        }

        static func decodeBase64URL(_ text: String) -> Data? {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return Data(base64Encoded: base64)
        }
    }
}
