import Foundation
import RegcodeRecords
import RegcodeTestSupport
import SoakReport
import Testing

/// Thresholds as k6 writes them, read, checked against the hand-computed fixture, rendered, and through
/// `regcodectl report --check` with its exit status.
struct ThresholdTests {
    @Test func expressionsReadAsK6WritesThem() throws {
        let rate = try Threshold(parsing: "login_success_rate>=0.99")
        #expect(rate.metric == .loginSuccessRate && rate.comparison == .greaterOrEqual && rate.bound == 0.99 && rate.fleet == nil)
        let lateness = try Threshold(parsing: " poll_lateness_p99 < 50ms ")
        #expect(lateness.metric == .pollLatenessP99 && lateness.comparison == .less && lateness.bound == 50)
        #expect(try Threshold(parsing: "poll_latency_max<=2s").bound == 2000)
        #expect(try Threshold(parsing: "http_429_rate<1%").bound == 0.01)
        let fleet = try Threshold(parsing: "http_5xx_rate{fleet:stb-east}<0.001")
        #expect(fleet.fleet == "stb-east" && fleet.metric == .http5xxRate)
        #expect(try Threshold(parsing: "onboarding_failures==0").comparison == .equal)
        #expect(try Threshold(parsing: "logins!=0").comparison == .notEqual)
    }

    @Test(arguments: [
        ("poll_lateness_p99<50", "give '50' a unit"),
        ("latency<5ms", "unknown metric 'latency'"),
        ("login_success_rate", "expected METRIC OP VALUE"),
        ("http_429_rate<lots", "not a fraction"),
        ("onboarding_failures==0.5", "not a count"),
        ("polls{stb}>1", "{fleet:NAME}"),
        ("polls>", "no value"),
    ])
    func aBadExpressionSaysWhatIsWrong(expression: String, why: String) {
        #expect {
            try Threshold(parsing: expression)
        } throws: { error in
            "\(error)".contains(why) && "\(error)".contains(expression.trimmingCharacters(in: .whitespaces))
        }
    }

    @Test func valuesComeFromTheReportOverallAndPerFleet() throws {
        let report = Fixture.fullReport()
        let checked = report.check(
            try [
                "login_success_rate>=0.3", "polls==13", "logins==1", "onboarding_failures==0", "poll_lateness_p99<20ms",
                "poll_lateness_max<=20ms", "http_429_rate<0.01", "poll_lateness_p50{fleet:none}<1s",
            ].map { try Threshold(parsing: $0) }
        )
        // The default comes first: the fixture's polls were never more than 20 ms late.
        #expect(checked[0].threshold.description == "generator_behind_windows==0" && checked[0].value == 0 && checked[0].passed)
        let results = Array(checked.dropFirst())
        // AAA authenticated; BBB and CCC expired; XXX ended and DDD still open are not finished logins.
        #expect(results[0].value == 1.0 / 3 && results[0].passed)
        #expect(results[1].value == 13 && results[1].passed)
        #expect(results[2].value == 1 && results[2].passed)
        // stb-3 never got a code.
        #expect(results[3].value == 1 && !results[3].passed)
        // Lateness 0,0,0,0,1,2,3,5,5,7,10,10,20 ms: p99 and max are 20.
        #expect(results[4].value == 20 && !results[4].passed)
        #expect(results[5].value == 20 && results[5].passed)
        #expect(results[6].value.map { $0 > 0.01 } == true && !results[6].passed)
        #expect(results[7].value == nil && !results[7].passed && results[7].note?.contains("no fleet 'none'") == true)
        #expect(!results.allPassed)
    }

    @Test func aFigureWithoutSamplesFails() throws {
        let empty = SoakReport(polls: [], statusEvents: nil, generatedAtMs: 0, sinceMs: nil)
        let results = empty.check([try Threshold(parsing: "poll_lateness_p99<1s"), try Threshold(parsing: "login_success_rate>=0")]).dropFirst()
        #expect(results.count == 2)
        #expect(results.allSatisfy { !$0.passed && $0.value == nil && $0.valueText == "no samples" })
    }

    @Test func renderingsListEachThresholdWithItsValue() throws {
        let results = Fixture.fullReport().check([try Threshold(parsing: "polls>=13"), try Threshold(parsing: "poll_lateness_p99<20ms")])
        #expect(
            results.text
                == "Thresholds: 1 of 3 failed\n  pass  generator_behind_windows==0  0\n  pass  polls>=13                    13\n  FAIL  poll_lateness_p99<20ms       20 ms\n"
        )
        let junit = results.junit()
        #expect(junit.contains(#"<testsuite name="regcoded soak thresholds" tests="3" failures="1" errors="0" skipped="0">"#))
        #expect(junit.contains(#"<testcase name="polls&gt;=13" classname="thresholds"/>"#))
        #expect(junit.contains(#"<failure message="poll_lateness_p99&lt;20ms failed: 20 ms" type="threshold">"#))
    }

    /// Polls every 5 s for two minutes, planned on time except from 60 s to 80 s, where each went out `late` ms late.
    static func polls(late: Int64) -> [PollRecord] {
        (0..<24).map { index in
            let planned = 1_000_000 + Int64(index) * 5000
            let lateness: Int64 = (60_000...80_000).contains(planned - 1_000_000) ? late : 3
            return PollRecord(
                device: "stb-1",
                attempt: PollAttempt(
                    code: "C",
                    plannedEpochMs: planned,
                    sentEpochMs: planned + lateness,
                    latencyMs: 20,
                    httpStatus: 200,
                    outcome: .pending,
                    nextDelayMs: 5000
                )
            )
        }
    }

    @Test func anEmulatorThatFellBehindSaysSoFirstAndFailsByDefault() throws {
        let report = SoakReport(polls: Self.polls(late: 3470), statusEvents: nil, generatedAtMs: 2_000_000, sinceMs: nil)
        let window = try #require(report.generatorWindows.first)
        #expect(report.generatorWindows.count == 1)
        #expect(window.label == "G1" && window.latePolls == 5 && window.worstLatenessMs == 3470)
        #expect(report.headline[0].hasPrefix("The emulator fell behind its own schedule in 1 window (G1 "), "\(report.headline)")
        #expect(report.headline[0].contains("3.47 s"))
        #expect(!report.headline.contains { $0.hasPrefix("No trouble") })
        #expect(report.text().contains("The emulator fell behind"))
        #expect(report.html().contains("What went wrong"))
        #expect(report.json().contains(#""behind": true"#))
        let results = report.check([])
        #expect(results.count == 1 && !results.allPassed && results[0].value == 1)
        // The caller's own bound on the same metric replaces the default.
        #expect(report.check([try Threshold(parsing: "generator_behind_windows<=1")]).allPassed)
    }

    @Test func anEmulatorOnScheduleHasNoWindow() {
        let report = SoakReport(polls: Self.polls(late: 900), statusEvents: nil, generatedAtMs: 2_000_000, sinceMs: nil)
        #expect(report.generatorWindows.isEmpty)
        #expect(report.headline[0].hasPrefix("No trouble"))
        #expect(report.check([]).allPassed)
    }

    @Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
    struct Command {
        @Test func aFailingCheckExitsNinetyNineWithTheFailingLine() throws {
            let database = try ReportCommandTests.makeDatabase()
            defer { try? FileManager.default.removeItem(at: database.directory) }
            let failing = try ReportCommandTests.report(["--database", database.path, "--check", "polls==13", "onboarding_failures==0"])
            #expect(failing.status == 99, "\(failing.stderr)")
            #expect(failing.stdout.contains("Thresholds: 1 of 3 failed"))
            #expect(failing.stdout.range(of: "FAIL  onboarding_failures==0 +1\n", options: .regularExpression) != nil, "\(failing.stdout)")
            let passing = try ReportCommandTests.report(["--database", database.path, "--check", "polls==13", "--format", "json"])
            #expect(passing.status == 0, "\(passing.stderr)")
            #expect(passing.stdout.contains(#""passed": true"#))
            let junit = try ReportCommandTests.report(["--database", database.path, "--check", "logins>1", "--format", "junit"])
            #expect(junit.status == 99)
            #expect(junit.stdout.hasPrefix("<?xml") && junit.stdout.contains("<failure"))
            #expect(junit.stderr.contains("FAIL  logins>1"))
        }

        @Test func aBadExpressionOrJUnitWithoutChecksIsAUsageError() throws {
            let database = try ReportCommandTests.makeDatabase()
            defer { try? FileManager.default.removeItem(at: database.directory) }
            let bad = try ReportCommandTests.report(["--database", database.path, "--check", "poll_lateness_p99<50"])
            #expect(bad.status == 64 && bad.stderr.contains("give '50' a unit"), "\(bad.stderr)")
            let junit = try ReportCommandTests.report(["--database", database.path, "--format", "junit"])
            #expect(junit.status == 64 && junit.stderr.contains("give at least one --check"), "\(junit.stderr)")
        }
    }
}
