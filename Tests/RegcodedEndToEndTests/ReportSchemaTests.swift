import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// `regcodectl report` on a database of every released schema: each fixture is that release's `schema.sql` (from
    /// git history) with the same rows, and the report reads all of them without changing the file.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct ReportSchemaTests {
        static let fixtures = BuiltProducts.repository.appendingPathComponent("Tests/fixtures/schemas")

        /// A database as release `version` created it, holding the rows of `rows.sql`.
        static func database(version: Int, in directory: TemporaryDirectory) throws -> String {
            let path = directory.path("schema-\(version).sqlite")
            try SQLiteShell.run(path, input: fixtures.appendingPathComponent("schema-\(version).sql"))
            try SQLiteShell.run(path, input: fixtures.appendingPathComponent("rows.sql"))
            return path
        }

        @Test(arguments: 1...7)
        func reportReadsTheSchemaUnchanged(version: Int) throws {
            let directory = try TemporaryDirectory()
            let database = try Self.database(version: version, in: directory)
            #expect(try SQLiteShell.run(database, "PRAGMA user_version") == "\(version)")
            let before = try Data(contentsOf: URL(fileURLWithPath: database))

            let json = try Command.run(BuiltProducts.url("regcodectl"), ["report", "--database", database, "--format", "json"])
            #expect(json.status == 0, "schema \(version): \(json.stderr)")
            let report = try JSONValueParser.parse(Data(json.stdout.utf8), numbers: .integralAsInt)
            #expect(report["fleet"]?["devices"] == .int(2), "schema \(version)")
            #expect(report["fleet"]?["polls"] == .int(5), "schema \(version)")
            #expect(report["fleet"]?["codes"] == .int(2), "schema \(version)")
            #expect(report["fleet"]?["throttled_429"] == .int(1), "schema \(version)")

            let text = try Command.run(BuiltProducts.url("regcodectl"), ["report", "--database", database])
            #expect(text.status == 0, "schema \(version): \(text.stderr)")
            // Read only: the file is byte for byte what the release wrote, and nothing was created beside it.
            #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before, "schema \(version)")
            #expect(try SQLiteShell.run(database, "PRAGMA user_version") == "\(version)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            #expect(names == ["schema-\(version).sqlite"], "schema \(version): \(names)")
        }

        /// The fixtures cover every schema the store knows, up to the current one.
        @Test func aFixturePerReleasedSchema() throws {
            let schema = try String(contentsOf: BuiltProducts.repository.appendingPathComponent("Sources/RegcodeStore/schema.sql"), encoding: .utf8)
            let current = try #require(
                schema.split(separator: "\n").first { $0.hasPrefix("PRAGMA user_version = ") }
                    .flatMap { Int($0.dropFirst("PRAGMA user_version = ".count).prefix { $0.isNumber }) }
            )
            #expect(current == 7, "a new schema needs its fixture in Tests/fixtures/schemas and in the arguments above")
            for version in 1...current {
                #expect(FileManager.default.fileExists(atPath: Self.fixtures.appendingPathComponent("schema-\(version).sql").path))
            }
        }
    }
}
