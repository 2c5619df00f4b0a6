import Testing

@testable import RegcodeDaemon

/// The reference is rendered from the rows the reader walks: its defaults come from the default values, and a key
/// the reader refuses in a section is not listed there.
@Suite struct ConfigurationReferenceTests {
    @Test func defaultsAndRangesComeFromTheRows() throws {
        let keys = ConfigurationReference.all.flatMap(\.keys)
        let byPath = Dictionary(keys.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(keys.count == byPath.count, "a key path is listed twice")
        #expect(byPath["fleets[].poll.backoff_cap"]?.defaultValue == "1m")
        #expect(byPath["fleets[].poll.preset"]?.defaultValue == "adobe-v2")
        #expect(byPath["fleet_loops"]?.allowed == "1…64")
        #expect(byPath["log_level"]?.allowed.contains("critical") == true)
        #expect(byPath["tls.min_version"]?.defaultValue == "1.2")
        #expect(byPath["fleets[].apps[].access_enabler"]?.defaultValue == "3.9.2")
    }

    @Test func everyListedKeyIsReadAndDefaultsRefusesNameAndCount() throws {
        // A key the table lists at the top level is read, not refused as unknown.
        for key in ConfigurationReference.all[0].keys where !["fleets", "defaults", "thresholds"].contains(key.path) {
            do {
                _ = try ConfigurationFile.parse("\(key.path): ~\n", file: "x.yaml")
            } catch {
                #expect(error.reason != "unknown key", "\(key.path)")
            }
        }
        #expect(throws: ConfigurationError(file: "x.yaml", key: "defaults.name", reason: "unknown key")) {
            try ConfigurationFile.parse("defaults:\n  name: a\n", file: "x.yaml")
        }
    }
}
