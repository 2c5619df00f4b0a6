import Testing

@testable import RegcodeDaemon

@Suite struct LiveStatsTests {
    /// A day of a large fleet records hundreds of thousands of batches; releasing the figures afterwards
    /// must not walk a chain as long as the run (it once overflowed the stack when the daemon exited).
    @Test func manyBatchesLeaveNothingThatGrowsWithTheRun() {
        do {
            let stats = LiveStats()
            stats.setFleetResolver { device in device.hasPrefix("lab-") ? "lab" : nil }
            for _ in 0..<400_000 {
                stats.record([])
            }
        }
    }
}
