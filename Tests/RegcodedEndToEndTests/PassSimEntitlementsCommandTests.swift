import Foundation
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// `pass-sim --entitlements FILE` installs the entitlement variants; a file that is not one is refused at start.
    @Suite(.timeLimit(.minutes(1))) struct PassSimEntitlementsCommandTests {
        @Test func theFileIsLoadedAndShownByTheAdminAPI() async throws {
            let directory = try TemporaryDirectory()
            let file = directory.path("entitlements.json")
            try #"""
            {"tempPass": {"TempPass_TEST40": {"ttl": 3600}},
             "degradation": [{"serviceProvider": "REF30", "mvpd": "Cablevision", "rule": "AuthZAll"}],
             "homeNetworks": {"Verizon": {"addresses": ["127.0.0.0/8"]}},
             "itemErrors": {"resources": {"adult-movie": "authorization_denied_by_parental_controls"}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
            let started = try await PassSimProcess.start(["--entitlements", file])
            let (status, body) = try await started.request("/_sim/entitlements")
            #expect(status == 200)
            let settings = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect((settings["tempPass"] as? [String: Any])?["TempPass_TEST40"] != nil)
            #expect((settings["degradation"] as? [[String: Any]])?.first?["rule"] as? String == "AuthZAll")
            #expect((settings["homeNetworks"] as? [String: Any])?["Verizon"] != nil)
            started.process.signal(SIGTERM)
            #expect(await started.process.waitForExit() == 0)
        }

        @Test func helpNamesTheFlagAndTheVariants() throws {
            let help = try Command.run(BuiltProducts.url("pass-sim"), ["--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("--entitlements"))
            #expect(help.stdout.contains("/reset-tempass/v3/reset"))
        }

        @Test func aBadFileIsRefusedNamingIt() throws {
            let directory = try TemporaryDirectory()
            let file = directory.path("bad.json")
            try #"{"homeNetworks": {"Verizon": {"addresses": ["not-a-block"]}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
            let refused = try Command.run(BuiltProducts.url("pass-sim"), ["--listen", "127.0.0.1:0", "--entitlements", file])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains(file), "\(refused.stderr)")
            let unknown = directory.path("unknown.json")
            try #"{"degradation": [{"mvpd": "Nowhere", "rule": "AuthNAll"}]}"#.write(toFile: unknown, atomically: true, encoding: .utf8)
            let refusedUnknown = try Command.run(BuiltProducts.url("pass-sim"), ["--listen", "127.0.0.1:0", "--entitlements", unknown])
            #expect(refusedUnknown.status != 0)
            #expect(refusedUnknown.stderr.contains("Nowhere"), "\(refusedUnknown.stderr)")
        }
    }
}
