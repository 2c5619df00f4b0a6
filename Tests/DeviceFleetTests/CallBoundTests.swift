import AccessEnablerAPI
import RegcodeEngine
import RegcodeTestSupport
import Testing

@testable import DeviceFleet

/// The per-device bound on waiting calls never wedges a device, on a manual clock: past the bound a call that would
/// wait is refused (and said on the event stream), `setRequestor` is still accepted, and the calls that waited are
/// answered in order once it completes.
@Suite struct CallBoundTests {
    typealias TestFleet = Fleet

    /// An unconfigured device (no MVPD list: calls wait for `setRequestor`) that starts no calls of its own.
    static func unconfigured(_ name: String) -> TestFleet.DeviceSpec {
        var settings = DeviceSettings(name: name, requestor: "REF30")
        settings.softwareStatement = "statement"
        return TestFleet.DeviceSpec(settings: settings, deviceID: "id-\(name)", snapshot: DeviceSnapshot(), scenario: .idle, seed: 1)
    }

    @Test func setRequestorIsAcceptedPastTheBoundAndTheQueuedCallsAreAnsweredInOrder() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, maxPendingPerDevice: 256, logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(Self.unconfigured("stb-1"))
            for index in 0..<256 {
                try await fleet.send(.checkAuthorization(resource: "r\(index)"), to: "stb-1")
            }
            // The 257th waiting call is refused, and the app sees why on the event stream.
            await #expect(throws: FleetError.busy(device: "stb-1", pending: 256)) {
                try await fleet.send(.checkAuthorization(resource: "r256"), to: "stb-1")
            }
            let refusal = await sink.nextStep { step in step.events.contains { $0.name == "queue.callRefused" } }
            #expect(refusal.events == [.callRefused(.checkAuthorization, waiting: 256, limit: 256)])
            // setRequestor releases the queue: never refused by the bound.
            try await fleet.send(.setRequestor(signingKeys: nil), to: "stb-1")
            #expect(await fleet.pendingWork(of: "stb-1") == 256)
            // A DCR device registers and fetches its token first.
            var call = await backend.nextCall()
            while call.request != .configuration {
                switch call.request {
                case .registerClient:
                    backend.answer(call, .success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
                default:
                    backend.answer(call, .success(.accessToken(token: "token-1", expiresIn: .seconds(3_600))))
                }
                call = await backend.nextCall()
            }
            backend.answer(call, .success(.configuration(mvpds: [MVPD(id: "Cablevision", displayName: "Optimum")])))
            let answered = await sink.nextStep { step in step.events.contains { $0 == .setRequestorComplete(AccessEnabler.statusSuccess) } }
            let failed = answered.events.compactMap { event -> String? in
                if case .tokenRequestFailed(let resource, _, _) = event { return resource }
                return nil
            }
            #expect(failed == (0..<256).map { "r\($0)" })
            #expect(await fleet.pendingWork(of: "stb-1") == 0)
        }
    }

    @Test func floodsOfSetRequestorStayBounded() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: StepStream(), maxPendingPerDevice: 8, logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(Self.unconfigured("stb-1"))
            for _ in 0..<8 { try await fleet.send(.checkAuthentication, to: "stb-1") }
            // The first is sent, the second waits behind it and releases the queue as well: a third is refused.
            try await fleet.send(.setRequestor(signingKeys: nil), to: "stb-1")
            try await fleet.send(.setRequestor(signingKeys: nil), to: "stb-1")
            await #expect(throws: FleetError.busy(device: "stb-1", pending: 8)) {
                try await fleet.send(.setRequestor(signingKeys: nil), to: "stb-1")
            }
            // Calls answered at once are never refused.
            try await fleet.send(.getSelectedProvider, to: "stb-1")
            try await fleet.send(.setOptions(["visitorID": "v"]), to: "stb-1")
            #expect(await fleet.pendingWork(of: "stb-1") == 9)
            backend.answer(await backend.nextCall(), .success(.configuration(mvpds: [])))
            backend.answer(await backend.nextCall(), .success(.configuration(mvpds: [])))
        }
    }
}
