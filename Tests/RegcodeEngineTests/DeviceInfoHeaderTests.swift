import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

@Suite struct DeviceInfoHeaderTests {
    /// The header's bytes are what Foundation's encoder made of the `Codable` form before the shared writer
    /// took over: a backend that compares or caches them sees no change.
    @Test(arguments: [nil, "com.example.tv/app \"x\" é"])
    func headerIsTheSortedCompactCodableForm(applicationId: String?) throws {
        var info = DeviceInfo()
        info.applicationId = applicationId
        info.model = "AppleTV\u{7}/4K"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = try encoder.encode(info).base64EncodedString()
        #expect(info.headerValue == expected)
    }
}
