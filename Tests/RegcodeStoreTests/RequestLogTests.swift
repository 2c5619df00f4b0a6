import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

@Suite struct RequestLogTests {
    @Test func applyStoresEveryRequestInOrderWithItsStep() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        let registration429 = request(.registration, at: t0, status: 429, outcome: .throttled, errorCode: "too_many_requests", retryDelayMs: 2_000)
        let registration = request(.registration, at: t0 + 2_010, status: 201)
        let token = request(.token, at: t0 + 2_010)
        let transport = request(.configuration, at: t0 + 5, status: nil, outcome: .transportError, retryDelayMs: 500)
        let session = request(.session, at: t0 + 3_000, status: 503, outcome: .serverError)
        let stored = try await store.apply([
            DeviceStep(device: "stb-1", requests: [registration429], epochMs: t0),
            DeviceStep(device: "stb-2", requests: [transport], events: [.setRequestorComplete(0)], epochMs: t0 + 5),
            // Two requests of one step with the same send time keep their order.
            DeviceStep(
                device: "stb-1",
                snapshot: pollingSnapshot(code: "C1", expires: t0 + 60_000),
                polls: [poll("C1", at: t0 + 2_500)],
                requests: [registration, token],
                epochMs: t0 + 2_500
            ),
            DeviceStep(device: "gone", requests: [session], epochMs: t0 + 3_000),
        ])
        #expect(stored.map(\.seq) == [1])
        #expect(
            try await store.requestAttempts(device: nil, sinceEpochMs: nil) == [
                StoredRequestAttempt(device: "stb-1", attempt: registration429),
                StoredRequestAttempt(device: "stb-2", attempt: transport),
                StoredRequestAttempt(device: "stb-1", attempt: registration),
                StoredRequestAttempt(device: "stb-1", attempt: token),
                StoredRequestAttempt(device: "gone", attempt: session),
            ]
        )
        #expect(try await store.requestAttempts(device: "stb-1", sinceEpochMs: nil).map(\.attempt) == [registration429, registration, token])
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: t0 + 2_010).map(\.attempt) == [registration, token, session])
        #expect(try await store.requestAttempts(device: "stb-2", sinceEpochMs: t0 + 6).isEmpty)
        // The columns hold what the schema says, NULL where a value is absent.
        #expect(
            try SQLiteShell.run(
                path,
                "SELECT device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms FROM request_attempts ORDER BY id LIMIT 2"
            )
                == """
                stb-1|registration|registration-endpoint|\(t0)|429|7.25|throttled|too_many_requests|2000
                stb-2|configuration|configuration-endpoint|\(t0 + 5)||7.25|transport-error||500
                """
        )
        #expect(try await store.pollAttempts(device: nil, sinceEpochMs: nil).count == 1)
    }

    @Test func aFailingBatchStoresNoRequests() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        try SQLiteShell.run(path, "CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'refused'); END")
        await #expect(throws: (any Error).self) {
            try await store.apply([
                DeviceStep(device: "stb-1", requests: [request(.token, at: t0)], epochMs: t0),
                DeviceStep(device: "stb-1", requests: [request(.session, at: t0 + 1)], events: [.setRequestorComplete(1)], epochMs: t0 + 1),
            ])
        }
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: nil).isEmpty)
    }

    @Test func removingADeviceKeepsItsRequests() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        _ = try await store.apply([DeviceStep(device: "stb-1", requests: [request(.registration, at: t0)], epochMs: t0)])
        #expect(try await store.removeDevice(named: "stb-1"))
        #expect(try await store.requestAttempts(device: "stb-1", sinceEpochMs: nil).count == 1)
    }

    @Test func retentionPrunesRequestsWithThePollLog() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        // Enough old rows to take several delete batches.
        var steps: [DeviceStep] = []
        for index in 0..<12_000 {
            let time = t0 + Int64(index)
            steps.append(DeviceStep(device: "stb-1", requests: [request(.token, at: time)], epochMs: time))
        }
        steps.append(
            DeviceStep(
                device: "stb-1",
                polls: [poll("C", at: t0 + 50_000)],
                requests: [request(.session, at: t0 + 50_000)],
                events: [.setRequestorComplete(1)],
                epochMs: t0 + 50_000
            )
        )
        _ = try await store.apply(steps)

        // The event cutoff alone leaves the request log alone.
        let eventsOnly = try await store.prune(pollAttemptsBefore: nil, eventsBefore: t0 + 100_000)
        #expect(eventsOnly == (0, 0, 1))
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: nil).count == 12_001)

        let pruned = try await store.prune(pollAttemptsBefore: t0 + 20_000, eventsBefore: nil)
        #expect(pruned.requests == 12_000)
        #expect(pruned.polls == 0)
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: nil).map(\.attempt.sentEpochMs) == [t0 + 50_000])
        #expect(try await store.pollAttempts(device: nil, sinceEpochMs: nil).count == 1)
    }
}

@Suite struct ClientAddressTests {
    @Test func addressesAreAssignedOnceToDevicesWithoutOne() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        var third = makeDevice("stb-3")
        third.clientAddress = "198.18.0.3"
        try await store.saveDevice(third)
        #expect(try await store.clientAddresses() == ["stb-3": "198.18.0.3"])

        let assigned = try await store.assignClientAddresses(["stb-1": "198.18.0.1", "stb-3": "198.18.0.99", "ghost": "198.18.0.4"])
        #expect(assigned == ["stb-1"])
        #expect(try await store.clientAddresses() == ["stb-1": "198.18.0.1", "stb-3": "198.18.0.3"])
        #expect(try await store.assignClientAddresses(["stb-1": "198.18.0.7"]).isEmpty)
        #expect(try await store.assignClientAddresses([:]).isEmpty)

        let loaded = try await store.loadDevices()
        #expect(loaded.map(\.clientAddress) == ["198.18.0.1", nil, "198.18.0.3"])
        #expect(try await store.deviceRecordSummaries().map(\.clientAddress) == ["198.18.0.1", nil, "198.18.0.3"])
        #expect(try SQLiteShell.run(path, "SELECT client_address FROM devices WHERE name = 'stb-1'") == "198.18.0.1")
    }

    @Test func savingARecordWithoutAnAddressKeepsTheStoredOne() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.assignClientAddresses(["stb-1": "198.18.0.1"])
        // A record made before the address was assigned.
        try await store.saveDevice(makeDevice("stb-1"))
        #expect(try await store.clientAddresses() == ["stb-1": "198.18.0.1"])
        var moved = makeDevice("stb-1")
        moved.clientAddress = "198.18.0.2"
        try await store.saveDevice(moved)
        #expect(try await store.loadDevices().map(\.clientAddress) == ["198.18.0.2"])
    }

    @Test func anAddressBelongsToOneDevice() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        try await store.saveDevice(makeDevice("stb-3"))
        try await store.assignClientAddresses(["stb-1": "198.18.0.1"])

        let taken = await #expect(throws: RegcodeStoreError.self) {
            try await store.assignClientAddresses(["stb-2": "198.18.0.2", "stb-3": "198.18.0.1"])
        }
        #expect(taken == .clientAddressInUse(address: "198.18.0.1", device: "stb-1"))
        // Nothing of the failed call was written.
        #expect(try await store.clientAddresses() == ["stb-1": "198.18.0.1"])

        let twice = await #expect(throws: RegcodeStoreError.self) {
            try await store.assignClientAddresses(["stb-2": "198.18.0.9", "stb-3": "198.18.0.9"])
        }
        #expect(twice == .clientAddressInUse(address: "198.18.0.9", device: "stb-2"))
        #expect(try await store.clientAddresses() == ["stb-1": "198.18.0.1"])

        var copy = makeDevice("stb-2")
        copy.clientAddress = "198.18.0.1"
        let saved = await #expect(throws: RegcodeStoreError.self) { try await store.saveDevice(copy) }
        #expect(saved == .clientAddressInUse(address: "198.18.0.1", device: "stb-1"))
        #expect(saved?.description.contains("198.18.0.1") == true)

        // Removing a device frees its address.
        #expect(try await store.removeDevice(named: "stb-1"))
        try await store.saveDevice(copy)
        #expect(try await store.clientAddresses() == ["stb-2": "198.18.0.1"])
    }

    @Test func reportsSeeCodesIssuedAndState() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        _ = try await store.apply([
            DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "A", expires: t0 + 60_000), epochMs: t0),
            DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "B", expires: t0 + 120_000), epochMs: t0 + 1),
        ])
        let summaries = try await store.deviceRecordSummaries()
        #expect(summaries.map(\.name) == ["stb-1", "stb-2"])
        #expect(summaries.map(\.codesIssued) == [2, 0])
        #expect(summaries.map(\.state) == [.polling, .new])
        #expect(summaries.first?.fleet == nil)
    }
}
