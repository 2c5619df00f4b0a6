import Foundation
import RegcodeTestSupport
import SoakReport
import Testing

/// The `regcodectl` executable next to the test bundle, if it was built.
/// `regcodectl report` against a database made by `sqlite3 x.db < schema.sql` plus the fixture rows.
///
/// Runs when `regcodectl` sits next to the test bundle (a package-wide `swift build`/`swift test`
/// builds it, since the end-to-end tests depend on it); otherwise the suite is reported as skipped.
@Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
struct ReportCommandTests {

    static let schema = BuiltProducts.repository.appendingPathComponent("schema.sql")

    /// A fresh database holding the fixture's polls and events, in its own directory.
    static func makeDatabase() throws -> (directory: URL, path: String) {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("soak-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var sql = try String(contentsOf: schema, encoding: .utf8) + "\n"
        for poll in Fixture.polls {
            let status = poll.httpStatus.map(String.init) ?? "NULL"
            let next = poll.nextDelayMs.map(String.init) ?? "NULL"
            sql += "INSERT INTO poll_attempts(device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms) "
            sql +=
                "VALUES ('\(poll.device)', '\(poll.code)', \(poll.plannedEpochMs), \(poll.sentEpochMs), \(status), \(poll.latencyMs), '\(poll.outcome)', \(next));\n"
        }
        for event in Fixture.events {
            let code = event.code.map { "\"code\":\"\($0)\"," } ?? ""
            let message = event.message.map { ",\"message\":\"\($0)\"" } ?? ""
            let args = "{\"statusDictionary\":{\(code)\"errorId\":\"\(event.errorId)\",\"level\":\"\(event.level ?? "error")\"\(message)}}"
            sql += "INSERT INTO events(device, time, name, args) VALUES ('\(event.device)', \(event.timeMs), 'status', '\(args)');\n"
        }
        for request in Fixture.requests {
            let status = request.httpStatus.map(String.init) ?? "NULL"
            let error = request.errorCode.map { "'\($0)'" } ?? "NULL"
            let retry = request.retryDelayMs.map(String.init) ?? "NULL"
            sql += "INSERT INTO request_attempts(device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms) "
            sql +=
                "VALUES ('\(request.device)', '\(request.stage)', '\(request.endpoint)', \(request.sentEpochMs), \(status), \(request.latencyMs), '\(request.outcome)', \(error), \(retry));\n"
        }
        for (index, device) in Fixture.devices.enumerated() {
            sql += "INSERT INTO devices(name, device_id, device_info, profile, requestor, scenario, settings, seed, state, created_at, updated_at) "
            sql +=
                "VALUES ('\(device.device)', 'id-\(index)', '{}', 'v2', 'REF30', 'login', '{}', 0, '\(device.state ?? "new")', \(index), \(index));\n"
        }
        // A callback that is not a status must not be counted.
        sql +=
            "INSERT INTO events(device, time, name, args) VALUES ('stb-1', 17200, 'setAuthenticationStatus', '{\"errorCode\":\"\",\"status\":1}');\n"
        let script = directory.appendingPathComponent("fill.sql")
        try Data(sql.utf8).write(to: script)
        let path = directory.appendingPathComponent("x.db").path
        try SQLiteShell.run(path, input: script)
        return (directory, path)
    }

    static func report(_ arguments: [String]) throws -> CommandResult {
        try Command.run(BuiltProducts.url("regcodectl"), ["report"] + arguments)
    }

    @Test func theReportOpensTheDatabaseReadOnlyAndLeavesItByteForByteUntouched() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        let before = try Data(contentsOf: URL(fileURLWithPath: database.path))
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: database.directory.path).sorted()
        let run = try Self.report(["--database", database.path, "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database.path)) == before)
        // No write-ahead log or shared-memory file was made: the database was never switched to WAL.
        #expect(try FileManager.default.contentsOfDirectory(atPath: database.directory.path).sorted() == filesBefore)
    }

    @Test func jsonReportOfTheWholeLog() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        let run = try Self.report(["--database", database.path, "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(fleet["polls"] as? Int == 13)
        #expect(fleet["backoffs"] as? Int == 2)
        #expect(fleet["throttled_429"] as? Int == 1)
        #expect((fleet["lateness_ms"] as? [String: Any])?["p50"] as? Int == 3)
        #expect((fleet["achieved_interval_ms"] as? [String: Any])?["p50"] as? Int == 5019)
        #expect((fleet["time_to_authenticate_ms"] as? [String: Any])?["max"] as? Int == 16090)
        let expiries = try #require(fleet["expiries"] as? [String: Any])
        #expect(expiries["reg410_events"] as? Int == 2)
        #expect(expiries["reg500_events"] as? Int == 2)
        #expect(expiries["expired_codes"] as? Int == 2)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["device"] as? String } == ["stb-1", "stb-2", "stb-3"])
    }

    @Test func requestsByStageAndFailedOnboardingsFromTheDatabase() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        let run = try Self.report(["--database", database.path, "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let fleet = try #require(json["fleet"] as? [String: Any])
        let requests = try #require(fleet["requests"] as? [String: Any])
        #expect(requests["total"] as? Int == 28)
        #expect(requests["retried"] as? Int == 7)
        let stages = try #require(requests["by_stage"] as? [String: Any])
        #expect((stages["session"] as? [String: Any])?["server_5xx"] as? Int == 4)
        #expect((stages["configuration"] as? [String: Any])?["throttled_429"] as? Int == 1)
        let onboarding = try #require(fleet["onboarding"] as? [String: Any])
        #expect(onboarding["re_registrations"] as? Int == 1)
        #expect(onboarding["new_codes"] as? Int == 3)
        #expect(onboarding["failed_onboardings"] as? Int == 1)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["state"] as? String } == ["ready", "polling", "ready"])
        let failed = try #require(json["failed_onboardings"] as? [[String: Any]])
        #expect(failed.map { $0["device"] as? String } == ["stb-3"])
        #expect((failed.first?["last_failure"] as? [String: Any])?["error_id"] as? String == "REG500")
        #expect((failed.first?["last_failed_request"] as? [String: Any])?["error_code"] as? String == "internal_error")

        let text = try Self.report(["--database", database.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("FAILED ONBOARDINGS (1 device without a code)"))
        #expect(text.stdout.contains("REQUESTS BY STAGE (28 requests other than polls, 7 retried)"))

        // A stored device without any logged activity is still reported, as a failed onboarding.
        try SQLiteShell.run(
            database.path,
            "INSERT INTO devices(name, device_id, device_info, profile, requestor, scenario, settings, seed, state, created_at, updated_at) VALUES ('stb-10', 'id-10', '{}', 'v2', 'REF30', 'login', '{}', 0, 'new', 9, 9)"
        )
        let csv = try Self.report(["--database", database.path, "--format", "csv"])
        let rows = CSVRenderingTests.records(csv.stdout)
        #expect(rows.map { $0[1] } == ["device", "", "stb-1", "stb-2", "stb-3", "stb-10"])
        let failedColumn = try #require(rows[0].firstIndex(of: "failed_onboardings"))
        #expect(rows[1][failedColumn] == "2")
    }

    /// A database written by another version may hold outcomes and stages this one does not know: the report
    /// reads them as they were stored and lists them after the known ones.
    @Test func outcomesAndStagesOfAnotherVersionAreReportedAsStored() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        try SQLiteShell.run(
            database.path,
            """
            INSERT INTO poll_attempts(device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms)
            VALUES ('stb-2', 'DDD', 65000, 65030, 425, 4, 'too-early', 5000);
            INSERT INTO request_attempts(device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms)
            VALUES ('stb-1', 'teleport', 'beam', 65100, 418, 2, 'teapot', NULL, NULL);
            """
        )
        let run = try Self.report(["--database", database.path, "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(fleet["polls"] as? Int == 14)
        let outcomes = try #require(fleet["outcomes"] as? [String: Int])
        #expect(outcomes["too-early"] == 1)
        #expect(outcomes["pending"] == 8)
        let stages = try #require((fleet["requests"] as? [String: Any])?["by_stage"] as? [String: Any])
        let teleport = try #require(stages["teleport"] as? [String: Any])
        #expect(teleport["requests"] as? Int == 1)
        #expect(teleport["other"] as? Int == 1)
        #expect((teleport["outcomes"] as? [String: Int])?["teapot"] == 1)

        let text = try Self.report(["--database", database.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("code-invalid 1, too-early 1"))
    }

    @Test func deviceAndSinceFilters() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        let csv = try Self.report(["--database", database.path, "--format", "csv", "--device", "stb-2"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let rows = CSVRenderingTests.records(csv.stdout)
        #expect(rows.map { $0[1] } == ["device", "", "stb-2"])
        let polls = try #require(rows[0].firstIndex(of: "polls"))
        #expect(rows[1][polls] == "7")

        // Sent at or after 40000: #6 (40025), #13 (40003), #10–#12 (50001…60029).
        let since = try Self.report(["--database", database.path, "--format", "json", "--since", "40000"])
        #expect(since.status == 0, "\(since.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(since.stdout.utf8)) as? [String: Any])
        #expect((json["fleet"] as? [String: Any])?["polls"] as? Int == 5)
        #expect(json["since_ms"] as? Int == 40000)
        // The expiries and failures before 40000 fall outside the window; stb-1's at 45000 is in.
        #expect(((json["fleet"] as? [String: Any])?["expiries"] as? [String: Any])?["reg410_events"] as? Int == 1)
    }

    @Test func textOnStdoutAndAnHTMLFile() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        let page = database.directory.appendingPathComponent("soak.html")
        let run = try Self.report(["--database", database.path, "--html", page.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("FLEET (3 devices)"))
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
    }

    @Test func aMissingDatabaseIsAnErrorAndIsNotCreated() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("soak-\(UUID().uuidString.prefix(8))")
        let path = directory.appendingPathComponent("absent.sqlite").path
        let run = try Self.report(["--database", path])
        #expect(run.status != 0)
        #expect(run.stderr.contains("no state database at \(path)"))
        #expect(run.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aBadSinceIsRefused() throws {
        let database = try Self.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        let run = try Self.report(["--database", database.path, "--since", "last tuesday"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("cannot read 'last tuesday' as a start time"))
    }
}
