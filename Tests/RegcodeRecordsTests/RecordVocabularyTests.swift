import Foundation
import RegcodeRecords
import Testing

/// The stored text of every known outcome and stage, and values from other versions read back unchanged.
@Suite struct RecordVocabularyTests {
    @Test func knownPollOutcomesAreTheirStoredText() {
        let expected: [(PollOutcome, String)] = [
            (.pending, "pending"), (.authenticated, "authenticated"), (.throttled, "throttled"),
            (.serverError, "server-error"), (.transportError, "transport-error"), (.malformed, "malformed"),
            (.unauthorized, "unauthorized"), (.codeInvalid, "code-invalid"), (.clientError, "client-error"),
            (.slowDown, "slow-down"), (.denied, "denied"), (.expired, "expired"), (.abandoned, "abandoned"), (.interrupted, "interrupted"),
        ]
        for (outcome, text) in expected {
            #expect(outcome.rawValue == text)
            #expect(outcome.description == text)
            #expect(PollOutcome(rawValue: text) == outcome)
        }
        #expect(PollOutcome.known == expected.map(\.0))
    }

    @Test func knownRequestOutcomesAreTheirStoredText() {
        let expected: [(RequestOutcome, String)] = [
            (.ok, "ok"), (.throttled, "throttled"), (.serverError, "server-error"), (.transportError, "transport-error"),
            (.malformed, "malformed"), (.unauthorized, "unauthorized"), (.clientError, "client-error"), (.abandoned, "abandoned"),
            (.interrupted, "interrupted"),
        ]
        for (outcome, text) in expected {
            #expect(outcome.rawValue == text)
            #expect(RequestOutcome(rawValue: text) == outcome)
        }
        #expect(RequestOutcome.known == expected.map(\.0))
    }

    @Test func knownStagesAreTheirStoredText() {
        let expected: [(RequestStage, String)] = [
            (.registration, "registration"), (.token, "token"), (.configuration, "configuration"), (.session, "session"),
            (.profile, "profile"), (.poll, "poll"), (.decision, "decision"), (.metadata, "metadata"), (.logout, "logout"),
        ]
        for (stage, text) in expected {
            #expect(stage.rawValue == text)
            #expect(RequestStage(rawValue: text) == stage)
        }
        #expect(RequestStage.known == expected.map(\.0))
    }

    @Test func unknownValuesRoundTrip() throws {
        let outcome = PollOutcome(rawValue: "rate-limited-by-edge")
        #expect(!PollOutcome.known.contains(outcome))
        #expect(outcome.rawValue == "rate-limited-by-edge")
        #expect(try roundTrip(outcome) == outcome)
        let requestOutcome = RequestOutcome(rawValue: "cancelled")
        #expect(!RequestOutcome.known.contains(requestOutcome))
        #expect(try roundTrip(requestOutcome) == requestOutcome)
        let stage = RequestStage(rawValue: "teleport")
        #expect(!RequestStage.known.contains(stage))
        #expect(try roundTrip(stage) == stage)
    }

    /// Encoded as the bare string, as the enums they replace were: JSON written before reads the same.
    @Test func valuesEncodeAsTheirText() throws {
        let text = String(decoding: try JSONEncoder().encode([PollOutcome.codeInvalid]), as: UTF8.self)
        #expect(text == #"["code-invalid"]"#)
        let stage = try JSONDecoder().decode([RequestStage].self, from: Data(#"["registration","teleport"]"#.utf8))
        #expect(stage == [.registration, RequestStage(rawValue: "teleport")])
        let outcome = try JSONDecoder().decode(RequestOutcome.self, from: Data(#""server-error""#.utf8))
        #expect(outcome == .serverError)
    }

    private func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }
}
