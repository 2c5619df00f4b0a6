import Foundation
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// `pass-sim`'s command line reads durations with the same grammar as `regcoded`.
    @Suite(.timeLimit(.minutes(1))) struct PassSimCommandTests {
        @Test func durationFlagsTakeUnitsAndBareSecondsAndRefuseNonsense() async throws {
            let withUnits = try await PassSimProcess.start(["--auto-approve-after", "2s", "--code-ttl", "30m"])
            #expect(withUnits.url.hasPrefix("http://127.0.0.1:"))
            withUnits.process.signal(SIGTERM)
            #expect(await withUnits.process.waitForExit() == 0)
            let bare = try await PassSimProcess.start(["--auto-approve-after", "2"])
            bare.process.signal(SIGTERM)
            #expect(await bare.process.waitForExit() == 0)
            let refused = try Command.run(BuiltProducts.url("pass-sim"), ["--listen", "127.0.0.1:0", "--auto-approve-after", "fast"])
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains("auto-approve-after"))
        }

        @Test(arguments: [
            (["--tls-cert", "cert.pem"], "--tls-key"),
            (["--no-http2"], "--no-http2 needs HTTPS"),
            (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs HTTPS"),
            (["--tls-self-signed", "lab", "--tls-cert", "c.pem", "--tls-key", "k.pem"], "not both"),
        ])
        func contradictoryTLSFlagsAreRefusedNamingTheFlag(arguments: [String], message: String) throws {
            let refused = try Command.run(BuiltProducts.url("pass-sim"), ["--listen", "127.0.0.1:0"] + arguments)
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
        }

        /// The TV Provider identity provider key must be readable and a P-256 public key or certificate.
        @Test func theIdentityProviderKeyIsCheckedAtStart() async throws {
            let directory = try TemporaryDirectory()
            let missing = try Command.run(
                BuiltProducts.url("pass-sim"),
                ["--listen", "127.0.0.1:0", "--tv-provider-idp-key", directory.path("none.pem")]
            )
            #expect(missing.status == 1, "\(missing.stderr)")
            #expect(missing.stderr.contains("cannot read"), "\(missing.stderr)")
            let garbage = directory.path("garbage.pem")
            try "not a key\n".write(toFile: garbage, atomically: true, encoding: .utf8)
            let refused = try Command.run(BuiltProducts.url("pass-sim"), ["--listen", "127.0.0.1:0", "--tv-provider-idp-key", garbage])
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("not a P-256 public key"), "\(refused.stderr)")
            let unsigned = try await PassSimProcess.start(["--accept-unsigned-saml"])
            unsigned.process.signal(SIGTERM)
            #expect(await unsigned.process.waitForExit() == 0)
        }

        /// A lab configured once with `ca.pem` keeps trusting a restarted simulator: its CA stays.
        @Test func aSelfSignedDirectoryKeepsItsCAFromRunToRun() async throws {
            let directory = try TemporaryDirectory()
            let lab = directory.path("lab-tls")
            var authorities: [String] = []
            for _ in 0..<2 {
                let started = try await PassSimProcess.start(["--tls-self-signed", lab])
                #expect(started.url.hasPrefix("https://127.0.0.1:"))
                #expect(started.process.text.contains("clients trust"))
                authorities.append(try String(contentsOfFile: lab + "/ca.pem", encoding: .utf8))
                started.process.signal(SIGTERM)
                #expect(await started.process.waitForExit() == 0)
            }
            #expect(authorities[0] == authorities[1])
            let key = try FileManager.default.attributesOfItem(atPath: lab + "/ca-key.pem")[.posixPermissions] as? Int
            #expect(key == 0o600)
        }
    }
}
