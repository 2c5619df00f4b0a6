import RegcodeEngine
import RegcodeTestSupport
import Synchronization
import Testing

@testable import DeviceFleet

/// A device's next backend call goes out only once the steps that led to it are stored, on a manual clock: the
/// registration before the token request, whatever the sink's pace.
@Suite struct StoredBeforeCallTests {
    typealias TestFleet = Fleet

    /// A sink that stores steps only when told (``commit()``), as a slow database would.
    final class SlowStorage: FleetSink {
        private struct State {
            var recorded: [DeviceStep] = []
            var committed = 0
            var waiting: [(target: Int, resume: @Sendable () -> Void)] = []
        }

        private let state = Mutex(State())
        let steps = StepStream()

        func record(_ step: DeviceStep) {
            state.withLock { $0.recorded.append(step) }
            steps.record(step)
        }

        func whenStored(device: String, _ stored: @escaping @Sendable () -> Void) -> Bool {
            state.withLock { state in
                guard let last = state.recorded.lastIndex(where: { $0.device == device }), last >= state.committed else { return false }
                state.waiting.append((last + 1, stored))
                return true
            }
        }

        /// Steps stored so far.
        var committed: Int { state.withLock { $0.committed } }

        /// Every step recorded so far.
        var recorded: [DeviceStep] { state.withLock { $0.recorded } }

        /// Stores every step recorded so far.
        func commit() {
            let released = state.withLock { state in
                state.committed = state.recorded.count
                defer { state.waiting.removeAll { $0.target <= state.committed } }
                return state.waiting.filter { $0.target <= state.committed }
            }
            for waiter in released { waiter.resume() }
        }
    }

    /// Notes how many steps were stored when each call reached the backend.
    final class Witness: BackendExecutor {
        let backend = GatedBackend()
        let storage: SlowStorage
        let seen = Mutex<[(request: BackendRequest, stored: Int)]>([])

        init(storage: SlowStorage) {
            self.storage = storage
        }

        nonisolated(nonsending) func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure> {
            let stored = storage.committed
            seen.withLock { $0.append((request, stored)) }
            return await backend.execute(request, context: context)
        }
    }

    /// A running fleet on slow storage, with device `stb-1` (a software statement, not registered) asked to configure.
    static func withConfiguringDevice(
        writeAhead: WriteAhead = .requests,
        _ body: (TestFleet, SlowStorage, Witness) async throws -> Void
    ) async throws {
        let storage = SlowStorage()
        let witness = Witness(storage: storage)
        let fleet = TestFleet(clock: ManualClock(), timers: .clockSleeps, executor: witness, sink: storage, writeAhead: writeAhead, logger: .quiet)
        try await withRunningFleet(fleet) {
            var settings = DeviceSettings(name: "stb-1", requestor: "REF30")
            settings.softwareStatement = "statement"
            try await fleet.add(.init(settings: settings, deviceID: "id-1", snapshot: DeviceSnapshot(), scenario: .idle, seed: 1))
            try await fleet.send(.setRequestor(signingKeys: nil), to: "stb-1")
            try await body(fleet, storage, witness)
        }
    }

    @Test func theTokenRequestWaitsUntilTheRegistrationIsStored() async throws {
        try await Self.withConfiguringDevice { fleet, storage, witness in
            // The call's own step (the device now configuring) is stored first, then the registration goes out.
            storage.commit()
            let registration = await witness.backend.nextCall()
            #expect(registration.request == .registerClient(softwareStatement: "statement"))
            witness.backend.answer(registration, .success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
            let registered = await storage.steps.nextStep { $0.snapshot?.credentials != nil }
            #expect(registered.device == "stb-1")
            // The token request waits for the registration's step; once it is stored, the request goes out.
            #expect(await fleet.requestsOutstanding == 1)
            storage.commit()
            let token = await witness.backend.nextCall()
            #expect(token.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
            let seen = witness.seen.withLock { $0 }
            #expect(seen.count == 2)
            #expect(seen.last?.stored ?? 0 >= 1, "the token request went out before the registration was stored")
            witness.backend.answer(token, .failure(.transport("test over")))
        }
    }

    /// Write-ahead: the registration's record is stored before the registration goes out, and the step with its
    /// answer removes that record while it stores the token request's.
    @Test func eachCallsRecordIsStoredBeforeItAndItsAnswerSettlesIt() async throws {
        try await Self.withConfiguringDevice { fleet, storage, witness in
            let record = try #require(storage.recorded.last?.sentRequest)
            #expect(record.stage == .registration && record.endpoint == "register" && record.id > 0)
            #expect(await fleet.requestsOutstanding == 1, "the registration waits for its record")
            storage.commit()
            let registration = await witness.backend.nextCall()
            #expect(witness.seen.withLock { $0.first?.stored } == storage.recorded.count)
            witness.backend.answer(registration, .success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
            let answered = await storage.steps.nextStep { $0.answeredRequest != nil }
            #expect(answered.answeredRequest == record.id)
            #expect(answered.requests.map(\.stage) == [.registration])
            let next = try #require(answered.sentRequest)
            #expect(next.stage == .token && next.id > record.id)
            storage.commit()
            let token = await witness.backend.nextCall()
            witness.backend.answer(token, .failure(.transport("test over")))
        }
    }

    /// `write_ahead: none`: no record, and a call waits only for the steps before it.
    @Test func withoutWriteAheadNoCallIsRecorded() async throws {
        try await Self.withConfiguringDevice(writeAhead: .none) { _, storage, witness in
            storage.commit()
            let registration = await witness.backend.nextCall()
            witness.backend.answer(registration, .success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
            let registered = await storage.steps.nextStep { $0.snapshot?.credentials != nil }
            #expect(registered.answeredRequest == nil)
            #expect(storage.recorded.allSatisfy { $0.sentRequest == nil && $0.answeredRequest == nil })
            storage.commit()
            let token = await witness.backend.nextCall()
            witness.backend.answer(token, .failure(.transport("test over")))
        }
    }
}
