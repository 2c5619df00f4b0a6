import Foundation
import RegcodeRecords
import SoakReport
import Testing

/// The OAuth device grant's figures (RFC 8628), worked out by hand from a small poll log.
///
/// `planned` is the earliest moment the protocol allows the poll; a poll sent before it is early.
///
/// tv-1 (fleet `oauth`), code OK1 (slowed down once, then authenticated; never early):
///   #1 planned  5000 sent  5000 400 pending        next  5000
///   #2 planned 10010 sent 10010 400 slow-down      next 10000
///   #3 planned 20020 sent 20020 400 pending        next 10000
///   #4 planned 30030 sent 30030 200 authenticated  next nil
/// tv-2 (fleet `oauth`), code FAST (polls too fast, ignores the slow-down, then the user refuses):
///   #1 planned  5000 sent  3000 400 pending        next  5000   early
///   #2 planned  8000 sent  6000 400 slow-down      next 10000   early (no slow-down before it)
///   #3 planned 16000 sent  7000 400 pending        next 10000   early after a slow-down
///   #4 planned 17000 sent  8000 400 denied         next nil     early after a slow-down
///   #5 planned 18000 sent 18000 200 abandoned      next nil     (an answer after the loop stopped)
/// tv-3 (fleet `mixed`), code EXP (expired_token, then an abandoned answer), then code OK2:
///   #1 planned  5000 sent  5000 400 pending        next  5000
///   #2 planned 10000 sent 10000 400 expired        next nil
///   #3 planned 10000 sent 10500 200 abandoned      next nil
///   #4 planned 60000 sent 60001 400 pending        next  5000   (OK2)
///   #5 planned 65001 sent 65001 200 authenticated  next nil     (OK2)
enum DeviceFlowFixture {
    static let polls: [PollRecord] = [
        Fixture.poll("tv-1", "OK1", 5000, 5000, 400, "pending", 5000, latency: 10),
        Fixture.poll("tv-1", "OK1", 10010, 10010, 400, "slow-down", 10000, latency: 10),
        Fixture.poll("tv-1", "OK1", 20020, 20020, 400, "pending", 10000, latency: 10),
        Fixture.poll("tv-1", "OK1", 30030, 30030, 200, "authenticated", nil, latency: 20),
        Fixture.poll("tv-2", "FAST", 5000, 3000, 400, "pending", 5000, latency: 10),
        Fixture.poll("tv-2", "FAST", 8000, 6000, 400, "slow-down", 10000, latency: 10),
        Fixture.poll("tv-2", "FAST", 16000, 7000, 400, "pending", 10000, latency: 10),
        Fixture.poll("tv-2", "FAST", 17000, 8000, 400, "denied", nil, latency: 10),
        Fixture.poll("tv-2", "FAST", 18000, 18000, 200, "abandoned", nil, latency: 10),
        Fixture.poll("tv-3", "EXP", 5000, 5000, 400, "pending", 5000, latency: 10),
        Fixture.poll("tv-3", "EXP", 10000, 10000, 400, "expired", nil, latency: 10),
        Fixture.poll("tv-3", "EXP", 10000, 10500, 200, "abandoned", nil, latency: 10),
        Fixture.poll("tv-3", "OK2", 60000, 60001, 400, "pending", 5000, latency: 10),
        Fixture.poll("tv-3", "OK2", 65001, 65001, 200, "authenticated", nil, latency: 10),
    ]

    static let devices = [
        DeviceRecord(device: "tv-1", state: "authenticated", codesIssued: 1, fleet: "oauth"),
        DeviceRecord(device: "tv-2", state: "failed", codesIssued: 1, fleet: "oauth"),
        DeviceRecord(device: "tv-3", state: "authenticated", codesIssued: 2, fleet: "mixed"),
    ]

    /// Fed in reverse: the figures follow send order, not log order.
    static func report() -> SoakReport {
        SoakReport(polls: polls.reversed(), statusEvents: nil, devices: devices, generatedAtMs: 100_000, sinceMs: 0)
    }
}

@Suite struct DeviceFlowFigureTests {
    let report = DeviceFlowFixture.report()

    private func device(_ name: String) throws -> PollFigures {
        try #require(report.devices.first { $0.device == name }).figures
    }

    private func fleet(_ name: String) throws -> PollFigures {
        try #require(report.fleets.first { $0.fleet == name }).figures
    }

    @Test func slowDownAnswersAndEarlyPolls() throws {
        let f = report.fleet
        #expect(f.polls == 14)
        #expect(f.slowDownAnswers == 2)
        // FAST #1–#4 went out before their planned time; nothing else did.
        #expect(f.earlyPolls == 4)
        // Only FAST #3 and #4 follow the code's slow-down answer (#2 is early but is the slow-down poll itself).
        #expect(f.earlyPollsAfterSlowDown == 2)
        #expect(f.hasDeviceFlowFigures)
        #expect(try device("tv-1").slowDownAnswers == 1)
        #expect(try device("tv-1").earlyPolls == 0)
        #expect(try device("tv-2").earlyPolls == 4)
        #expect(try device("tv-2").earlyPollsAfterSlowDown == 2)
        #expect(try device("tv-3").earlyPolls == 0)
        #expect(try device("tv-3").hasDeviceFlowFigures, "an expired answer is a device flow figure")
    }

    @Test func earlyPollsAfterSlowDownFollowSendOrderNotLogOrder() {
        // The slow-down answer is logged last but sent first: the two early polls sent after it count.
        let polls = [
            Fixture.poll("tv", "C", 9000, 7000, 400, "pending", 10000, latency: 1),
            Fixture.poll("tv", "C", 12000, 8000, 400, "pending", 10000, latency: 1),
            Fixture.poll("tv", "C", 5000, 5000, 400, "slow-down", 10000, latency: 1),
        ]
        let report = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0)
        #expect(report.fleet.earlyPolls == 2)
        #expect(report.fleet.earlyPollsAfterSlowDown == 2)
        // An early poll before any slow-down answer is early, not early after a slow-down.
        let before = SoakReport(
            polls: [
                Fixture.poll("tv", "C", 5000, 4000, 400, "pending", 5000, latency: 1),
                Fixture.poll("tv", "C", 9000, 9000, 400, "slow-down", 10000, latency: 1),
            ],
            statusEvents: nil,
            generatedAtMs: 0
        )
        #expect(before.fleet.earlyPolls == 1 && before.fleet.earlyPollsAfterSlowDown == 0)
    }

    @Test func deniedAndExpiredAnswersDecideTheFate() throws {
        #expect(
            report.codes.map { "\($0.device)/\($0.code)/\($0.fate.rawValue)/\($0.polls)" } == [
                "tv-1/OK1/authenticated/4", "tv-2/FAST/denied/5", "tv-3/EXP/expired/3", "tv-3/OK2/authenticated/2",
            ]
        )
        let f = report.fleet
        #expect(f.deniedCodes == 1)
        #expect(f.expiredCodes == 1)
        #expect(f.authenticatedCodes == 2)
        #expect(f.endedCodes == 0 && f.openCodes == 0)
        #expect(f.codes(.denied) == 1 && f.codes(.expired) == 1)
        #expect(f.outcomes[.denied] == 1 && f.outcomes[.expired] == 1 && f.outcomes[.slowDown] == 2)
        #expect(try device("tv-2").deniedCodes == 1)
        #expect(try device("tv-3").expiredCodes == 1)
    }

    @Test func timeToLoginAndPollsPerLogin() {
        let f = report.fleet
        // OK1: 30030 − 5000 = 25030; OK2: 65001 − 60001 = 5000.
        #expect(f.timeToAuthenticate == Distribution([5000, 25030]))
        #expect(f.timeToAuthenticate.p50 == 5000 && f.timeToAuthenticate.p95 == 25030)
        // Polls per login: OK1 4, OK2 2 → p50 rank 1 → 2, p95 rank ⌈1.9⌉ = 2 → 4. Polls per code counts every code.
        #expect(f.pollsPerLogin == Distribution([2, 4]))
        #expect(f.pollsPerLogin.p95 == 4 && f.pollsPerLogin.p50 == 2)
        #expect(f.pollsPerCode == Distribution([2, 3, 4, 5]))
    }

    @Test func pollsPerLoginStopsAtTheFirstAuthenticatedAnswer() {
        let polls = [
            Fixture.poll("stb", "A", 0, 0, 200, "pending", 5000, latency: 1),
            Fixture.poll("stb", "A", 5001, 5001, 200, "authenticated", 5000, latency: 1),
            Fixture.poll("stb", "A", 10002, 10002, 200, "abandoned", nil, latency: 1),
        ]
        let report = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0)
        #expect(report.fleet.pollsPerLogin == Distribution([2]))
        #expect(report.fleet.pollsPerCode == Distribution([3]))
    }

    @Test func earlyPollsKeepTheirNegativeLateness() {
        let f = report.fleet
        // [−9000, −9000, −2000, −2000, 0 ×8, 1, 500]: min −9000, p50 rank 7 → 0, p99 rank ⌈13.86⌉ = 14 → 500 (EXP #3).
        #expect(f.lateness.count == 14)
        #expect(f.lateness.min == -9000)
        #expect(f.lateness.p50 == 0)
        #expect(f.lateness.p99 == 500)
        #expect(f.lateness.max == 500)
    }

    @Test func slowDownDeniedAndExpiredAreNeitherErrorsNorBackoffs() {
        for outcome in [PollOutcome.slowDown, .denied, .expired] {
            #expect(!SoakReport.errorPollOutcomes.contains(outcome))
            #expect(!SoakReport.backoffOutcomes.contains(outcome))
        }
        // OK1 #3 and FAST #3 follow a slow-down answer: no backoff.
        #expect(report.fleet.backoffs == 0)
        #expect(report.trouble.figures.failed == 0)
    }

    @Test func perFleet() throws {
        let oauth = try fleet("oauth")
        #expect(oauth.slowDownAnswers == 2 && oauth.earlyPolls == 4 && oauth.earlyPollsAfterSlowDown == 2)
        #expect(oauth.deniedCodes == 1 && oauth.expiredCodes == 0 && oauth.pollsPerLogin == Distribution([4]))
        let mixed = try fleet("mixed")
        #expect(mixed.slowDownAnswers == 0 && mixed.earlyPolls == 0 && mixed.earlyPollsAfterSlowDown == 0)
        #expect(mixed.deniedCodes == 0 && mixed.expiredCodes == 1 && mixed.pollsPerLogin == Distribution([2]))
    }

    @Test func anAdobeLogHasNoDeviceFlowFigures() {
        let report = Fixture.fullReport()
        let f = report.fleet
        #expect(f.slowDownAnswers == 0 && f.earlyPolls == 0 && f.earlyPollsAfterSlowDown == 0 && f.deniedCodes == 0)
        #expect(!f.hasDeviceFlowFigures)
        // AAA took 4 polls to log in.
        #expect(f.pollsPerLogin == Distribution([4]))
        #expect(!report.text().contains("DEVICE FLOW"))
        #expect(!report.text().contains("device flow"))
        #expect(!report.html().contains("Device flow"))
        #expect(!report.html().contains("denied by the user"))
    }
}

@Suite struct DeviceFlowThresholdTests {
    let report = DeviceFlowFixture.report()

    private func value(_ expression: String) throws -> ThresholdResult {
        let results = report.check([try Threshold(parsing: expression)])
        // The default (generator_behind_windows==0) comes first.
        return try #require(results.last)
    }

    @Test(arguments: [
        ("time_to_login_p50<=5s", 5000.0, true),
        ("time_to_login_p95<25s", 25030, false),
        ("polls_per_login_p95<=4", 4, true),
        ("slow_down_answers==2", 2, true),
        ("early_polls==0", 4, false),
        ("early_polls_after_slow_down==0", 2, false),
        ("expired_codes<=1", 1, true),
        ("denied_codes==0", 1, false),
        ("early_polls{fleet:oauth}==4", 4, true),
        ("early_polls_after_slow_down{fleet:mixed}==0", 0, true),
        ("expired_codes{fleet:oauth}==0", 0, true),
        ("polls_per_login_p95{fleet:mixed}==2", 2, true),
    ])
    func eachMetricReadsItsFigure(expression: String, expected: Double, passes: Bool) throws {
        let result = try value(expression)
        #expect(result.value == expected, "\(expression)")
        #expect(result.passed == passes, "\(expression)")
    }

    @Test func kindsAndNames() throws {
        #expect(try Threshold(parsing: "time_to_login_p95<2m").bound == 120_000)
        #expect(throws: Threshold.ParseError.self) { try Threshold(parsing: "time_to_login_p50<5") }
        #expect(throws: Threshold.ParseError.self) { try Threshold(parsing: "early_polls<0.5") }
        for metric in [
            "time_to_login_p50", "time_to_login_p95", "polls_per_login_p95", "slow_down_answers", "early_polls",
            "early_polls_after_slow_down", "expired_codes", "denied_codes",
        ] {
            #expect(ThresholdMetric(rawValue: metric) != nil, "\(metric)")
        }
    }

    @Test func aDeniedCodeIsAFinishedCodeWithoutALogin() throws {
        // authenticated 2 / (authenticated 2 + expired 1 + denied 1).
        #expect(try value("login_success_rate>=0.5").value == 0.5)
    }

    @Test func withoutLoginsTheLoginFiguresHaveNoSamples() throws {
        let report = SoakReport(
            polls: [Fixture.poll("tv", "C", 5000, 5000, 400, "denied", nil, latency: 1)],
            statusEvents: nil,
            generatedAtMs: 0
        )
        let results = report.check([try Threshold(parsing: "time_to_login_p95<1m"), try Threshold(parsing: "polls_per_login_p95<10")])
        #expect(results.dropFirst().allSatisfy { !$0.passed && $0.value == nil })
        #expect(report.check([try Threshold(parsing: "denied_codes==1")]).allPassed)
    }

    @Test func defaultsAreUnchanged() throws {
        #expect(Threshold.defaults.map(\.description) == ["generator_behind_windows==0"])
        // An Adobe run's new counts are all 0.
        let adobe = Fixture.fullReport().check(
            try ["early_polls==0", "early_polls_after_slow_down==0", "slow_down_answers==0", "denied_codes==0"].map {
                try Threshold(parsing: $0)
            }
        )
        #expect(adobe.allPassed)
    }
}

@Suite struct DeviceFlowRenderingTests {
    let report = DeviceFlowFixture.report()

    private func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
    }

    @Test func jsonCarriesTheFiguresOverallPerDeviceAndPerFleet() throws {
        let json = try json()
        let fleet = try #require(json["fleet"] as? [String: Any])
        let flow = try #require(fleet["device_flow"] as? [String: Int])
        #expect(flow == ["slow_down_answers": 2, "early_polls": 4, "early_polls_after_slow_down": 2, "denied_codes": 1])
        let perLogin = try #require(fleet["polls_per_login"] as? [String: Any])
        #expect(perLogin["count"] as? Int == 2 && perLogin["p95"] as? Int == 4 && perLogin["p50"] as? Int == 2)
        let fates = try #require(fleet["code_fates"] as? [String: Int])
        #expect(fates == ["authenticated": 2, "expired": 1, "denied": 1, "ended": 0, "open": 0])
        let tta = try #require(fleet["time_to_authenticate_ms"] as? [String: Any])
        #expect(tta["p95"] as? Int == 25030)
        let expiries = try #require(fleet["expiries"] as? [String: Any])
        #expect(expiries["expired_codes"] as? Int == 1)

        let devices = try #require(json["devices"] as? [[String: Any]])
        let tv2 = try #require(devices.first { $0["device"] as? String == "tv-2" })
        #expect((tv2["device_flow"] as? [String: Int])?["early_polls_after_slow_down"] == 2)
        let fleets = try #require(json["fleets"] as? [[String: Any]])
        #expect(fleets.map { $0["fleet"] as? String } == ["mixed", "oauth"])
        #expect((fleets[0]["device_flow"] as? [String: Int])?["early_polls"] == 0)
        #expect((fleets[1]["device_flow"] as? [String: Int])?["early_polls"] == 4)
        #expect(((fleets[0]["code_fates"] as? [String: Int]) ?? [:])["expired"] == 1)
    }

    @Test func csvCarriesTheFiguresOnEveryRow() throws {
        let rows = CSVRenderingTests.records(report.csv())
        let header = try #require(rows.first)
        #expect(Set(header).count == header.count, "column names are unique")
        #expect(rows.allSatisfy { $0.count == header.count })
        // The new columns come last, after the trouble columns, so the earlier ones keep their positions.
        #expect(
            Array(header.suffix(9)) == [
                "polls_per_login_count", "polls_per_login_p50", "polls_per_login_p95", "polls_per_login_max",
                "polls_per_login_mean", "slow_down_answers", "early_polls", "early_polls_after_slow_down", "denied_codes",
            ]
        )
        func value(_ scope: String, _ name: String, fleet: String = "", device: String = "") throws -> String {
            let scopeColumn = try #require(header.firstIndex(of: "scope"))
            let deviceColumn = try #require(header.firstIndex(of: "device"))
            let fleetColumn = try #require(header.firstIndex(of: "fleet"))
            let column = try #require(header.firstIndex(of: name), "missing column \(name)")
            let row = try #require(
                rows.dropFirst().first {
                    $0[scopeColumn] == scope && $0[deviceColumn] == device && (scope == "device" || $0[fleetColumn] == fleet)
                }
            )
            return row[column]
        }
        #expect(try value("fleet", "slow_down_answers") == "2")
        #expect(try value("fleet", "early_polls") == "4")
        #expect(try value("fleet", "early_polls_after_slow_down") == "2")
        #expect(try value("fleet", "denied_codes") == "1")
        #expect(try value("fleet", "expired_codes") == "1")
        #expect(try value("fleet", "polls_per_login_p95") == "4")
        #expect(try value("fleet", "polls_per_login_count") == "2")
        #expect(try value("fleet", "outcome_slow_down") == "2")
        #expect(try value("device", "early_polls", device: "tv-2") == "4")
        #expect(try value("device", "polls_per_login_p95", device: "tv-2") == "", "no login: an empty field")
        #expect(try value("group", "early_polls", fleet: "oauth") == "4")
        #expect(try value("group", "denied_codes", fleet: "mixed") == "0")
        #expect(try value("group", "expired_codes", fleet: "mixed") == "1")
    }

    @Test func textHasADeviceFlowTablePerFleet() throws {
        let text = report.text()
        #expect(text.contains("2 authenticated, 1 expired, 1 denied, 0 ended otherwise, 0 still polling"))
        #expect(text.contains("device flow"))
        #expect(text.contains("2 slow-down answers, 4 early polls (2 after a slow-down), 1 denied code;"))
        let section = try #require(text.components(separatedBy: "DEVICE FLOW").dropFirst().first)
        let table = section.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().prefix { !$0.isEmpty }
        #expect(table.count == 4, "header, all, mixed, oauth: \(table)")
        #expect(table.first?.hasPrefix("SCOPE") == true)
        let all = try #require(table.dropFirst().first).split(separator: " ", omittingEmptySubsequences: true)
        // all: slow-down 2, early 4, early after slow-down 2, denied 1, expired 1, logins 2, p50 5 s, p95 25.03 s, polls 4.
        #expect(all.map(String.init) == ["all", "2", "4", "2", "1", "1", "2", "5", "s", "25.03", "s", "4"])
    }

    @Test func htmlHasADeviceFlowTableAndDeniedCodesOnTheTimeline() {
        let html = report.html()
        #expect(html.contains("<h2>Device flow</h2>"))
        // All, then the fleets in table order (mixed, oauth).
        #expect(html.components(separatedBy: "<tr class=\"device-flow\">").count - 1 == 3)
        #expect(html.contains("<tr class=\"device-flow\"><td>all</td><td>2</td><td class=\"warn\">4</td><td class=\"warn\">2</td><td>1</td>"))
        #expect(html.contains("class=\"seg-denied\""))
        #expect(html.contains("<title>tv-2: code FAST denied by the user,"))
        #expect(html.contains("denied by the user</span>"))
        #expect(html.contains("Device flow (OAuth device grant)"))
    }
}
