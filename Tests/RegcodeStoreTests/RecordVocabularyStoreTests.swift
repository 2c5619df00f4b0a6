import Foundation
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import RegcodeTestSupport
import Testing

/// The logs hold outcomes and stages as their text: every known one is stored as such, and one written by
/// another version reads back as it was rather than failing the read.
@Suite struct RecordVocabularyStoreTests {
    @Test func everyKnownPollOutcomeIsStoredAsItsText() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        let polls = PollOutcome.known.enumerated().map { index, outcome in poll("C1", at: t0 + Int64(index), outcome: outcome) }
        _ = try await store.apply([DeviceStep(device: "stb-1", polls: polls, epochMs: t0)])
        let stored = try SQLiteShell.run(path, "SELECT outcome FROM poll_attempts ORDER BY id")
        #expect(stored.split(separator: "\n").map(String.init) == PollOutcome.known.map(\.rawValue))
        #expect(try await store.pollAttempts(device: "stb-1", sinceEpochMs: nil).map(\.attempt.outcome) == PollOutcome.known)
    }

    @Test func everyKnownRequestOutcomeAndStageIsStoredAsItsText() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        let stages = RequestStage.known.filter { $0 != .poll }
        var requests: [RequestAttempt] = []
        for (index, outcome) in RequestOutcome.known.enumerated() {
            requests.append(request(stages[index % stages.count], at: t0 + Int64(index), outcome: outcome))
        }
        _ = try await store.apply([DeviceStep(device: "stb-1", requests: requests, epochMs: t0)])
        let rows = try SQLiteShell.run(path, "SELECT stage || ' ' || outcome FROM request_attempts ORDER BY id")
        #expect(rows.split(separator: "\n").map(String.init) == requests.map { "\($0.stage.rawValue) \($0.outcome.rawValue)" })
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: nil).map(\.attempt) == requests)
    }

    @Test func valuesFromAnotherVersionReadBackUnchanged() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        _ = try openStore(path)
        try SQLiteShell.run(
            path,
            """
            INSERT INTO poll_attempts (device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms)
            VALUES ('stb-9', 'Z1', \(t0), \(t0 + 4), 425, 3.5, 'too-early', 2000);
            INSERT INTO request_attempts (device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms)
            VALUES ('stb-9', 'teleport', 'beam', \(t0 + 9), 418, 1.5, 'teapot', NULL, NULL);
            """
        )
        let store = try openStore(path)
        let polls = try await store.pollAttempts(device: nil, sinceEpochMs: nil)
        #expect(polls.map(\.attempt.outcome) == [PollOutcome(rawValue: "too-early")])
        #expect(try await store.recentPolls(of: "stb-9", limit: 5).map(\.outcome.rawValue) == ["too-early"])
        let requests = try await store.requestAttempts(device: nil, sinceEpochMs: nil)
        #expect(requests.map(\.attempt.stage) == [RequestStage(rawValue: "teleport")])
        #expect(requests.map(\.attempt.outcome) == [RequestOutcome(rawValue: "teapot")])

        // Stored again, the text is unchanged.
        _ = try await store.apply([
            DeviceStep(device: "stb-9", polls: polls.map(\.attempt), requests: requests.map(\.attempt), epochMs: t0 + 10)
        ])
        #expect(try SQLiteShell.run(path, "SELECT DISTINCT outcome FROM poll_attempts") == "too-early")
        #expect(try SQLiteShell.run(path, "SELECT DISTINCT stage || ' ' || outcome FROM request_attempts") == "teleport teapot")
    }
}
