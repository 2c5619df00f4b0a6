import Foundation
import RegcodeEngine
import RegcodeStore
import Testing

/// A database keeps the shard it was first run as (`daemon_settings`).
@Suite struct ShardBindingTests {
    @Test func aNewDatabaseTakesItsFirstShardAndRefusesAnyOther() throws {
        let directory = try TempDirectory()
        let path = directory.path("shard.sqlite")
        do {
            let store = try openStore(path)
            #expect(try store.bindShard("0/3") == .bound)
            #expect(try store.bindShard("0/3") == .bound)
            #expect(try store.bindShard("1/3") == .mismatch(stored: "0/3"))
            #expect(try store.bindShard("0/2") == .mismatch(stored: "0/3"))
            #expect(try store.bindShard(nil) == .mismatch(stored: "0/3"))
        }
        // Reopened: the binding is in the file.
        #expect(try openStore(path).bindShard("2/3") == .mismatch(stored: "0/3"))
    }

    @Test func aDatabaseWithConfiguredDevicesAndNoShardIsUnsharded() async throws {
        let directory = try TempDirectory()
        let store = try openStore(directory.path("whole.sqlite"))
        try await store.saveDevice(makeDevice("stb-1"))
        #expect(try store.bindShard(nil) == .bound)
        #expect(try store.bindShard("0/3") == .mismatch(stored: nil))
    }

    @Test func devicesAddedOverTheSocketDoNotBindADatabase() async throws {
        let directory = try TempDirectory()
        let store = try openStore(directory.path("runtime.sqlite"))
        var device = makeDevice("bench-1")
        device.addedAtRuntime = true
        try await store.saveDevice(device)
        #expect(try store.bindShard(nil) == .bound)
        #expect(try store.bindShard("1/2") == .bound)
        #expect(try store.bindShard("0/2") == .mismatch(stored: "1/2"))
    }
}
