import DeviceEvents
import DeviceFleet
import Foundation
import RegcodeEngine
import ServiceLifecycle

/// On a terminal, one live status line under the codes, redrawn every second; at the end, a summary line.
struct ProgressService: Service {
    let output: TerminalOutput
    let fleet: PartitionedFleet
    let liveStats: LiveStats
    let startedAt: Date

    func run() async throws {
        while !Task.isCancelled {
            let nowSecond = Int64(Date().timeIntervalSince1970)
            let recent = liveStats.recentTotals(nowSecond: nowSecond, seconds: LiveStats.rateSeconds)
            let minute = liveStats.recentTotals(nowSecond: nowSecond, seconds: LiveStats.windowSeconds)
            output.showStatus(
                ProgressLine.status(phases: await fleet.phaseCounts(), recent: recent, rateSeconds: LiveStats.rateSeconds, minute: minute)
            )
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            } catch {
                break
            }
        }
        var totals = LiveStats.Counters()
        for counters in liveStats.counters().values { totals.merge(counters) }
        output.clearStatus()
        let elapsed = Int64(Date().timeIntervalSince(startedAt) * 1000)
        output.line("regcoded: " + ProgressLine.summary(elapsedMs: elapsed, phases: await fleet.phaseCounts(), totals: totals))
    }
}
