import Foundation
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import RegcodeTestSupport
import Testing

/// Write-ahead of backend requests: a request is stored before it is sent and leaves with its answer's records; what
/// a kill leaves behind is logged as `interrupted` at the next start.
@Suite struct RequestsInFlightTests {
    static func sent(
        _ id: UInt64,
        _ stage: RequestStage,
        _ endpoint: String,
        at time: Int64,
        code: String? = nil,
        planned: Int64? = nil
    ) -> RequestInFlight {
        RequestInFlight(id: id, stage: stage, endpoint: endpoint, sentEpochMs: time, pollCode: code, plannedEpochMs: planned)
    }

    static func inFlight(_ path: String) throws -> String {
        try SQLiteShell.run(path, "SELECT id, device, app, stage, endpoint, code, planned_at, sent_at FROM requests_in_flight ORDER BY id")
    }

    @Test func aRequestIsStoredUntilTheStepWithItsAnswer() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))

        var registering = DeviceStep(device: "stb-1", epochMs: t0)
        registering.sentRequest = Self.sent(1, .registration, "register", at: t0)
        var polling = DeviceStep(device: "stb-2", app: "B", isFirstApp: false, epochMs: t0 + 1)
        polling.sentRequest = Self.sent(2, .poll, "profiles.code", at: t0 + 1, code: "C1", planned: t0 - 4)
        #expect(!registering.isEmpty)
        _ = try await store.apply([registering, polling])
        #expect(
            try Self.inFlight(path) == """
                1|stb-1|main|registration|register|||\(t0)
                2|stb-2|B|poll|profiles.code|C1|\(t0 - 4)|\(t0 + 1)
                """
        )

        // The answer's step removes its request and, in the same transaction, stores the next one.
        var answered = DeviceStep(
            device: "stb-1",
            requests: [RequestAttempt(stage: .registration, endpoint: "register", sentEpochMs: t0, latencyMs: 3, httpStatus: 201, outcome: .ok)],
            epochMs: t0 + 5
        )
        answered.answeredRequest = 1
        answered.sentRequest = Self.sent(3, .token, "token", at: t0 + 5)
        var lastAnswer = DeviceStep(device: "stb-2", app: "B", isFirstApp: false, epochMs: t0 + 6)
        lastAnswer.answeredRequest = 2
        #expect(!lastAnswer.isEmpty)
        _ = try await store.apply([answered, lastAnswer])
        #expect(try Self.inFlight(path) == "3|stb-1|main|token|token|||\(t0 + 5)")
    }

    @Test func whatARunLeftInFlightIsLoggedAsInterruptedOnceAtTheNextStart() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        do {
            let store = try openStore(path)
            for name in ["stb-1", "stb-2", "stb-3"] { try await store.saveDevice(makeDevice(name)) }
            var session = DeviceStep(device: "stb-1", epochMs: t0)
            session.sentRequest = Self.sent(7, .session, "sessions", at: t0)
            var poll = DeviceStep(device: "stb-2", epochMs: t0 + 10)
            poll.sentRequest = Self.sent(8, .poll, "profiles.code", at: t0 + 10, code: "C2", planned: t0 + 7)
            var otherApp = DeviceStep(device: "stb-2", app: "B", isFirstApp: false, epochMs: t0 + 11)
            otherApp.sentRequest = Self.sent(9, .registration, "register", at: t0 + 11)
            var removed = DeviceStep(device: "stb-3", epochMs: t0 + 12)
            removed.sentRequest = Self.sent(10, .session, "sessions", at: t0 + 12)
            _ = try await store.apply([session, poll, otherApp, removed])
            // A device removed with its request in flight: its answer was dropped with it, and so is the row.
            #expect(try await store.removeDevice(named: "stb-3"))
        }

        let store = try openStore(path)
        let found = try await store.recordInterruptedRequests()
        #expect(found.polls == 1)
        #expect(found.requests == 2)
        #expect(found.byStage == [.poll: 1, .session: 1, .registration: 1])
        #expect(try Self.inFlight(path).isEmpty)
        #expect(
            try SQLiteShell.run(path, "SELECT device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms FROM poll_attempts")
                == "stb-2|C2|\(t0 + 7)|\(t0 + 10)||0.0|interrupted|"
        )
        #expect(
            try await store.requestAttempts(device: nil, sinceEpochMs: nil).map { "\($0.device) \($0.attempt.stage) \($0.attempt.outcome)" } == [
                "stb-1 session interrupted", "stb-2 registration interrupted",
            ]
        )
        // Once: a second start finds nothing left.
        #expect(try await store.recordInterruptedRequests() == RegcodeStore.InterruptedRequests())
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM poll_attempts") == "1")
    }
}
