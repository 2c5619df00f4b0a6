import SoakReport

/// A small poll log whose every figure is worked out by hand in `HandComputedReportTests`.
///
/// stb-1, code AAA (authenticated after a 429):
///   #1 planned  1000 sent  1010 200 pending        next 5000  latency 20
///   #2 planned  6030 sent  6040 429 throttled      next 6000  latency 10
///   #3 planned 12050 sent 12050 200 pending        next 5000  latency 30
///   #4 planned 17080 sent 17100 200 authenticated  next nil   latency 40
/// stb-1, code BBB (a 503, then the backoff poll, after which the code expires):
///   #5 planned 30000 sent 30005 503 server-error   next 10000 latency 15
///   #6 planned 40020 sent 40025 200 pending        next nil   latency 5
/// stb-2, code CCC (a transport error, then the backoff poll answers 410):
///   #7 planned  2000 sent  2000 200 pending        next 5000  latency 10
///   #8 planned  7010 sent  7012 nil transport-error next 4000 latency 3
///   #9 planned 11015 sent 11015 410 code-invalid   next nil   latency 8
/// stb-2, code XXX (one poll, then replaced by DDD):
///   #13 planned 40000 sent 40003 200 pending       next 5000  latency 7
/// stb-2, code DDD (still polling when the log ends):
///   #10 planned 50000 sent 50001 200 pending       next 5000  latency 12
///   #11 planned 55013 sent 55020 200 pending       next 5000  latency 9
///   #12 planned 60029 sent 60029 200 pending       next 5000  latency 11
/// Events: REG410 for stb-1 BBB and stb-2 CCC, REG500 for stb-2 and for stb-3 (which never
/// polled), and a REGCODE status that the report ignores.
enum Fixture {
    static let polls: [PollRecord] = [
        poll("stb-1", "AAA", 1000, 1010, 200, "pending", 5000, latency: 20),
        poll("stb-1", "AAA", 6030, 6040, 429, "throttled", 6000, latency: 10),
        poll("stb-1", "AAA", 12050, 12050, 200, "pending", 5000, latency: 30),
        poll("stb-1", "AAA", 17080, 17100, 200, "authenticated", nil, latency: 40),
        poll("stb-1", "BBB", 30000, 30005, 503, "server-error", 10000, latency: 15),
        poll("stb-1", "BBB", 40020, 40025, 200, "pending", nil, latency: 5),
        poll("stb-2", "CCC", 2000, 2000, 200, "pending", 5000, latency: 10),
        poll("stb-2", "CCC", 7010, 7012, nil, "transport-error", 4000, latency: 3),
        poll("stb-2", "CCC", 11015, 11015, 410, "code-invalid", nil, latency: 8),
        poll("stb-2", "DDD", 50000, 50001, 200, "pending", 5000, latency: 12),
        poll("stb-2", "DDD", 55013, 55020, 200, "pending", 5000, latency: 9),
        poll("stb-2", "DDD", 60029, 60029, 200, "pending", 5000, latency: 11),
        poll("stb-2", "XXX", 40000, 40003, 200, "pending", 5000, latency: 7),
    ]

    static let events: [StatusEventRecord] = [
        StatusEventRecord(device: "stb-1", timeMs: 45000, errorId: "REG410", code: "BBB"),
        StatusEventRecord(device: "stb-2", timeMs: 11030, errorId: "REG410", code: "CCC"),
        StatusEventRecord(device: "stb-2", timeMs: 20000, errorId: "REG500", code: nil),
        StatusEventRecord(device: "stb-3", timeMs: 20000, errorId: "REG500", code: nil),
        StatusEventRecord(device: "stb-2", timeMs: 39990, errorId: "REGCODE", code: nil),
    ]

    static func poll(
        _ device: String,
        _ code: String,
        _ planned: Int64,
        _ sent: Int64,
        _ status: Int?,
        _ outcome: String,
        _ next: Int64?,
        latency: Double
    ) -> PollRecord {
        PollRecord(
            device: device,
            code: code,
            plannedMs: planned,
            sentMs: sent,
            latencyMs: latency,
            httpStatus: status,
            outcome: outcome,
            nextDelayMs: next
        )
    }

    /// The report over the fixture, fed in reverse so that the report's own ordering is exercised.
    static func report(events: [StatusEventRecord]? = Fixture.events) -> SoakReport {
        SoakReport(polls: polls.reversed(), statusEvents: events, generatedAtMs: 100_000, sinceMs: 0)
    }
}
