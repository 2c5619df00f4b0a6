import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// Every tool answers `--version` with the one release constant.
@Suite struct VersionCommandTests {
    @Test(arguments: ["regcoded", "regcodectl", "pass-sim"])
    func printsTheVersion(tool: String) throws {
        try #require(BuiltProducts.isBuilt(tool), "\(tool) is not built next to the test bundle")
        let result = try Command.run(BuiltProducts.url(tool), ["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == RegcodeVersion.current + "\n")
        #expect(RegcodeVersion.current.split(separator: ".").count == 3)
    }
}
