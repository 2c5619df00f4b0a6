import AccessEnablerAPI
import DeviceFleet
import MetricsTestKit
import RegcodeEngine
import RegcodeRecords
import Testing

@testable import RegcodeDaemon

/// What the metrics make of stored steps, read back through swift-metrics' test kit.
@Suite struct RegcodeMetricsTests {
    static func step(_ device: String, at epochMs: Int64, events: [DeviceEvent] = [], polls: [PollAttempt] = []) -> DeviceStep {
        DeviceStep(device: device, snapshot: nil, endedCodes: [], polls: polls, events: events, epochMs: epochMs)
    }

    @Test func codesPollsAndTimeToAuthenticateAreCounted() throws {
        let recorder = TestMetrics()
        let metrics = RegcodeMetrics(factory: recorder)
        let poll = PollAttempt(
            code: "ABC1234",
            plannedEpochMs: 1_000,
            sentEpochMs: 1_004,
            latencyMs: 12.5,
            httpStatus: 200,
            outcome: .pending,
            nextDelayMs: 5_000
        )
        metrics.record([
            Self.step("stb-1", at: 1_000, events: [.status(.registrationCode, level: .success, message: "ABC1234")]),
            Self.step("stb-1", at: 1_004, polls: [poll]),
            Self.step("stb-1", at: 6_000, events: [.setAuthenticationStatus(AccessEnabler.statusSuccess, .none)]),
            Self.step("stb-2", at: 7_000, events: [.status(.registrationCodeExpired, message: "expired")]),
        ])
        #expect(try recorder.expectCounter("regcoded_codes_issued_total").totalValue == 1)
        #expect(try recorder.expectCounter("regcoded_codes_expired_total").totalValue == 1)
        #expect(try recorder.expectCounter("regcoded_polls_total", [("outcome", "pending"), ("status", "200")]).totalValue == 1)
        #expect(try recorder.expectCounter("regcoded_events_total", [("name", "status")]).totalValue == 2)
        #expect(try recorder.expectTimer("regcoded_time_to_authenticate_seconds").lastValue == 5_000_000_000)
        #expect(try recorder.expectTimer("regcoded_poll_lateness_seconds").lastValue == 4_000_000)
        #expect(try recorder.expectTimer("regcoded_poll_latency_seconds").lastValue == 12_500_000)
    }
}
