import Foundation
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import RegcodeTestSupport
import Testing

/// Write-ahead of backend requests: a request is stored before it is sent and leaves with its answer's records; what
/// a kill leaves behind is logged as `interrupted` at the next start.
@Suite struct RequestsInFlightTests {
    static func sent(_ stage: RequestStage, _ endpoint: String, at time: Int64, code: String? = nil, planned: Int64? = nil) -> RequestInFlight {
        RequestInFlight(stage: stage, endpoint: endpoint, sentEpochMs: time, pollCode: code, plannedEpochMs: planned)
    }

    static func inFlight(_ path: String) throws -> String {
        try SQLiteShell.run(path, "SELECT device, app, stage, endpoint, code, planned_at, sent_at FROM requests_in_flight ORDER BY device, app")
    }

    @Test func aRequestIsStoredUntilTheStepWithItsAnswerAndOnlyForAStoredDevice() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))

        var registering = DeviceStep(device: "stb-1", epochMs: t0)
        registering.sentRequest = Self.sent(.registration, "register", at: t0)
        var polling = DeviceStep(device: "stb-2", app: "B", isFirstApp: false, epochMs: t0 + 1)
        polling.sentRequest = Self.sent(.poll, "profiles.code", at: t0 + 1, code: "C1", planned: t0 - 4)
        // A device removed while its step was queued: nothing is stored for it, and the batch still lands.
        var gone = DeviceStep(device: "gone", epochMs: t0 + 2)
        gone.sentRequest = Self.sent(.session, "sessions", at: t0 + 2)
        #expect(!registering.isEmpty && !gone.isEmpty)
        _ = try await store.apply([registering, polling, gone])
        #expect(
            try Self.inFlight(path) == """
                stb-1|main|registration|register|||\(t0)
                stb-2|B|poll|profiles.code|C1|\(t0 - 4)|\(t0 + 1)
                """
        )

        // The answer's step removes the request and, in the same transaction, stores the next one.
        var answered = DeviceStep(
            device: "stb-1",
            requests: [RequestAttempt(stage: .registration, endpoint: "register", sentEpochMs: t0, latencyMs: 3, httpStatus: 201, outcome: .ok)],
            epochMs: t0 + 5
        )
        answered.answeredRequest = true
        answered.sentRequest = Self.sent(.token, "token", at: t0 + 5)
        var lastAnswer = DeviceStep(device: "stb-2", app: "B", isFirstApp: false, epochMs: t0 + 6)
        lastAnswer.answeredRequest = true
        #expect(!lastAnswer.isEmpty)
        _ = try await store.apply([answered, lastAnswer])
        #expect(try Self.inFlight(path) == "stb-1|main|token|token|||\(t0 + 5)")

        // Removing the device takes its request with it.
        #expect(try await store.removeDevice(named: "stb-1"))
        #expect(try Self.inFlight(path).isEmpty)
    }

    @Test func whatARunLeftInFlightIsLoggedAsInterruptedOnceAtTheNextStart() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        do {
            let store = try openStore(path)
            try await store.saveDevice(makeDevice("stb-1"))
            try await store.saveDevice(makeDevice("stb-2"))
            try await store.saveDevice(makeDevice("stb-3"))
            var session = DeviceStep(device: "stb-1", epochMs: t0)
            session.sentRequest = Self.sent(.session, "sessions", at: t0)
            var poll = DeviceStep(device: "stb-2", epochMs: t0 + 10)
            poll.sentRequest = Self.sent(.poll, "profiles.code", at: t0 + 10, code: "C2", planned: t0 + 7)
            var otherApp = DeviceStep(device: "stb-2", app: "B", isFirstApp: false, epochMs: t0 + 11)
            otherApp.sentRequest = Self.sent(.registration, "register", at: t0 + 11)
            _ = try await store.apply([session, poll, otherApp])
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
