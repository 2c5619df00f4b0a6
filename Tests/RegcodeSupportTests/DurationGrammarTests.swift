import RegcodeSupport
import Testing

@Suite struct DurationGrammarTests {
    @Test(
        arguments: [
            ("5", 5_000), ("2.5", 2_500), ("500ms", 500), ("10s", 10_000), ("2s", 2_000), ("2m", 120_000),
            ("1h", 3_600_000), ("7d", 604_800_000), ("1w", 604_800_000), ("1h30m", 5_400_000), (" 5S ", 5_000),
            ("1.5m", 90_000), ("0", 0),
        ] as [(String, Int64)]
    )
    func readsEveryFormTheProjectWrites(text: String, milliseconds: Int64) {
        #expect(DurationParser.milliseconds(text) == milliseconds)
        #expect(DurationParser.parse(text) == .milliseconds(milliseconds))
    }

    @Test(arguments: ["", "-1", "fast", "5x", "ms", "1e16", "1e400", "nan", "inf", "5s-", "1h 30m"])
    func refusesWhatIsNotADurationOrCannotBeRepresented(text: String) {
        #expect(DurationParser.parse(text) == nil)
    }

    @Test func formatReadsBack() {
        for duration: Duration in [.milliseconds(250), .seconds(5), .seconds(120), .seconds(3600), .seconds(86_400 * 7)] {
            #expect(DurationParser.parse(DurationParser.format(duration)) == duration)
        }
    }

    @Test func refusalsSayWhy() {
        #expect(throws: DurationParser.Problem.notADuration("fast")) { try DurationParser.read("fast") }
        #expect(throws: DurationParser.Problem.negative("-1")) { try DurationParser.read("-1") }
        #expect(throws: DurationParser.Problem.notFinite("nan")) { try DurationParser.read("nan") }
        #expect(throws: DurationParser.Problem.notFinite("1e400")) { try DurationParser.read("1e400") }
        #expect(throws: DurationParser.Problem.tooLong("1e16")) { try DurationParser.read("1e16") }
        #expect(throws: DurationParser.Problem.tooLong("1e15")) { try DurationParser.read("1e15") }
        #expect(throws: DurationParser.Problem.tooLong("366d")) { try DurationParser.read("366d") }
        #expect(DurationParser.Problem.tooLong("366d").description == "'366d' is longer than the maximum of 365d")
    }

    /// A year is the longest duration, and it stays far inside `Int64` nanoseconds.
    @Test func maximumIsAYearAndFitsNanoseconds() throws {
        #expect(try DurationParser.read("365d") == DurationParser.maximum)
        #expect(try DurationParser.read("52w") == .seconds(52 * 604_800))
        let (seconds, _) = DurationParser.maximum.components
        #expect(seconds.multipliedReportingOverflow(by: 1_000_000_000 * 100).overflow == false)
    }
}
