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
    }
}
