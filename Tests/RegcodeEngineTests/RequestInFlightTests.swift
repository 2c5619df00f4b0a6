import RegcodeEngine
import RegcodeRecords
import RegcodeTestSupport
import Testing

/// Every request is recorded before it goes out (the harness checks the order for every engine test); the record
/// carries what the request log needs should the answer never arrive.
@Suite struct RequestInFlightTests {
    @Test func eachRequestIsRecordedWithItsStageAndEndpointBeforeItIsSent() throws {
        var h = EngineHarness()
        h.startLogin()
        #expect(h.sentRecords.map(\.endpoint) == h.sent.map(\.request.name))
        #expect(h.sentRecords.map(\.stage) == [.registration, .token, .configuration, .session, .poll])
        #expect(h.sentRecords.dropLast().allSatisfy { $0.pollCode == nil && $0.plannedEpochMs == nil })
    }

    @Test func aPollsRecordHasItsCodeAndPlannedTimeAsThePollLogWillHaveThem() throws {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.success(.profile(nil)), latency: .milliseconds(30))
        h.fireNextTimer()
        let record = try #require(h.sentRecords.last)
        h.respond(.success(.profile(nil)), latency: .milliseconds(40))
        let poll = try #require(h.polls.last)
        #expect(h.polls.count == 2)
        #expect(record.stage == .poll)
        #expect(record.endpoint == "profiles.code")
        #expect(record.pollCode == poll.code)
        #expect(record.plannedEpochMs == poll.plannedEpochMs)
        #expect(record.sentEpochMs == poll.sentEpochMs)
    }
}
