import Foundation
import RegcodeTestSupport
import SoakReport

/// A run where 18 of 20 devices die at registration with 429, worked out by hand.
///
/// T0 = 1 800 000 000 000 ms = 2027-01-15 08:00:00 UTC.
/// Fleet `doomed`, devices doomed-1 … doomed-18 (device i): registration 429 at T0 + i·100 (retry
/// 1 s), T0 + 1000 + i·100 (retry 2 s), T0 + 3000 + i·100 (error `too_many_requests`, not retried).
/// 54 registration requests, all 429; no other request, no poll; stored state `failed`, no code.
/// Fleet `steady`, devices steady-1 and steady-2 (k = 0 and 10 ms):
///   registration ok T0+50+k, token ok T0+80+k, configuration T0+100+k (steady-1: 503, retried,
///   then ok at T0+400; steady-2: ok), session ok T0+500+k,
///   polls of code S1/S2: T0+20000+k pending (next 5 s), T0+25000+k 429 (next 5 s),
///   T0+30000+k authenticated.
///
/// By stage: registration 56 requests (54 errors, 54 × 429), token 2, configuration 3 (1 error,
/// 1 × 5xx), session 2, poll 6 (2 errors, 2 × 429). 429s 56, 5xx 1.
/// 1 s buckets from T0: 429s in buckets 0–4 (9, 18, 9, 9, 9); nothing in 5–19; bucket 25 has
/// 2 × 429 of 2 polls. Trouble windows: T1 08:00:00–08:00:05, T2 08:00:25–08:00:26.
enum TroubleFixture {
    static let t0: Int64 = 1_800_000_000_000
    static let doomed = (1...18).map { "doomed-\($0)" }

    static var requests: [RequestRecord] {
        var requests: [RequestRecord] = []
        for (index, name) in doomed.enumerated() {
            let offset = Int64(index + 1) * 100
            requests.append(request(name, "registration", t0 + offset, 429, "throttled", retry: 1000))
            requests.append(request(name, "registration", t0 + 1000 + offset, 429, "throttled", retry: 2000))
            requests.append(request(name, "registration", t0 + 3000 + offset, 429, "throttled", error: "too_many_requests"))
        }
        for (k, name) in [(Int64(0), "steady-1"), (10, "steady-2")] {
            requests.append(request(name, "registration", t0 + 50 + k, 201, "ok"))
            requests.append(request(name, "token", t0 + 80 + k, 200, "ok"))
            if name == "steady-1" {
                requests.append(request(name, "configuration", t0 + 100, 503, "server-error", retry: 300))
                requests.append(request(name, "configuration", t0 + 400, 200, "ok"))
            } else {
                requests.append(request(name, "configuration", t0 + 100 + k, 200, "ok"))
            }
            requests.append(request(name, "session", t0 + 500 + k, 201, "ok"))
        }
        return requests
    }

    static var polls: [PollRecord] {
        var polls: [PollRecord] = []
        for (k, name, code) in [(Int64(0), "steady-1", "S1"), (Int64(10), "steady-2", "S2")] {
            polls.append(Fixture.poll(name, code, t0 + 20000 + k, t0 + 20000 + k, 200, "pending", 5000, latency: 10))
            polls.append(Fixture.poll(name, code, t0 + 25000 + k, t0 + 25000 + k, 429, "throttled", 5000, latency: 10))
            polls.append(Fixture.poll(name, code, t0 + 30000 + k, t0 + 30000 + k, 200, "authenticated", nil, latency: 10))
        }
        return polls
    }

    static var devices: [DeviceRecord] {
        doomed.map { DeviceRecord(device: $0, state: "failed", codesIssued: 0, fleet: "doomed") }
            + ["steady-1", "steady-2"].map { DeviceRecord(device: $0, state: "authenticated", codesIssued: 1, fleet: "steady") }
    }

    static func report() -> SoakReport {
        SoakReport(
            polls: polls.reversed(),
            statusEvents: [],
            requests: requests.reversed(),
            devices: devices.reversed(),
            generatedAtMs: t0 + 60_000
        )
    }

    static func request(
        _ device: String,
        _ stage: String,
        _ sent: Int64,
        _ status: Int?,
        _ outcome: String,
        error: String? = nil,
        retry: Int64? = nil
    )
        -> RequestRecord
    {
        Fixture.request(device, stage, sent, status, outcome, error: error, retry: retry, latency: 5)
    }

    /// A fleet `noisy` of five misbehaving devices (a poll every second, every other answered 429,
    /// 60 polls each) and a fleet `quiet` of two devices polling every 5 s without an error (12
    /// polls each), for the per-fleet split.
    static func noisyAndQuiet() -> SoakReport {
        var polls: [PollRecord] = []
        for device in 1...5 {
            for index in 0..<60 {
                let sent = t0 + Int64(index) * 1000 + Int64(device)
                let throttled = index % 2 == 1
                polls.append(
                    Fixture.poll(
                        "noisy-\(device)",
                        "N\(device)",
                        sent,
                        sent,
                        throttled ? 429 : 200,
                        throttled ? "throttled" : "pending",
                        1000,
                        latency: 5
                    )
                )
            }
        }
        for device in 1...2 {
            for index in 0..<12 {
                let sent = t0 + Int64(index) * 5000 + Int64(device) * 7
                polls.append(Fixture.poll("quiet-\(device)", "Q\(device)", sent, sent, 200, "pending", 5000, latency: 20))
            }
        }
        let devices =
            (1...5).map { DeviceRecord(device: "noisy-\($0)", state: "polling", codesIssued: 1, fleet: "noisy") }
            + (1...2).map { DeviceRecord(device: "quiet-\($0)", state: "polling", codesIssued: 1, fleet: "quiet") }
        return SoakReport(polls: polls, statusEvents: nil, requests: [], devices: devices, generatedAtMs: t0 + 120_000)
    }

    /// SQL inserting the 18-of-20 run into a database made from `schema.sql`.
    static func sql() -> String {
        var sql = ""
        for request in requests {
            let status = request.httpStatus.map(String.init) ?? "NULL"
            let error = request.errorCode.map { "'\($0)'" } ?? "NULL"
            let retry = request.retryDelayMs.map(String.init) ?? "NULL"
            sql += "INSERT INTO request_attempts(device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms) "
            sql +=
                "VALUES ('\(request.device)', '\(request.stage)', '\(request.endpoint)', \(request.sentEpochMs), \(status), \(request.latencyMs), '\(request.outcome)', \(error), \(retry));\n"
        }
        for poll in polls {
            let status = poll.httpStatus.map(String.init) ?? "NULL"
            let next = poll.nextDelayMs.map(String.init) ?? "NULL"
            sql += "INSERT INTO poll_attempts(device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms) "
            sql +=
                "VALUES ('\(poll.device)', '\(poll.code)', \(poll.plannedEpochMs), \(poll.sentEpochMs), \(status), \(poll.latencyMs), '\(poll.outcome)', \(next));\n"
        }
        for (index, device) in devices.enumerated() {
            sql +=
                "INSERT INTO devices(name, device_id, device_info, profile, requestor, scenario, settings, seed, fleet, state, created_at, updated_at) "
            sql +=
                "VALUES ('\(device.device)', 'id-\(index)', '{}', 'v2', 'REF30', 'login', '{}', 0, '\(device.fleet ?? "")', '\(device.state ?? "new")', \(index), \(index));\n"
        }
        return sql
    }
}
