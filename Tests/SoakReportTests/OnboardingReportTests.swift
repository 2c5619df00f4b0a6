import Foundation
import RegcodeRecords
import SoakReport
import Testing

/// The request log's figures of `Fixture.fullReport()`, worked out by hand from `Fixture.requests`
/// (nearest rank: value at rank ⌈p·n/100⌉).
@Suite struct RequestFigureTests {
    let report = Fixture.fullReport()

    private func stage(_ name: String, of figures: RequestFigures? = nil) throws -> StageFigures {
        try #require((figures ?? report.requests).stage(RequestStage(rawValue: name)))
    }

    @Test func everyStageIsListedInOrder() {
        #expect(report.requestsLoaded)
        #expect(report.requests.stages.map(\.stage) == SoakReport.stageKinds)
        #expect(report.requests.requests == 28)
        // configuration 160, session 29100 / 49000 / 17000 / 18010, registration 150, metadata 45000.
        #expect(report.requests.retried == 7)
    }

    @Test func registration() throws {
        let s = try stage("registration")
        // stb-1 100, 29000; stb-2 50; stb-3 150 (400, retried), 200.
        #expect(s.requests == 5)
        #expect(s.ok == 4)
        #expect(s.clientErrors == 1)
        #expect(s.throttled == 0 && s.serverErrors == 0 && s.transportErrors == 0 && s.other == 0)
        #expect(s.retried == 1)
        #expect(s.outcomes[.clientError] == 1)
        #expect(s.outcomes[.abandoned] == 0)
        #expect(s.outcomes.count == SoakReport.requestOutcomeKinds.count)
        // Latency [7, 21, 22, 25, 30]: p50 rank ⌈2.5⌉ = 3 → 22, p99 rank 5 → 30.
        #expect(s.latency.p50 == 22)
        #expect(s.latency.p99 == 30)
        #expect(s.latency.min == 7)
    }

    @Test func configurationAndSession() throws {
        let configuration = try stage("configuration")
        // stb-1 160 (429, retried), 470; stb-2 100; stb-3 260. Latency [5, 6, 7, 8]: p50 rank 2 → 6.
        #expect(configuration.requests == 4)
        #expect(configuration.ok == 3)
        #expect(configuration.throttled == 1)
        #expect(configuration.retried == 1)
        #expect(configuration.latency.p50 == 6)

        let session = try stage("session")
        // stb-1 500, 29100 (503, retried), 29620; stb-2 1900, 39900, 49000 (transport, retried), 49900;
        // stb-3 17000, 18010 (500, retried), 19020 (500).
        #expect(session.requests == 10)
        #expect(session.ok == 5)
        #expect(session.serverErrors == 4)
        #expect(session.transportErrors == 1)
        #expect(session.retried == 4)
        // Latency [3, 13, 14, 15, 16, 18, 20, 30, 35, 40]: p50 rank 5 → 16, p99 rank 10 → 40.
        #expect(session.latency.p50 == 16)
        #expect(session.latency.p99 == 40)
    }

    @Test func otherStages() throws {
        #expect(try stage("token").requests == 5)
        #expect(try stage("token").ok == 5)
        #expect(try stage("profile").ok == 1)
        // The 401 is a client error (and retried after a token refresh); the malformed answer is "other".
        let metadata = try stage("metadata")
        #expect(metadata.requests == 2 && metadata.ok == 1 && metadata.clientErrors == 1 && metadata.retried == 1)
        let decision = try stage("decision")
        #expect(decision.requests == 1 && decision.ok == 0 && decision.other == 1)
        let logout = try stage("logout")
        #expect(logout.requests == 0)
        #expect(logout.latency == .empty)
    }

    @Test func perDevice() throws {
        let devices = Dictionary(uniqueKeysWithValues: report.devices.map { ($0.device, $0) })
        let stb1 = try #require(devices["stb-1"])
        #expect(stb1.requests.requests == 10)
        #expect(stb1.requests.retried == 2)
        #expect(try stage("configuration", of: stb1.requests).throttled == 1)
        #expect(try stage("session", of: stb1.requests).serverErrors == 1)
        let stb2 = try #require(devices["stb-2"])
        #expect(stb2.requests.requests == 11)
        #expect(stb2.requests.retried == 2)
        let stb3 = try #require(devices["stb-3"])
        #expect(stb3.requests.requests == 7)
        #expect(stb3.requests.retried == 3)
        #expect(try stage("session", of: stb3.requests).serverErrors == 3)
        #expect(stb3.state == "ready")
    }

    @Test func unknownStagesAndOutcomesAreCountedNotDropped() throws {
        let report = SoakReport(
            polls: [],
            statusEvents: nil,
            requests: [Fixture.request("d", "teleport", 0, 200, "something-new", latency: 1)],
            generatedAtMs: 0
        )
        #expect(report.requests.stages.map(\.stage) == SoakReport.stageKinds + [RequestStage(rawValue: "teleport")])
        let teleport = try stage("teleport", of: report.requests)
        #expect(teleport.requests == 1 && teleport.other == 1)
        #expect(teleport.outcomes[RequestOutcome(rawValue: "something-new")] == 1)
    }
}

@Suite struct OnboardingFigureTests {
    let report = Fixture.fullReport()

    @Test func fleet() {
        let o = report.onboarding
        #expect(o.devicesWithCode == 2)
        #expect(o.failedOnboardings == 1)
        // ok registrations: stb-1 100 and 29000, stb-2 50, stb-3 200; stb-1's second is a re-registration.
        #expect(o.registrations == 4)
        #expect(o.reRegistrations == 1)
        // REGCODE: stb-1 AAA, BBB (1 new); stb-2 CCC, XXX, DDD (2 new).
        #expect(o.codesIssued == 5)
        #expect(o.newCodes == 3)
    }

    @Test func perDevice() {
        let figures = report.devices.map {
            "\($0.device) \($0.onboarding.registrations) \($0.onboarding.reRegistrations) \($0.onboarding.codesIssued ?? -1) \($0.onboarding.newCodes ?? -1)"
        }
        #expect(figures == ["stb-1 2 1 2 1", "stb-2 1 0 3 2", "stb-3 1 0 0 0"])
        #expect(report.devices.map(\.onboarding.devicesWithCode) == [1, 1, 0])
        #expect(report.devices.map { $0.failedOnboarding != nil } == [false, false, true])
    }

    @Test func theDeviceThatNeverGotACodeIsAFailedOnboarding() throws {
        #expect(report.failedOnboardings.map(\.device) == ["stb-3"])
        let failed = try #require(report.failedOnboardings.first)
        #expect(failed.state == "ready")
        #expect(failed.requests == 7)
        #expect(failed.failureEvents == 1)
        #expect(failed.lastFailure?.errorId == "REG500")
        #expect(failed.lastFailure?.timeMs == 20000)
        #expect(failed.lastFailedRequest == Fixture.request("stb-3", "session", 19020, 500, "server-error", error: "internal_error", latency: 30))
    }

    @Test func withoutEventsCodesComeFromPollsSessionsAndTheStore() {
        let report = Fixture.fullReport(events: nil)
        #expect(report.onboarding.codesIssued == nil)
        #expect(report.onboarding.newCodes == nil)
        #expect(report.failedOnboardings.map(\.device) == ["stb-3"])
        #expect(report.failedOnboardings.first?.lastFailure == nil)
        #expect(report.onboarding.reRegistrations == 1)
    }

    /// Devices that got no code: one that died at registration (known only from the request log and
    /// its events), one that is only stored, and one whose code predates the window.
    @Test func everyDeviceIsReportedWithOrWithoutACode() throws {
        let events = [
            StatusEventRecord(
                device: "stb-4",
                timeMs: 300,
                errorId: "R400",
                code: nil,
                message: "registration refused: 400 invalid_request",
                level: "error"
            ),
            StatusEventRecord(
                device: "stb-4",
                timeMs: 300,
                errorId: "REG500",
                code: nil,
                message: "error fetching registration code: registration refused: 400 invalid_request",
                level: "error"
            ),
            StatusEventRecord(device: "stb-5", timeMs: 200, errorId: "CFG429", code: nil, message: "configuration throttled", level: "error"),
            // A warning-free informational status is not a failure.
            StatusEventRecord(device: "stb-5", timeMs: 250, errorId: "N130", code: nil, message: "note", level: "info"),
        ]
        let requests = [
            Fixture.request("stb-4", "registration", 100, 400, "client-error", error: "invalid_request", retry: 100, latency: 5),
            Fixture.request("stb-4", "registration", 205, 400, "client-error", error: "invalid_request", latency: 5),
            Fixture.request("stb-5", "registration", 100, 201, "ok", latency: 5),
            Fixture.request("stb-5", "configuration", 150, 429, "throttled", latency: 5),
        ]
        let devices = [
            DeviceRecord(device: "stb-10", state: "new", codesIssued: 0),
            DeviceRecord(device: "stb-5", state: "failed", codesIssued: 0),
            DeviceRecord(device: "stb-6", state: "authenticated", codesIssued: 4),
        ]
        let report = SoakReport(polls: [], statusEvents: events, requests: requests, devices: devices, generatedAtMs: 0)
        #expect(report.devices.map(\.device) == ["stb-4", "stb-5", "stb-6", "stb-10"])
        #expect(report.failedOnboardings.map(\.device) == ["stb-4", "stb-5", "stb-10"])
        #expect(report.onboarding.devicesWithCode == 1)
        #expect(report.onboarding.failedOnboardings == 3)

        let stb4 = try #require(report.failedOnboardings.first)
        #expect(stb4.state == nil)
        #expect(stb4.requests == 2)
        #expect(stb4.failureEvents == 2)
        // The later of two events at the same time is the one given later.
        #expect(stb4.lastFailure?.errorId == "REG500")
        #expect(stb4.lastFailure?.message == "error fetching registration code: registration refused: 400 invalid_request")
        #expect(stb4.lastFailedRequest?.sentEpochMs == 205)

        let stb5 = report.failedOnboardings[1]
        #expect(stb5.state == "failed")
        #expect(stb5.lastFailure?.errorId == "CFG429")
        #expect(stb5.lastFailure?.message == "configuration throttled")
        #expect(stb5.lastFailedRequest?.stage == .configuration)

        let stb10 = report.failedOnboardings[2]
        #expect(stb10.state == "new")
        #expect(stb10.requests == 0)
        #expect(stb10.lastFailure == nil)
        #expect(stb10.lastFailedRequest == nil)
    }

    @Test func failureStatuses() {
        func status(_ id: String, _ level: String?) -> StatusEventRecord {
            StatusEventRecord(device: "d", timeMs: 0, errorId: id, code: nil, level: level)
        }
        #expect(status("R400", "error").isFailure)
        #expect(status("CFG429", "warning").isFailure)
        #expect(!status("REGCODE", "success").isFailure)
        #expect(!status("X", "info").isFailure)
        #expect(status("REG500", nil).isFailure)
        #expect(!status("REGCODE", nil).isFailure)
    }
}

@Suite struct OnboardingRenderingTests {
    let report = Fixture.fullReport()

    private func parse(_ report: SoakReport) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
    }

    @Test func jsonCarriesOnboardingRequestsAndFailedOnboardings() throws {
        let json = try parse(report)
        #expect(Set(json.keys) == JSONRenderingTests.topLevelKeys.union(["failed_onboardings"]))
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(Set(fleet.keys) == JSONRenderingTests.figureKeys.union(["devices", "logins", "onboarding", "requests"]))
        let onboarding = try #require(fleet["onboarding"] as? [String: Any])
        #expect(onboarding["devices_with_code"] as? Int == 2)
        #expect(onboarding["failed_onboardings"] as? Int == 1)
        #expect(onboarding["registrations_ok"] as? Int == 4)
        #expect(onboarding["re_registrations"] as? Int == 1)
        #expect(onboarding["codes_issued"] as? Int == 5)
        #expect(onboarding["new_codes"] as? Int == 3)
        let requests = try #require(fleet["requests"] as? [String: Any])
        #expect(requests["total"] as? Int == 28)
        #expect(requests["retried"] as? Int == 7)
        let stages = try #require(requests["by_stage"] as? [String: Any])
        #expect(Set(stages.keys) == Set(SoakReport.stageKinds.map(\.rawValue)))
        let session = try #require(stages["session"] as? [String: Any])
        #expect(
            Set(session.keys) == [
                "requests", "ok", "throttled_429", "server_5xx", "transport_errors", "client_errors", "other", "retried", "outcomes", "latency_ms",
            ]
        )
        #expect(session["requests"] as? Int == 10)
        #expect(session["server_5xx"] as? Int == 4)
        #expect(session["transport_errors"] as? Int == 1)
        #expect(session["retried"] as? Int == 4)
        #expect((session["latency_ms"] as? [String: Any])?["p50"] as? Int == 16)
        #expect((session["outcomes"] as? [String: Int])?["server-error"] == 4)
        #expect((stages["configuration"] as? [String: Any])?["throttled_429"] as? Int == 1)

        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["state"] as? String } == ["ready", "polling", "ready"])
        #expect(devices.map { ($0["onboarding"] as? [String: Any])?["got_code"] as? Bool } == [true, true, false])
        #expect(devices.map { ($0["onboarding"] as? [String: Any])?["re_registrations"] as? Int } == [1, 0, 0])
        #expect(devices.map { ($0["onboarding"] as? [String: Any])?["new_codes"] as? Int } == [1, 2, 0])
        #expect(devices.map { ($0["requests"] as? [String: Any])?["total"] as? Int } == [10, 11, 7])

        let failed = try #require(json["failed_onboardings"] as? [[String: Any]])
        #expect(failed.count == 1)
        #expect(failed[0]["device"] as? String == "stb-3")
        #expect(failed[0]["state"] as? String == "ready")
        #expect(failed[0]["requests"] as? Int == 7)
        #expect(failed[0]["failure_events"] as? Int == 1)
        let last = try #require(failed[0]["last_failure"] as? [String: Any])
        #expect(last["error_id"] as? String == "REG500")
        #expect(last["message"] is NSNull)
        #expect(last["time_ms"] as? Int == 20000)
        let request = try #require(failed[0]["last_failed_request"] as? [String: Any])
        #expect(request["stage"] as? String == "session")
        #expect(request["http_status"] as? Int == 500)
        #expect(request["outcome"] as? String == "server-error")
        #expect(request["error_code"] as? String == "internal_error")
        #expect(request["sent_ms"] as? Int == 19020)
    }

    @Test func withoutTheRequestLogTheJSONIsAsBefore() throws {
        let report = SoakReport(polls: Fixture.polls, statusEvents: Fixture.events, devices: Fixture.devices, generatedAtMs: 0)
        #expect(!report.requestsLoaded)
        let json = try parse(report)
        #expect(Set(json.keys) == JSONRenderingTests.topLevelKeys)
        let fleet = try #require(json["fleet"] as? [String: Any])
        #expect(Set(fleet.keys) == JSONRenderingTests.figureKeys.union(["devices", "logins"]))
        #expect(!report.text().contains("FAILED ONBOARDINGS"))
        #expect(!report.html().contains("Failed onboardings"))
    }

    @Test func csvHasOnboardingAndStageColumns() throws {
        let rows = CSVRenderingTests.records(report.csv())
        let header = try #require(rows.first)
        #expect(Set(header).count == header.count, "column names are unique")
        #expect(rows.count == 1 + 1 + 3)
        #expect(rows.allSatisfy { $0.count == header.count })
        func value(_ row: Int, _ name: String) -> String? { header.firstIndex(of: name).map { rows[row][$0] } }
        #expect(value(1, "polls") == "13")
        #expect(value(1, "devices_with_code") == "2")
        #expect(value(1, "failed_onboardings") == "1")
        #expect(value(1, "re_registrations") == "1")
        #expect(value(1, "new_codes") == "3")
        #expect(value(1, "requests") == "28")
        #expect(value(1, "requests_retried") == "7")
        #expect(value(1, "session_5xx") == "4")
        #expect(value(1, "configuration_429") == "1")
        #expect(value(1, "metadata_client_errors") == "1")
        #expect(value(1, "decision_other") == "1")
        #expect(value(1, "logout_requests") == "0")
        #expect(value(1, "state") == "")
        #expect(value(2, "state") == "ready")
        #expect(value(2, "re_registrations") == "1")
        #expect(value(3, "transport_errors") == nil)
        #expect(value(3, "session_transport_errors") == "1")
        #expect(value(4, "failed_onboardings") == "1")
        #expect(value(4, "last_failure_id") == "REG500")
        #expect(value(4, "session_retried") == "2")
        #expect(value(2, "last_failure_id") == "")
    }

    @Test func textHasOnboardingStageAndFailureSectionsBeforeTheDevices() throws {
        let text = report.text()
        #expect(text.contains("ONBOARDING\n"))
        #expect(text.contains("devices with a code  2 of 3"))
        #expect(text.contains("registrations        4 ok, 1 re-registration"))
        #expect(text.contains("5 REGCODE events, 3 new codes after each device's first"))
        #expect(text.contains("REQUESTS BY STAGE (28 requests other than polls, 7 retried)"))
        let stages = text.components(separatedBy: "REQUESTS BY STAGE")[1].components(separatedBy: "\n\n")[0].split(separator: "\n")
        // Header, then the stages that saw requests: registration, token, configuration, session,
        // profile, decision, metadata (no logout).
        #expect(stages.count == 1 + 1 + 7)
        #expect(stages[1].hasPrefix("STAGE"))
        #expect(stages.contains { $0.hasPrefix("session ") && $0.contains(" 10 ") })
        #expect(!stages.contains { $0.hasPrefix("logout") })
        #expect(text.contains("FAILED ONBOARDINGS (1 device without a code)"))
        #expect(text.contains("session 500 server-error (internal_error)"))
        let failures = text.components(separatedBy: "FAILED ONBOARDINGS")[1].components(separatedBy: "\n\n")[0].split(separator: "\n")
        #expect(failures.count == 3)
        #expect(failures[2].hasPrefix("stb-3 "))
        #expect(failures[2].contains("REG500"))
        // The device table is still last, one row per device, with the new columns at the end.
        let table = text.components(separatedBy: "DEVICES\n")[1].split(separator: "\n")
        #expect(table.count == 4)
        #expect(table[0].contains("  STATE  "))
        #expect(table[0].hasSuffix("RE-REG  NEW CODES"))
        #expect(table[3].hasPrefix("stb-3 "))
    }

    @Test func htmlHasCardsAndTables() {
        let html = report.html()
        #expect(html.contains("<h2>Requests by stage</h2>"))
        #expect(html.contains("<h2>Failed onboardings</h2>"))
        #expect(html.contains(">Failed onboardings</div><div class=\"value\">1</div><div class=\"sub\">2 of 3 devices got a code</div>"))
        #expect(html.contains(">Re-registrations</div><div class=\"value\">1</div>"))
        #expect(html.components(separatedBy: "<tr class=\"stage\">").count - 1 == 7)
        #expect(
            html.contains(
                "<tr class=\"failed\"><td>stb-3</td><td>ready</td><td>7</td><td>session 500 server-error (internal_error)</td><td>REG500</td><td>-</td></tr>"
            )
        )
        // The device table still has one row per device.
        #expect(html.components(separatedBy: "<tr><td>").count - 1 == 3)
        for forbidden in ["<script src", "http://", "https://"] {
            #expect(!html.contains(forbidden))
        }
    }

    @Test func failureMessagesAreEscapedInHTML() {
        let report = SoakReport(
            polls: [],
            statusEvents: [StatusEventRecord(device: "<b>", timeMs: 0, errorId: "R400", code: nil, message: "<script>x</script>", level: "error")],
            requests: [],
            generatedAtMs: 0
        )
        let html = report.html()
        #expect(html.contains("&lt;script&gt;x&lt;/script&gt;"))
        #expect(!html.contains("<script>x"))
        #expect(html.components(separatedBy: "<script").count - 1 == 1)
        #expect(html.contains("Every device got a code.") == false)
        #expect(html.contains("No requests other than polls in this window."))
    }
}
