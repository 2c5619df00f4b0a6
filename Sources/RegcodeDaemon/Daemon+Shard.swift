import DeviceRegistry
import RegcodeStore

extension Daemon {
    /// Binds a new database to the configured shard, or refuses (exit 2) a database made for another
    /// slice: reconciling it would remove that slice's devices — identities, credentials, codes — and
    /// create this one's, a change nobody asked for. `0/1` is the same as no shard.
    static func bindShard(store: RegcodeStore, configuration: DaemonConfiguration) throws {
        let wanted = configuration.shard.flatMap { $0.count > 1 ? $0.description : nil }
        let binding: ShardBinding
        do {
            binding = try store.bindShard(wanted)
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "database", reason: "\(configuration.database): \(error)")
        }
        guard case .mismatch(let stored) = binding else { return }
        let holds = stored.map { "holds the devices of shard \($0)" } ?? "holds an unsharded fleet"
        let startedAs = wanted.map { "started as shard \($0)" } ?? "started without --shard"
        let fix = stored.map { "start it with --shard \($0)" } ?? "start it without --shard"
        throw ConfigurationError(
            file: configuration.configFile,
            key: "shard",
            reason: "\(configuration.database) \(holds); \(startedAs) it would remove them: \(fix), or give this shard its own database"
        )
    }
}
