import Logging
import RegcodeStore

extension Daemon {
    /// Opens the database (after its lock is held) and binds it to this daemon's shard: a file that is not ours, a
    /// newer schema, an unusable path or another slice's database is the operator's setting to fix.
    static func openStore(_ configuration: DaemonConfiguration, logger: Logger) throws -> RegcodeStore {
        let store: RegcodeStore
        do {
            // Checkpoints off the commit path: a commit that checkpoints delays its events (CheckpointService).
            store = try RegcodeStore(path: configuration.database, walCheckpoints: .background, pollIndex: configuration.pollIndex, logger: logger)
        } catch let error as RegcodeStoreError {
            throw ConfigurationError(file: configuration.configFile, key: "database", reason: error.description)
        }
        // Before any device is reconciled: another slice would remove this one's devices.
        try bindShard(store: store, configuration: configuration)
        return store
    }
}
