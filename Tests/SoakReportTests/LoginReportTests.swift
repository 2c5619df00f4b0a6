import Foundation
import RegcodeTestSupport
import SoakReport
import Testing

/// Logins counted by kind (regular, TempPass, degraded, single sign-on) in every rendering.
@Suite struct LoginReportTests {
    static let logins = [
        LoginRecord(device: "stb-1", timeMs: 1_000, mvpd: "Cablevision", kind: "regular"),
        LoginRecord(device: "stb-2", timeMs: 2_000, mvpd: "TempPass_TEST40", kind: "temppass"),
        LoginRecord(device: "stb-2", timeMs: 3_000, mvpd: "Cablevision", kind: "regular"),
        LoginRecord(device: "stb-3", timeMs: 4_000, mvpd: "Cablevision", kind: "sso"),
        LoginRecord(device: "stb-3", timeMs: 5_000, mvpd: "Cablevision", kind: "degraded"),
    ]

    static func report(logins: [LoginRecord]?) -> SoakReport {
        SoakReport(polls: Fixture.polls, statusEvents: Fixture.events, logins: logins, generatedAtMs: 100_000, sinceMs: 0)
    }

    @Test func loginsAreCountedByKindWithEveryKindListed() {
        let figures = LoginFigures(Self.logins + [LoginRecord(device: "stb-4", timeMs: 6_000, mvpd: "X", kind: "future")])
        #expect(figures.total == 6)
        #expect(figures.devices == 4)
        #expect(figures.byKind.map(\.kind) == ["regular", "temppass", "degraded", "sso", "future"])
        #expect(figures.byKind.map(\.count) == [2, 1, 1, 1, 1])
        let none = LoginFigures([])
        #expect(none.byKind.map(\.count) == [0, 0, 0, 0])
        #expect(none.summary == "0 logins (regular 0, temppass 0, degraded 0, sso 0) on 0 devices")
    }

    @Test func textJSONAndHTMLShowTheLogins() throws {
        let report = Self.report(logins: Self.logins)
        #expect(report.text().contains("  logins: 5 logins (regular 2, temppass 1, degraded 1, sso 1) on 3 devices\n"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let fleet = try #require(json["fleet"] as? [String: Any])
        let logins = try #require(fleet["logins"] as? [String: Any])
        #expect(logins["total"] as? Int == 5)
        #expect(logins["devices"] as? Int == 3)
        #expect(logins["by_kind"] as? [String: Int] == ["regular": 2, "temppass": 1, "degraded": 1, "sso": 1])
        let html = report.html()
        #expect(html.contains("Logins"))
        #expect(html.contains("regular 2 · temppass 1 · degraded 1 · sso 1"))
    }

    @Test func aReportWithoutTheLoginLogLeavesLoginsOut() throws {
        let report = Self.report(logins: nil)
        #expect(!report.text().contains("logins:"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(fleet["logins"] is NSNull)
        #expect(!report.html().contains(">Logins<"))
    }

    @Test func degradedSuccessesAreNoFailures() {
        let warning = { (id: String) in StatusEventRecord(device: "stb-1", timeMs: 0, errorId: id, code: nil, level: "warning") }
        #expect(!warning("N010").isFailure)
        #expect(!warning("Z010").isFailure)
        #expect(warning("N111").isFailure)
    }

    @Test(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
    func regcodectlReportReadsTheLoginLog() throws {
        let database = try ReportCommandTests.makeDatabase()
        defer { try? FileManager.default.removeItem(at: database.directory) }
        var sql = ""
        for login in Self.logins {
            sql += "INSERT INTO logins(device, time, mvpd, kind) VALUES ('\(login.device)', \(login.timeMs), '\(login.mvpd)', '\(login.kind)');\n"
        }
        let script = database.directory.appendingPathComponent("logins.sql")
        try Data(sql.utf8).write(to: script)
        try SQLiteShell.run(database.path, input: script)

        let run = try ReportCommandTests.report(["--database", database.path, "--format", "json", "--since", "3000"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let logins = try #require((json["fleet"] as? [String: Any])?["logins"] as? [String: Any])
        // --since keeps the logins of the window only.
        #expect(logins["by_kind"] as? [String: Int] == ["regular": 1, "temppass": 0, "degraded": 1, "sso": 1])
        let text = try ReportCommandTests.report(["--database", database.path, "--device", "stb-2"])
        #expect(text.stdout.contains("logins: 2 logins (regular 1, temppass 1, degraded 0, sso 0) on 1 device\n"))
    }
}
