import Foundation
import RegcodeRecords
import RegcodeTestSupport
import SoakReport
import Testing

/// The 18-of-20 run of ``TroubleFixture``: every figure below is worked out in its comment.
@Suite struct TroubleReportTests {
    let report = TroubleFixture.report()

    @Test func devicesThatNeverGotACodeAndWhereTheyStopped() throws {
        let t = report.trouble.figures
        #expect(t.devices == 20)
        #expect(t.devicesWithCode == 2)
        #expect(t.neverGotCode == TroubleFixture.doomed)
        #expect(t.stops == [StopGroup(stage: .registration, status: "429", devices: TroubleFixture.doomed)])
        let doomed7 = try #require(report.devices.first { $0.device == "doomed-7" })
        #expect(doomed7.fleet == "doomed")
        #expect(doomed7.trouble.gotCode == false)
        #expect(doomed7.trouble.stoppedAt == .registration)
        #expect(doomed7.trouble.stopStatus == "429")
        #expect(doomed7.trouble.lastError == "registration 429 throttled (too_many_requests)")
        #expect(doomed7.trouble.throttled == 3)
        let steady1 = try #require(report.devices.first { $0.device == "steady-1" })
        #expect(steady1.trouble.gotCode)
        #expect(steady1.trouble.stoppedAt == nil)
        #expect(steady1.trouble.throttled == 1)
        #expect(steady1.trouble.lastErrorShort == "configuration 503")
        #expect(doomed7.trouble.lastErrorShort == "registration 429 (too_many_requests)")
        #expect(steady1.trouble.serverErrors == 1)
        #expect(steady1.trouble.lastError == "configuration 503 server-error")
    }

    @Test func fourTwentyNinesAndFiveHundredsByStage() throws {
        let t = report.trouble.figures
        let rows = t.stages.map { [$0.stage.rawValue: [$0.requests, $0.failed, $0.throttled, $0.serverErrors]] }
        #expect(
            rows == [
                ["registration": [56, 54, 54, 0]], ["token": [2, 0, 0, 0]], ["configuration": [3, 1, 0, 1]], ["session": [2, 0, 0, 0]],
                ["poll": [6, 2, 2, 0]],
            ]
        )
        #expect(t.throttled == 56)
        #expect(t.serverErrors == 1)
        // The poll log alone knows of two 429s.
        #expect(report.fleet.throttled == 2)
    }

    @Test func troubleWindowsComeFromTheData() throws {
        #expect(report.trouble.bucketMs == 1000)
        let timeline = report.trouble.figures.timeline
        #expect(timeline.count == 31)
        #expect(timeline.prefix(5).map(\.throttled) == [9, 18, 9, 9, 9])
        #expect(timeline[0].requests == 18)
        #expect(timeline[0].serverErrors == 1)
        #expect(timeline[25].throttled == 2)
        #expect(timeline[25].requests == 2)
        let windows = report.trouble.windows
        #expect(windows.count == 2)
        let first = try #require(windows.first)
        #expect(first.label == "T1")
        #expect(first.startMs == TroubleFixture.t0)
        #expect(first.endMs == TroubleFixture.t0 + 5000)
        #expect(first.requests == 63)
        #expect(first.throttled == 54)
        #expect(first.serverErrors == 1)
        #expect(first.worstStage == .registration)
        #expect(first.fleets == ["doomed", "steady"])
        let second = try #require(windows.last)
        #expect(second.label == "T2")
        #expect(second.startMs == TroubleFixture.t0 + 25000)
        #expect(second.endMs == TroubleFixture.t0 + 26000)
        #expect(second.worstStage == .poll)
        #expect(second.fleets == ["steady"])
    }

    @Test func bucketsAreAMinuteOrFinerForShortRuns() {
        #expect(SoakReport.bucketWidth(spanMs: 30_000) == 1000)
        #expect(SoakReport.bucketWidth(spanMs: 600_000) == 5000)
        #expect(SoakReport.bucketWidth(spanMs: 7_199_999) == 30_000)
        #expect(SoakReport.bucketWidth(spanMs: 2 * 3_600_000) == 60_000)
        #expect(SoakReport.bucketWidth(spanMs: 7 * 86_400_000) == 60_000)
    }

    @Test func aSingleStrayErrorInABusyBucketIsNoWindow() {
        var buckets = (0..<4).map { TimeBucket(startMs: Int64($0) * 1000) }
        for index in buckets.indices { buckets[index].requests = 100 }
        buckets[1].serverErrors = 1  // 1 % of the bucket
        buckets[3].throttled = 5  // 5 %
        buckets[2].requests = 2
        buckets[2].throttled = 1  // half, but one stray error
        let windows = SoakReport.troubleWindows(timeline: buckets, bucketMs: 1000, stageErrors: { _, _ in nil }, fleetErrors: { _, _ in [] })
        #expect(windows.map(\.startMs) == [3000])
        buckets[0].serverErrors = 2  // 2 %: too small a share
        #expect(
            SoakReport.troubleWindows(timeline: buckets, bucketMs: 1000, stageErrors: { _, _ in nil }, fleetErrors: { _, _ in [] }).count == 1
        )
    }

    @Test func headlineSaysWhatWentWrong() {
        #expect(
            report.headline == [
                "18 of 20 devices never got a code: 18 stopped at registration (429).",
                "429s: 56 (registration 54, poll 2).",
                "5xx: 1 (configuration 1).",
                "2 trouble windows: T1 08:00:00–08:00:05, T2 08:00:25–08:00:26.",
            ]
        )
    }

    @Test func textLeadsWithTheTroubleAndNamesTheDeadDevices() throws {
        let lines = report.text().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[2] == "trouble: 18 of 20 devices never got a code: 18 stopped at registration (429).")
        #expect(lines[3] == "         429s: 56 (registration 54, poll 2).")
        let named = lines.prefix(12).joined(separator: "\n")
        for device in TroubleFixture.doomed {
            #expect(named.contains(device + ",") || named.contains(device + "\n"), "\(device) is not named near the top")
        }
        #expect(!named.contains("steady-1"))
        let text = report.text()
        #expect(text.contains("TROUBLE BY STAGE (56 429s, 1 5xx, 57 errors in all)"))
        let stageLines = text.components(separatedBy: "TROUBLE BY STAGE")[1].components(separatedBy: "\n").dropFirst().prefix(6)
        let fields = stageLines.map { $0.split(separator: " ").map(String.init) }
        #expect(fields.contains(["registration", "56", "54", "54", "0"]))
        #expect(fields.contains(["configuration", "3", "1", "0", "1"]))
        #expect(fields.contains(["poll", "6", "2", "2", "0"]))
        #expect(
            text.contains("T1 08:00:00–08:00:05 (5 s): 54 429s, 1 5xx, 0 other errors of 63 requests; mostly registration; fleets doomed, steady")
        )
        #expect(text.contains("FLEETS\n"))
        #expect(text.contains("registration (429)"))
    }

    @Test func jsonCarriesTheTroubleFiguresAndKeepsTheOldKeys() throws {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(Set(json.keys).isSuperset(of: JSONRenderingTests.topLevelKeys))
        let trouble = try #require(json["trouble"] as? [String: Any])
        #expect(trouble["never_got_code"] as? Int == 18)
        #expect(trouble["devices_with_code"] as? Int == 2)
        #expect(trouble["throttled_429"] as? Int == 56)
        #expect(trouble["server_5xx"] as? Int == 1)
        #expect(trouble["bucket_ms"] as? Int == 1000)
        let stages = try #require(trouble["by_stage"] as? [String: [String: Int]])
        #expect(stages["registration"] == ["requests": 56, "errors": 54, "throttled_429": 54, "server_5xx": 0])
        #expect(stages["poll"]?["throttled_429"] == 2)
        let stops = try #require(trouble["stopped_at"] as? [[String: Any]])
        #expect(stops.count == 1)
        #expect(stops[0]["stage"] as? String == "registration")
        #expect(stops[0]["status"] as? String == "429")
        #expect((stops[0]["devices"] as? [String])?.count == 18)
        let dead = try #require(trouble["never_got_code_devices"] as? [[String: Any]])
        #expect(dead.map { $0["device"] as? String } == TroubleFixture.doomed)
        let windows = try #require(trouble["windows"] as? [[String: Any]])
        #expect(windows.map { $0["label"] as? String } == ["T1", "T2"])
        #expect((trouble["headline"] as? [String])?.first == "18 of 20 devices never got a code: 18 stopped at registration (429).")
        // The old figures are still there and unchanged in meaning: poll 429s in `throttled_429`.
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(fleet["throttled_429"] as? Int == 2)
        #expect((fleet["onboarding"] as? [String: Any])?["failed_onboardings"] as? Int == 18)
        let fleets = try #require(json["fleets"] as? [[String: Any]])
        #expect(fleets.map { $0["fleet"] as? String } == ["doomed", "steady"])
        let fleetTrouble = fleets.map { $0["trouble"] as? [String: Any] }
        #expect(fleetTrouble.map { $0?["never_got_code"] as? Int } == [18, 0])
        #expect(fleetTrouble.map { $0?["throttled_429"] as? Int } == [54, 2])
        // The poll log's own figures per fleet keep their keys.
        #expect(fleets.map { $0["throttled_429"] as? Int } == [0, 2])
        let devices = try #require(json["devices"] as? [[String: Any]])
        let first = try #require(devices.first)
        #expect(first["fleet"] as? String == "doomed")
        #expect((first["trouble"] as? [String: Any])?["stopped_at"] as? String == "registration")
    }

    @Test func csvHasTroubleColumnsAndOneRowPerFleet() throws {
        let rows = CSVRenderingTests.records(report.csv())
        let header = try #require(rows.first)
        #expect(Set(header).count == header.count)
        #expect(rows.allSatisfy { $0.count == header.count })
        func value(_ row: Int, _ name: String) -> String? { header.firstIndex(of: name).map { rows[row][$0] } }
        // Header, fleet, 20 devices (doomed-1 … doomed-18, steady-1, steady-2), then the two fleets.
        #expect(rows.count == 1 + 1 + 20 + 2)
        #expect(value(1, "never_got_code") == "18")
        #expect(value(1, "all_429") == "56")
        #expect(value(1, "stopped_at") == "registration")
        #expect(value(2, "device") == "doomed-1")
        #expect(value(2, "got_code") == "0")
        #expect(value(2, "stop_status") == "429")
        #expect(value(2, "registration_429") == "3")
        #expect(value(20, "device") == "steady-1")
        #expect(value(20, "poll_errors") == "1")
        #expect(value(22, "scope") == "group")
        #expect(value(22, "fleet") == "doomed")
        #expect(value(22, "all_429") == "54")
        #expect(value(23, "fleet") == "steady")
        #expect(value(23, "got_code") == "2")
        #expect(value(23, "all_5xx") == "1")
    }

    @Test func htmlFirstSectionSaysItInWords() throws {
        let html = report.html()
        let summary = try #require(
            html.components(separatedBy: "<section class=\"summary").dropFirst().first?.components(separatedBy: "</section>").first
        )
        #expect(summary.contains("What went wrong"))
        #expect(summary.contains("18 of 20 devices never got a code: 18 stopped at registration (429)."))
        #expect(summary.contains("429s: 56 (registration 54, poll 2)."))
        #expect(summary.contains("<span class=\"nw\">doomed-18</span>"))
        // The summary comes before every chart and table.
        let summaryAt = try #require(html.range(of: "<section class=\"summary"))
        #expect(html.range(of: "<svg")!.lowerBound > summaryAt.lowerBound)
        #expect(html.range(of: "<table")!.lowerBound > summaryAt.lowerBound)
        #expect(html.contains(">Devices</div><div class=\"value\">20</div><div class=\"sub\">2 got a code · 18 never did"))
        #expect(html.contains(">429s</div><div class=\"value\">56</div>"))
        #expect(html.contains("Not drawn: 18 devices that never got a code"))
    }

    @Test func htmlShadesTheTroubleWindows() {
        let html = report.html()
        #expect(html.contains("<h2>Errors and 429s over time</h2>"))
        // One shaded window per window in each of the three error charts (all fleets, doomed, steady).
        #expect(html.components(separatedBy: "<rect class=\"window\"").count - 1 == 2 * 3)
        #expect(html.contains(">T1</text>"))
        #expect(html.contains(">T2</text>"))
    }

    @Test func sortableDeviceTableWithTheTroubleColumnsFirst() throws {
        let html = report.html()
        let table = try #require(
            html.components(separatedBy: "<table class=\"sortable\">").dropFirst().first?.components(separatedBy: "</table>").first
        )
        let headers = table.components(separatedBy: "<th ").dropFirst().map { $0.components(separatedBy: ">")[1].components(separatedBy: "<")[0] }
        #expect(Array(headers.prefix(8)) == ["Device", "Fleet", "Got a code", "Stopped at", "Last error", "429s", "5xx", "Errors"])
        #expect(
            table.contains(
                "<tr><td>doomed-1</td><td>doomed</td><td data-v=\"0\" class=\"warn\">no</td><td class=\"warn\">registration 429</td><td>registration 429 (too_many_requests)</td>"
            )
        )
        #expect(table.components(separatedBy: "<tr><td>").count - 1 == 20)
        // The sorting script is inline, and it is the page's only script.
        #expect(html.components(separatedBy: "<script").count - 1 == 1)
        #expect(html.contains("table.sortable"))
        #expect(!html.contains("<script src"))
    }
}

/// The per-fleet split: a noisy fleet never hides a quiet one.
@Suite struct TroubleFleetSplitTests {
    let report = TroubleFixture.noisyAndQuiet()

    @Test func theQuietFleetKeepsItsOwnFigures() throws {
        #expect(report.fleets.map(\.fleet) == ["noisy", "quiet"])
        let quiet = try #require(report.fleets.last)
        #expect(quiet.figures.polls == 24)
        #expect(quiet.figures.throttled == 0)
        #expect(quiet.figures.achievedInterval.p50 == 5000)
        #expect(quiet.figures.achievedInterval.max == 5000)
        #expect(quiet.series.achievedIntervals == [Double](repeating: 5000, count: 22))
        #expect(quiet.series.lateness.count == 24)
        #expect(quiet.trouble.failed == 0)
        let noisy = try #require(report.fleets.first)
        #expect(noisy.figures.polls == 300)
        #expect(noisy.figures.throttled == 150)
        #expect(noisy.figures.achievedInterval.p50 == 1000)
        #expect(noisy.trouble.stage(.poll)?.throttled == 150)
        // Fleet-wide, the quiet fleet's 5 s interval is under the 99th percentile of noise.
        #expect(report.fleet.achievedInterval.p50 == 1000)
        #expect(report.headline.last == "Trouble in fleet noisy; no errors in quiet.")
    }

    @Test func everyChartHasTheQuietFleetsOwnSeries() throws {
        let html = report.html()
        let multiples = html.components(separatedBy: "<div class=\"multiple\"><h3>Fleet quiet</h3>")
        // One interval histogram and one lateness chart of its own.
        #expect(multiples.count - 1 == 2)
        let quietHistogram = multiples[1].components(separatedBy: "</svg>")[0]
        #expect(quietHistogram.contains("planned p50 5 s"))
        #expect(quietHistogram.contains("5 s to"))
        let quietErrors = try #require(html.components(separatedBy: "<h3>Fleet quiet <span class=\"h3-note\">").dropFirst().first)
        #expect(quietErrors.hasPrefix("0 429s, 0 5xx; 2 of 2 devices got a code</span></h3>"))
        #expect(html.contains("<h3>Fleet noisy <span class=\"h3-note\">150 429s, 0 5xx; 5 of 5 devices got a code</span></h3>"))
        #expect(html.contains("<h2>Fleets</h2>"))
    }

    @Test func textAndJSONSplitPerFleet() throws {
        let text = report.text()
        let fleets = text.components(separatedBy: "FLEETS\n")[1].components(separatedBy: "\n\n")[0].split(separator: "\n")
        #expect(fleets.count == 3)
        #expect(fleets[2].hasPrefix("quiet "))
        #expect(fleets[2].split(separator: " ").map(String.init) == ["quiet", "2", "2", "0", "-", "0", "0", "24", "5", "s", "0", "ms"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let groups = try #require(json["fleets"] as? [[String: Any]])
        let quiet = try #require(groups.last)
        #expect(quiet["polls"] as? Int == 24)
        #expect((quiet["achieved_interval_ms"] as? [String: Any])?["p50"] as? Int == 5000)
        #expect(quiet["throttled_429"] as? Int == 0)
        #expect((quiet["trouble"] as? [String: Any])?["errors"] as? Int == 0)
        #expect((groups.first?["trouble"] as? [String: Any])?["throttled_429"] as? Int == 150)
    }
}

/// `regcodectl report` on a database of the 18-of-20 run: the fleet column is read and the text
/// leads with the dead devices.
@Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
struct TroubleReportCommandTests {
    @Test func theCommandReadsFleetsAndLeadsWithTheTrouble() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("trouble-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let script = directory.appendingPathComponent("fill.sql")
        try Data((try String(contentsOf: ReportCommandTests.schema, encoding: .utf8) + "\n" + TroubleFixture.sql()).utf8).write(to: script)
        try SQLiteShell.run(path, input: script)
        let page = directory.appendingPathComponent("r.html")
        let run = try ReportCommandTests.report(["--database", path, "--html", page.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines[2] == "trouble: 18 of 20 devices never got a code: 18 stopped at registration (429).")
        #expect(lines.contains { $0.hasPrefix("never got a code: doomed-1, doomed-2,") })
        #expect(run.stdout.contains("FLEETS\n"))
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("<h3>Fleet steady "))
    }
}
