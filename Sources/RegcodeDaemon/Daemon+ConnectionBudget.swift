import BackendHTTP
import ControlHTTP
import Logging

extension Daemon {
    /// The most connections the configured fleets can hold open at once: the common pool, every `shared N` pool and
    /// one per `per-device` device of this process's slice.
    static func connectionsNeeded(by configuration: DaemonConfiguration) -> Int {
        let shardCount = configuration.shard?.count ?? 1
        var needed = 0
        var usesCommonPool = false
        for fleet in configuration.fleets {
            switch fleet.connections {
            case .common, .perRequest: usesCommonPool = true
            case .shared(let connections): needed += connections
            case .perDevice: needed += (fleet.count + shardCount - 1) / shardCount
            }
        }
        return needed + (usesCommonPool ? max(8, configuration.maxConcurrentRequests) : 0)
    }

    /// Logs the open-file limit and, when the fleets could need more connections than it leaves them, says so at start
    /// (the connects beyond the budget fail as transport errors, and their devices back off).
    static func checkConnectionBudget(
        _ budget: ConnectionBudget,
        openFiles: (before: Int, after: Int),
        configuration: DaemonConfiguration,
        logger: Logger
    ) {
        let needed = connectionsNeeded(by: configuration)
        let metadata: Logger.Metadata = [
            "open_files.limit": "\(openFiles.after)", "open_files.limit_before": "\(openFiles.before)",
            "connections.budget": "\(budget.limit)", "connections.needed": "\(needed)",
        ]
        if needed > budget.limit {
            logger.warning(
                "the fleets may need more connections than the open-file limit leaves; connects beyond it fail until others close (raise LimitNOFILE)",
                metadata: metadata
            )
        } else {
            logger.debug("open-file limit", metadata: metadata)
        }
    }

    /// The HTTP listener's event streams, capped by `http_max_event_streams` or else by the HTTP listener's share of
    /// the descriptors (``DescriptorBudget/eventStreams``), and never beyond that listener's connection cap; nil
    /// without `http`.
    static func eventStreams(_ configuration: DaemonConfiguration, budget: DescriptorBudget, logger: Logger) -> OpenStreams? {
        guard configuration.http != nil else { return nil }
        if let configured = configuration.httpMaxEventStreams, configured > budget.http {
            logger.warning(
                "http_max_event_streams is more than the HTTP listener may hold; held to its connection cap",
                metadata: ["http_max_event_streams": "\(configured)", "limit": "\(budget.http)"]
            )
        }
        let limit = configuration.httpMaxEventStreams.map { min($0, budget.http) } ?? budget.eventStreams
        return OpenStreams(limit: max(1, limit))
    }
}
