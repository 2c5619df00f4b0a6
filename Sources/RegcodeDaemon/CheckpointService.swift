import Logging
import RegcodeStore
import ServiceLifecycle

/// Moves the database's write-ahead log into the file on a schedule, off the commit path.
///
/// SQLite's own checkpoint runs inside whichever commit crosses ~1,000 pages and syncs the disk twice,
/// which delays that batch's events by tens of milliseconds; here the store's writer never checkpoints
/// and this service does it on a connection of its own (see ``RegcodeStore/WALCheckpoints``).
struct CheckpointService: Service {
    let store: RegcodeStore
    let logger: Logger
    var period: Duration = .seconds(1)

    func run() async throws {
        var failing = false
        while !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: period) }
            } catch {
                // Stopping: the store's last connection to close checkpoints what is left.
                return
            }
            do {
                let (frames, copied) = try await store.checkpoint()
                if failing {
                    failing = false
                    logger.notice("database checkpoints succeed again")
                }
                logger.trace("database checkpoint", metadata: ["wal_frames": "\(frames)", "checkpointed": "\(copied)"])
            } catch {
                // A checkpoint can fail while storage is in trouble; the pipeline reports that, so say it once.
                if !failing {
                    failing = true
                    logger.warning("database checkpoint failed; retrying every period", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
