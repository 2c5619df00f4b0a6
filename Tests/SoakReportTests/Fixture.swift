import RegcodeRecords
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
/// polled), and a REGCODE status that the poll figures ignore; then REGCODE events for the codes
/// AAA and BBB of stb-1 and CCC and DDD of stb-2 (with the one above, stb-2's XXX: 5 codes shown,
/// 3 of them beyond each device's first).
///
/// Requests other than polls (`requests`, used by `fullReport()`), by device:
///   stb-1: registration 100 ok, token 140 ok, configuration 160 429 (retry), configuration 470 ok,
///          session 500 ok (AAA), profile 17200 ok, registration 29000 ok (a re-registration),
///          token 29050 ok, session 29100 503 (retry), session 29620 ok (BBB)
///   stb-2: registration 50 ok, token 80 ok, configuration 100 ok, session 1900 ok (CCC),
///          session 39900 ok (XXX), metadata 45000 401 (retry), token 45010 ok, metadata 45030 ok,
///          decision 46000 malformed, session 49000 transport error (retry), session 49900 ok (DDD)
///   stb-3: registration 150 400 (retry), registration 200 ok, token 230 ok, configuration 260 ok,
///          session 17000 500 (retry), 18010 500 (retry), 19020 500 (given up): no code ever.
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
        StatusEventRecord(device: "stb-1", timeMs: 520, errorId: "REGCODE", code: nil, message: "AAA", level: "success"),
        StatusEventRecord(device: "stb-1", timeMs: 29640, errorId: "REGCODE", code: nil, message: "BBB", level: "success"),
        StatusEventRecord(device: "stb-2", timeMs: 1920, errorId: "REGCODE", code: nil, message: "CCC", level: "success"),
        StatusEventRecord(device: "stb-2", timeMs: 49920, errorId: "REGCODE", code: nil, message: "DDD", level: "success"),
    ]

    static let requests: [RequestRecord] = [
        request("stb-1", "registration", 100, 201, "ok", latency: 30),
        request("stb-1", "token", 140, 200, "ok", latency: 10),
        request("stb-1", "configuration", 160, 429, "throttled", retry: 300, latency: 5),
        request("stb-1", "configuration", 470, 200, "ok", latency: 8),
        request("stb-1", "session", 500, 201, "ok", latency: 20),
        request("stb-1", "profile", 17200, 200, "ok", latency: 12),
        request("stb-1", "registration", 29000, 201, "ok", latency: 25),
        request("stb-1", "token", 29050, 200, "ok", latency: 9),
        request("stb-1", "session", 29100, 503, "server-error", retry: 500, latency: 15),
        request("stb-1", "session", 29620, 201, "ok", latency: 18),
        request("stb-2", "registration", 50, 201, "ok", latency: 22),
        request("stb-2", "token", 80, 200, "ok", latency: 11),
        request("stb-2", "configuration", 100, 200, "ok", latency: 6),
        request("stb-2", "session", 1900, 201, "ok", latency: 14),
        request("stb-2", "session", 39900, 201, "ok", latency: 16),
        request("stb-2", "metadata", 45000, 401, "unauthorized", error: "invalid_token", retry: 0, latency: 4),
        request("stb-2", "token", 45010, 200, "ok", latency: 10),
        request("stb-2", "metadata", 45030, 200, "ok", latency: 5),
        request("stb-2", "decision", 46000, 200, "malformed", latency: 2),
        request("stb-2", "session", 49000, nil, "transport-error", retry: 800, latency: 3),
        request("stb-2", "session", 49900, 201, "ok", latency: 13),
        request("stb-3", "registration", 150, 400, "client-error", error: "invalid_request", retry: 50, latency: 7),
        request("stb-3", "registration", 200, 201, "ok", latency: 21),
        request("stb-3", "token", 230, 200, "ok", latency: 9),
        request("stb-3", "configuration", 260, 200, "ok", latency: 7),
        request("stb-3", "session", 17000, 500, "server-error", retry: 1000, latency: 40),
        request("stb-3", "session", 18010, 500, "server-error", retry: 1000, latency: 35),
        request("stb-3", "session", 19020, 500, "server-error", error: "internal_error", latency: 30),
    ]

    static let devices: [DeviceRecord] = [
        DeviceRecord(device: "stb-1", state: "ready", codesIssued: 2),
        DeviceRecord(device: "stb-2", state: "polling", codesIssued: 3),
        DeviceRecord(device: "stb-3", state: "ready", codesIssued: 0),
    ]

    static func request(
        _ device: String,
        _ stage: String,
        _ sent: Int64,
        _ status: Int?,
        _ outcome: String,
        error: String? = nil,
        retry: Int64? = nil,
        latency: Double
    ) -> RequestRecord {
        RequestRecord(
            device: device,
            attempt: RequestAttempt(
                stage: RequestStage(rawValue: stage),
                endpoint: "\(stage)-endpoint",
                sentEpochMs: sent,
                latencyMs: latency,
                httpStatus: status,
                outcome: RequestOutcome(rawValue: outcome),
                errorCode: error,
                retryDelayMs: retry
            )
        )
    }

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
            attempt: PollAttempt(
                code: code,
                plannedEpochMs: planned,
                sentEpochMs: sent,
                latencyMs: latency,
                httpStatus: status,
                outcome: PollOutcome(rawValue: outcome),
                nextDelayMs: next
            )
        )
    }

    /// The report over the fixture, fed in reverse so that the report's own ordering is exercised.
    static func report(events: [StatusEventRecord]? = Fixture.events) -> SoakReport {
        SoakReport(polls: polls.reversed(), statusEvents: events, generatedAtMs: 100_000, sinceMs: 0)
    }

    /// The report over everything: polls, events, requests and devices, all fed in reverse.
    static func fullReport(events: [StatusEventRecord]? = Fixture.events) -> SoakReport {
        SoakReport(
            polls: polls.reversed(),
            statusEvents: events?.reversed(),
            requests: requests.reversed(),
            devices: devices.reversed(),
            generatedAtMs: 100_000,
            sinceMs: 0
        )
    }
}
