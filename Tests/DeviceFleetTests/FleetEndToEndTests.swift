import AdobePassClient
import Foundation
import Logging
import NIOCore
import PassSimulator
import RegcodeEngine
import RegcodeRecords
import RegcodeTestSupport
import Synchronization
import Testing

@testable import DeviceFleet

/// Collects what the fleet records and lets a test wait for an event.
final class RecordingSink: FleetSink {
    private let steps = Mutex<[DeviceStep]>([])
    let stream: AsyncStream<(String, DeviceEvent)>
    private let continuation: AsyncStream<(String, DeviceEvent)>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func record(_ step: DeviceStep) {
        steps.withLock { $0.append(step) }
        for event in step.events { continuation.yield((step.device, event)) }
    }

    var recorded: [DeviceStep] { steps.withLock { $0 } }
    var events: [DeviceEvent] { recorded.flatMap(\.events) }
    var polls: [PollAttempt] { recorded.flatMap(\.polls) }
}

extension AsyncStream where Element == (String, DeviceEvent) {
    /// The next event matching `predicate`, or nil if none arrives within `timeout`.
    func first(timeout: Duration, where predicate: @escaping @Sendable (DeviceEvent) -> Bool) async -> DeviceEvent? {
        await withTaskGroup(of: DeviceEvent?.self) { group in
            group.addTask {
                for await (_, event) in self where predicate(event) { return event }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }
}

@Suite struct FleetEndToEndTests {
    /// The key the tests' simulators check software statements with.
    static let statementKey = SoftwareStatementKey.ephemeral()
    /// A statement signed with ``statementKey`` for the devices' default `redirect_uri`.
    static let statement =
        (try? statementKey.issue(softwareId: softwareID, redirectURIs: [ClientIdentity().clientRedirectURI])) ?? "unsigned"
    /// The `software_id` of ``statement``.
    static let softwareID = "regcoded-test"

    @Test func deviceLogsInAfterTheCodeIsApprovedOnTheSimulator() async throws {
        var simulatorConfiguration = SimulatorConfiguration()
        simulatorConfiguration.statementKey = FleetEndToEndTests.statementKey
        simulatorConfiguration.throttleEnabled = true
        let simulator = PassSimulator(configuration: simulatorConfiguration)
        try await simulator.withRunningServer { baseURL in
            let sink = RecordingSink()
            var clientConfiguration = AdobePassClientConfiguration(baseURL: baseURL)
            clientConfiguration.requestTimeout = .seconds(5)
            let client = AdobePassClient(configuration: clientConfiguration, logger: Logger(label: "test"))
            let fleet = Fleet(clock: SystemDeviceClock(), executor: client, sink: sink, logger: Logger(label: "fleet"))

            try await withRunningFleet(fleet) {
                var settings = DeviceSettings(name: "stb-1", requestor: "REF30")
                settings.softwareStatement = Self.statement
                settings.polling.interval = .seconds(3)
                try await fleet.add(.init(settings: settings, deviceID: "8a0f4c1e-1111-4bd2-9f00-000000000001", seed: 1))

                let regcode = await sink.stream.first(timeout: .seconds(10)) { $0.statusErrorID == "REGCODE" }
                let code = try #require(regcode?.args["statusDictionary"]?["message"]?.stringValue)
                #expect(code.count == 7)

                let approved = try await SimulatorAdmin.call(baseURL, "/_sim/approve", json: #"{"code":"\#(code)","userId":"lab-user"}"#)
                #expect(approved.status == 200)

                let done = await sink.stream.first(timeout: .seconds(15)) { $0.name == "setAuthenticationStatus" && $0.args["status"] == 1 }
                #expect(done == .setAuthenticationStatus(1, ""))
            }

            #expect(
                sink.events.map(\.name) == [
                    "setRequestorComplete", "setAuthenticationStatus", "sendTrackingData", "displayProviderDialog",
                    "sendTrackingData", "status", "setAuthenticationStatus", "sendTrackingData",
                ]
            )
            #expect(sink.events[1] == .setAuthenticationStatus(0, "User Not Authenticated Error"))
            let polls = sink.polls
            #expect(polls.last?.outcome == .authenticated)
            #expect(polls.dropLast().allSatisfy { $0.outcome == .pending })
            // Polls are at least the jittered interval apart.
            for (earlier, later) in zip(polls, polls.dropFirst()) {
                #expect(later.sentEpochMs - earlier.sentEpochMs >= 2_700)
            }
            let snapshot = await fleet.snapshot(of: "stb-1")
            #expect(snapshot?.phase == .authenticated)
            #expect(snapshot?.profile?.userID == "lab-user")
        }
    }
}
