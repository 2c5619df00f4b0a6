import DeviceFleet
import RegcodeEngine

/// Runs `fleet` as its service does (calls and timers are child tasks of `run()`) around `body`,
/// then stops it and waits for `run()` to return.
func withRunningFleet<T: Sendable>(
    _ fleet: Fleet,
    _ body: () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await fleet.run() }
        let result: T
        do {
            result = try await body()
        } catch {
            await fleet.stop()
            throw error
        }
        await fleet.stop()
        try await group.waitForAll()
        return result
    }
}
