import DeviceEvents
import DeviceFleet
import Logging
import RegcodeEngine
import ServiceLifecycle

/// Acts on the event pipeline's storage health: holds the fleet while the backlog of unstored
/// steps is at its bound and releases it once storage has caught up, and shows trouble in
/// systemd's `STATUS=`. (The pipeline logs the failures themselves; metrics sample ``EventPipeline/health``.)
struct StorageWatchService: Service {
    let pipeline: EventPipeline<ContinuousClock>
    let fleet: PartitionedFleet
    let systemd: SystemdService
    let logger: Logger

    func run() async throws {
        var holding = false
        // The stream ends when the pipeline has stored its last steps; until then holds must be
        // honoured even during shutdown, so this does not stop on graceful shutdown itself.
        for await health in pipeline.healthChanges {
            if health.holding != holding {
                holding = health.holding
                if holding {
                    await fleet.hold(reason: health.summary ?? "storage backlog at its bound")
                } else {
                    await fleet.release()
                }
            }
            systemd.setStorageStatus(health.summary)
        }
        // The pipeline has stored its last steps; returning before the group asks would count
        // as an unexpected end, so wait for the shutdown to reach this service.
        try? await gracefulShutdown()
    }
}
