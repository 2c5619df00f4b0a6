import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import RegcodeTestSupport
import Testing

@Suite struct EventLogTests {
    @Test func sequenceIsGapFreeAcrossAppliesAndReopening() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        var all: [StoredEvent] = []
        do {
            let store = try openStore(path)
            #expect(try await store.lastEventSequence() == 0)
            try await store.saveDevice(makeDevice("stb-1"))
            all += try await store.apply([
                DeviceStep(
                    device: "stb-1",
                    events: [.setRequestorComplete(1), .setAuthenticationStatus(0, "User Not Authenticated Error")],
                    epochMs: t0
                ),
                DeviceStep(device: "stb-1", polls: [poll("C", at: t0)], epochMs: t0 + 1),
                DeviceStep(device: "stb-1", events: [.sendTrackingData(.mvpdSelection, ["Cablevision", "None"])], epochMs: t0 + 2),
            ])
            #expect(try await store.apply([]).isEmpty)
            all += try await store.apply([DeviceStep(device: "stb-1", events: [.selectedProvider(nil)], epochMs: t0 + 3)])
            #expect(try await store.lastEventSequence() == 4)
        }
        let store = try openStore(path)
        #expect(try await store.lastEventSequence() == 4)
        all += try await store.apply([DeviceStep(device: "stb-2", events: [.setRequestorComplete(1)], epochMs: t0 + 4)])

        #expect(all.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(all.map(\.time) == [t0, t0, t0 + 2, t0 + 3, t0 + 4])
        #expect(try await store.events(after: 0, devices: nil, names: nil, limit: 100) == all)
    }

    @Test func argumentsAreCompactSortedJSONAndRoundTrip() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        let args: [String: JSONValue] = [
            "zeta": .string("https://example.com/a"),
            "alpha": .int(1),
            "flag": .bool(true),
            "ratio": .double(0.25),
            "none": .null,
            "nested": .object(["b": .array([.int(2), .string("x")]), "a": .bool(false)]),
        ]
        // Events are typed: arbitrary JSON reaches the log as the metadata of `setMetadataStatus`.
        let event = DeviceEvent.setMetadataStatus(.object(args), encrypted: false, key: 3, arguments: .null)
        let stored = try await store.apply([DeviceStep(device: "stb-1", events: [event], epochMs: t0)])
        #expect(stored == [StoredEvent(seq: 1, device: "stb-1", time: t0, name: "setMetadataStatus", args: event.args)])
        #expect(try await store.events(after: 0, devices: nil, names: nil, limit: 1) == stored)
        #expect(
            try SQLiteShell.run(path, "SELECT args FROM events") == #"""
                {"arguments":null,"encrypted":false,"key":3,"metadata":{"alpha":1,"flag":true,"nested":{"a":false,"b":[2,"x"]},"none":null,"ratio":0.25,"zeta":"https://example.com/a"}}
                """#
        )
    }

    @Test func eventsFilterByDeviceNameAndLimit() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        _ = try await store.apply([
            DeviceStep(device: "stb-1", events: [.setRequestorComplete(1)], epochMs: t0),  // 1
            DeviceStep(device: "stb-2", events: [.setRequestorComplete(1)], epochMs: t0),  // 2
            DeviceStep(device: "stb-1", events: [.setAuthenticationStatus(1, "")], epochMs: t0 + 1),  // 3
            DeviceStep(device: "stb-3", events: [.setAuthenticationStatus(0, "x")], epochMs: t0 + 2),  // 4
            DeviceStep(device: "stb-2", events: [.selectedProvider(nil)], epochMs: t0 + 3),  // 5
        ])
        func seqs(after: Int64 = 0, _ devices: Set<String>?, _ names: Set<String>?, limit: Int = 100) async throws -> [Int64] {
            try await store.events(after: after, devices: devices, names: names, limit: limit).map(\.seq)
        }
        #expect(try await seqs(nil, nil) == [1, 2, 3, 4, 5])
        #expect(try await seqs(after: 2, nil, nil) == [3, 4, 5])
        #expect(try await seqs(nil, nil, limit: 2) == [1, 2])
        #expect(try await seqs(after: 1, nil, nil, limit: 2) == [2, 3])
        #expect(try await seqs(["stb-1"], nil) == [1, 3])
        #expect(try await seqs(["stb-1", "stb-3"], nil) == [1, 3, 4])
        #expect(try await seqs(nil, ["setAuthenticationStatus"]) == [3, 4])
        #expect(try await seqs(["stb-2"], ["setRequestorComplete", "selectedProvider"]) == [2, 5])
        #expect(try await seqs(["stb-2"], ["setAuthenticationStatus"]).isEmpty)
        #expect(try await seqs([], nil).isEmpty)
        #expect(try await seqs(nil, []).isEmpty)
        #expect(try await seqs(nil, nil, limit: 0).isEmpty)
        #expect(try await seqs(Set((0..<5_000).map { "stb-\($0)" }), nil) == [1, 2, 3, 4, 5])
    }

    @Test func pruneDeletesOldRowsAndSequenceContinues() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        // Enough old rows to take several delete batches.
        var steps: [DeviceStep] = []
        for index in 0..<12_000 {
            let time = t0 + Int64(index)
            steps.append(DeviceStep(device: "stb-1", polls: [poll("C", at: time)], events: [.setRequestorComplete(1)], epochMs: time))
        }
        steps.append(DeviceStep(device: "stb-1", polls: [poll("C", at: t0 + 50_000)], events: [.setRequestorComplete(0)], epochMs: t0 + 50_000))
        _ = try await store.apply(steps)

        let pruned = try await store.prune(pollAttemptsBefore: t0 + 20_000, eventsBefore: t0 + 20_000)
        #expect(pruned.polls == 12_000)
        #expect(pruned.events == 12_000)
        #expect(try await store.pollAttempts(device: nil, sinceEpochMs: nil).map(\.attempt.sentEpochMs) == [t0 + 50_000])
        #expect(try await store.events(after: 0, devices: nil, names: nil, limit: 10).map(\.seq) == [12_001])
        #expect(try await store.prune(pollAttemptsBefore: nil, eventsBefore: nil) == (0, 0, 0))

        // Prune everything: numbering still continues after the old maximum, also after reopening.
        #expect(try await store.prune(pollAttemptsBefore: nil, eventsBefore: t0 + 100_000).events == 1)
        #expect(try await store.lastEventSequence() == 12_001)
        let next = try await store.apply([DeviceStep(device: "stb-1", events: [.selectedProvider(nil)], epochMs: t0 + 60_000)])
        #expect(next.map(\.seq) == [12_002])
        let reopened = try openStore(path)
        _ = try await reopened.prune(pollAttemptsBefore: nil, eventsBefore: t0 + 100_000)
        let after = try await reopened.apply([DeviceStep(device: "stb-1", events: [.selectedProvider(nil)], epochMs: t0 + 70_000)])
        #expect(after.map(\.seq) == [12_003])
        #expect(try await reopened.pollAttempts(device: nil, sinceEpochMs: nil).count == 1)
    }

    @Test func largeBatchAppliesInOneCall() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        let deviceCount = 200
        for index in 0..<deviceCount {
            try await store.saveDevice(makeDevice("stb-\(index)"))
        }
        var steps: [DeviceStep] = []
        for index in 0..<2_000 {
            let device = "stb-\(index % deviceCount)"
            let time = t0 + Int64(index)
            var step = DeviceStep(device: device, polls: [poll("CODE\(index % deviceCount)", at: time)], epochMs: time)
            if index < deviceCount {
                step.snapshot = pollingSnapshot(code: "CODE\(index)", expires: t0 + 600_000)
                step.events = [.sendTrackingData(.mvpdSelection, ["Cablevision"])]
            }
            steps.append(step)
        }
        let stored = try await store.apply(steps)
        #expect(stored.count == deviceCount)
        #expect(stored.map(\.seq) == Array(1...Int64(deviceCount)))
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM poll_attempts") == "2000")
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM codes WHERE status = 'pending'") == "\(deviceCount)")
        let summaries = try await store.deviceSummaries()
        #expect(summaries.count == deviceCount)
        #expect(summaries.allSatisfy { $0.pollsForCode == 10 && $0.state == .polling })
    }
}
