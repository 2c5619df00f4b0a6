import Foundation
import SoakReport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct JSONRenderingTests {
    static let figureKeys: Set<String> = [
        "polls", "codes", "polls_per_code", "polls_per_login", "achieved_interval_ms", "planned_interval_ms", "lateness_ms", "latency_ms",
        "throttled_429", "backoffs", "outcomes", "http_statuses", "code_fates", "authenticated_codes",
        "time_to_authenticate_ms", "expiries", "device_flow", "first_sent_ms", "last_sent_ms",
    ]
    static let distributionKeys: Set<String> = ["count", "min", "p50", "p95", "p99", "max", "mean"]
    static let topLevelKeys: Set<String> = [
        "generator", "generated_at_ms", "generated_at", "since_ms", "events_loaded", "percentile_method", "fleet", "devices", "trouble", "fleets",
    ]

    private func parse(_ report: SoakReport) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(report.json().utf8))
        return try #require(object as? [String: Any])
    }

    @Test func topLevelFleetAndDeviceKeys() throws {
        let json = try parse(Fixture.report())
        #expect(Set(json.keys) == Self.topLevelKeys)
        #expect(json["percentile_method"] as? String == "nearest-rank")
        #expect(json["events_loaded"] as? Bool == true)
        #expect(json["generated_at_ms"] as? Int == 100_000)
        #expect(json["generated_at"] as? String == "1970-01-01T00:01:40.000Z")
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(Set(fleet.keys) == Self.figureKeys.union(["devices", "logins"]))
        #expect(fleet["devices"] as? Int == 3)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["device"] as? String } == ["stb-1", "stb-2", "stb-3"])
        for device in devices {
            #expect(Set(device.keys) == Self.figureKeys.union(["device", "fleet", "trouble"]))
            for key in [
                "polls_per_code", "polls_per_login", "achieved_interval_ms", "planned_interval_ms", "lateness_ms", "latency_ms",
                "time_to_authenticate_ms",
            ] {
                let distribution = try #require(device[key] as? [String: Any])
                #expect(Set(distribution.keys) == Self.distributionKeys)
            }
            let expiries = try #require(device["expiries"] as? [String: Any])
            #expect(Set(expiries.keys) == ["expired_codes", "code_invalid_polls", "reg410_events", "reg500_events"])
            let fates = try #require(device["code_fates"] as? [String: Any])
            #expect(Set(fates.keys) == ["authenticated", "expired", "denied", "ended", "open"])
            let flow = try #require(device["device_flow"] as? [String: Int])
            #expect(flow == ["slow_down_answers": 0, "early_polls": 0, "early_polls_after_slow_down": 0, "denied_codes": 0])
        }
    }

    @Test func valuesAreTheComputedFigures() throws {
        let json = try parse(Fixture.report())
        let fleet = try #require(json["fleet"] as? [String: Any])
        let lateness = try #require(fleet["lateness_ms"] as? [String: Any])
        #expect(lateness["p50"] as? Int == 3)
        #expect(lateness["p99"] as? Int == 20)
        #expect(lateness["min"] as? Int == 0)
        let perCode = try #require(fleet["polls_per_code"] as? [String: Any])
        #expect(perCode["mean"] as? Double == 2.6)
        #expect(fleet["throttled_429"] as? Int == 1)
        #expect(fleet["backoffs"] as? Int == 2)
        let devices = try #require(json["devices"] as? [[String: Any]])
        let stb2 = devices[1]
        #expect(stb2["http_statuses"] as? [String: Int] == ["200": 5, "410": 1, "none": 1])
        let tta = try #require(stb2["time_to_authenticate_ms"] as? [String: Any])
        #expect(tta["count"] as? Int == 0)
        #expect(tta["p50"] is NSNull)
        let outcomes = try #require(stb2["outcomes"] as? [String: Int])
        #expect(outcomes.count == SoakReport.outcomeKinds.count)
        #expect(outcomes["code-invalid"] == 1)
    }

    @Test func eventFiguresAreNullWhenEventsWereNotRead() throws {
        let json = try parse(Fixture.report(events: nil))
        #expect(json["events_loaded"] as? Bool == false)
        let fleet = try #require(json["fleet"] as? [String: Any])
        let expiries = try #require(fleet["expiries"] as? [String: Any])
        #expect(expiries["reg410_events"] is NSNull)
        #expect(expiries["expired_codes"] as? Int == 2)
    }

    @Test func awkwardDeviceNamesRoundTrip() throws {
        let name = "quote \" backslash \\ newline \n tab \t bell \u{7} é"
        let report = SoakReport(polls: [Fixture.poll(name, "C", 0, 1, 200, "pending", 5000, latency: 1)], statusEvents: nil, generatedAtMs: 0)
        let json = try parse(report)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.first?["device"] as? String == name)
        #expect(report.json() == report.json(), "rendering is deterministic")
        #expect(!report.json(pretty: false).contains("\n"))
    }

    @Test func emptyReportIsStillComplete() throws {
        let json = try parse(SoakReport(polls: [], statusEvents: [], generatedAtMs: 0))
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(Set(fleet.keys) == Self.figureKeys.union(["devices", "logins"]))
        #expect(fleet["polls"] as? Int == 0)
        #expect(fleet["first_sent_ms"] is NSNull)
        #expect((json["devices"] as? [Any])?.isEmpty == true)
    }
}

@Suite struct CSVRenderingTests {
    /// RFC 4180 fields of each record.
    static func records(_ csv: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(csv)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                record.append(field)
                field = ""
            } else if character == "\r\n" || character == "\n" {
                record.append(field)
                field = ""
                records.append(record)
                record = []
            } else {
                field.append(character)
            }
        }
        return records
    }

    @Test func headerAndOneRowPerDevicePlusFleet() throws {
        let rows = Self.records(Fixture.report().csv())
        let header = try #require(rows.first)
        #expect(Array(header.prefix(4)) == ["scope", "device", "polls", "codes"])
        for column in [
            "polls_per_code_mean", "polls_per_code_max", "achieved_interval_count", "achieved_interval_p50_ms",
            "achieved_interval_p95_ms", "achieved_interval_p99_ms", "achieved_interval_max_ms", "planned_interval_p50_ms",
            "lateness_min_ms", "lateness_p50_ms", "lateness_p95_ms", "lateness_p99_ms", "lateness_max_ms", "throttled_429",
            "backoffs", "authenticated_codes", "time_to_authenticate_p50_ms", "expired_codes", "code_invalid_polls",
            "reg410_events", "reg500_events", "outcome_server_error", "http_429", "http_none",
        ] {
            #expect(header.contains(column), "missing column \(column)")
        }
        #expect(Set(header).count == header.count, "column names are unique")
        #expect(rows.count == 1 + 1 + 3)
        #expect(rows.allSatisfy { $0.count == header.count })
        #expect(rows[1][0] == "fleet" && rows[1][1] == "")
        #expect(rows.dropFirst(2).map { $0[1] } == ["stb-1", "stb-2", "stb-3"])
        func value(_ row: Int, _ name: String) -> String? { header.firstIndex(of: name).map { rows[row][$0] } }
        #expect(value(1, "polls") == "13")
        #expect(value(1, "lateness_p50_ms") == "3")
        #expect(value(1, "polls_per_code_mean") == "2.6")
        #expect(value(2, "backoffs") == "1")
        #expect(value(3, "http_none") == "1")
        #expect(value(4, "time_to_authenticate_p50_ms") == "", "no value is an empty field")
        #expect(value(4, "reg500_events") == "1")
    }

    @Test func fieldsWithCommasAndQuotesAreQuoted() throws {
        let name = "lab, rack \"7\""
        let csv = SoakReport(polls: [Fixture.poll(name, "C", 0, 1, 200, "pending", 5000, latency: 1)], statusEvents: nil, generatedAtMs: 0).csv()
        #expect(csv.contains("\"lab, rack \"\"7\"\"\""))
        let rows = Self.records(csv)
        #expect(rows[2][1] == name)
        #expect(rows[2][0] == "device")
    }
}

@Suite struct TextRenderingTests {
    @Test func fleetBlockAndDeviceTable() {
        let text = Fixture.report().text()
        #expect(text.contains("FLEET (3 devices)"))
        #expect(text.contains("13 (5 codes; per code mean 2.6, max 4)"))
        #expect(text.contains("min 0 ms  p50 3 ms  p95 20 ms  p99 20 ms  max 20 ms"))
        #expect(text.contains("REG410 events 2, REG500 events 2"))
        let table = text.components(separatedBy: "DEVICES\n")[1].split(separator: "\n")
        #expect(table.count == 4)
        #expect(table[0].hasPrefix("DEVICE"))
        #expect(table[1].hasPrefix("stb-1 "))
        #expect(table[3].hasPrefix("stb-3 "))
    }

    @Test func controlCharactersInNamesDoNotReachTheTerminal() {
        let report = SoakReport(
            polls: [Fixture.poll("evil\u{1B}[2J", "C", 0, 1, 200, "pending", 5000, latency: 1)],
            statusEvents: nil,
            generatedAtMs: 0
        )
        #expect(!report.text().contains("\u{1B}"))
        #expect(report.text().contains("evil?[2J"))
    }
}

@Suite struct HTMLRenderingTests {
    static let hostileName = "<script>alert(\"x\")</script> & co"

    static func hostileReport() -> SoakReport {
        var polls = Fixture.polls
        polls.append(Fixture.poll(hostileName, "<C&D>", 3000, 3004, 200, "pending", 5000, latency: 2))
        polls.append(Fixture.poll(hostileName, "<C&D>", 8010, 8012, 200, "authenticated", nil, latency: 2))
        return SoakReport(polls: polls, statusEvents: Fixture.events, generatedAtMs: 100_000)
    }

    @Test func selfContainedPage() {
        let html = Self.hostileReport().html()
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.hasSuffix("</html>\n"))
        #expect(html.contains("<svg"))
        #expect(html.components(separatedBy: "<svg").count == html.components(separatedBy: "</svg>").count)
        for forbidden in ["<script src", "http://", "https://", "src=", "@import", "url(", "<link"] {
            #expect(!html.contains(forbidden), "the page must not contain \(forbidden)")
        }
        // The one script is the inline table sorter; the hostile name never becomes a tag.
        #expect(html.components(separatedBy: "<script").count - 1 == 1)
        #expect(html.contains("color-scheme:light dark"))
        #expect(html.contains("prefers-color-scheme:dark"))
    }

    @Test func namesAndCodesAreEscaped() {
        let html = Self.hostileReport().html()
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co"))
        #expect(html.contains("&lt;C&amp;D&gt;"))
        #expect(!html.contains("<C&D>"))
    }

    @Test func everyChartIsWellFormedXML() throws {
        let html = Self.hostileReport().html()
        var rest = html[...]
        var charts = 0
        while let start = rest.range(of: "<svg"), let end = rest.range(of: "</svg>", range: start.upperBound..<rest.endIndex) {
            let fragment = String(rest[start.lowerBound..<end.upperBound])
            let parser = XMLParser(data: Data(fragment.utf8))
            #expect(parser.parse(), "SVG \(charts) is not well-formed: \(parser.parserError.map { "\($0)" } ?? "?")")
            charts += 1
            rest = rest[end.upperBound...]
        }
        // Errors over time, interval histogram, lateness over time, device timeline.
        #expect(charts == 4)
    }

    @Test func chartsCarryTheFigures() {
        let html = Fixture.report().html()
        #expect(html.contains("planned p50 5 s"))
        #expect(html.contains("p99 20 ms"))
        #expect(html.contains("one dot per poll"))
        // Timeline tooltips name the codes and their states.
        #expect(html.contains("<title>stb-1: polling code AAA, 4 polls,"))
        #expect(html.contains("<title>stb-1: authenticated with code AAA,"))
        #expect(html.contains("<title>stb-2: code CCC expired or failed,"))
        #expect(html.contains("class=\"seg-expired\""))
        // Device table: one row per device.
        #expect(html.components(separatedBy: "<tr><td>").count - 1 == 3)
    }

    @Test func timelineCapsTheRowsAndSaysHowManyAreLeftOut() {
        let html = Fixture.report().html(timelineRows: 1)
        // stb-3 has no codes, so only stb-2 is left out.
        #expect(html.contains("1 more device not drawn"))
        #expect(html.contains("<title>stb-1: polling code AAA"))
        #expect(!html.contains("<title>stb-2: polling"))
    }

    @Test func denseLogsAreSummarisedPerColumn() {
        let polls = (0..<5000).map { index in
            Fixture.poll(
                "stb-\(index % 50)",
                "C\(index % 50)",
                Int64(index) * 100,
                Int64(index) * 100 + Int64(index % 7),
                200,
                "pending",
                5000,
                latency: 3
            )
        }
        let html = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0).html()
        #expect(html.contains("p99 per column"))
        #expect(!html.contains("one dot per poll"))
        #expect(html.contains("from the poll log (events not read)"))
    }

    @Test func emptyLogGivesAPageWithNotes() {
        let html = SoakReport(polls: [], statusEvents: [], generatedAtMs: 0).html()
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("No polls in this window."))
        #expect(html.contains("No codes were polled in this window."))
    }
}
