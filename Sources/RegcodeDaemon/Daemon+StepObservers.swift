import DeviceEvents
import DeviceRegistry
import RegcodeEngine
import RegcodeStore

extension Daemon {
    /// What watches the steps the pipeline stores: live figures always, the printed codes and the metrics when on, the
    /// hint about the unsigned lab statement when fleets send it.
    static func stepObservers(
        _ configuration: DaemonConfiguration,
        activationURL: SharedValue<String?>,
        liveStats: LiveStats,
        hint: UnsignedStatementHint?
    ) -> (observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void], metrics: RegcodeMetrics?) {
        var observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void] = [{ steps, _ in liveStats.record(steps) }]
        if let hint { observers.append { steps, _ in hint.record(steps) } }
        if configuration.printsCodes {
            let logins = PrintedLogins()
            observers.append { steps, _ in CodePrinter.print(steps, activationURL: activationURL.value, logins: logins) }
        }
        guard configuration.metrics != nil else { return (observers, nil) }
        let metrics = RegcodeMetrics(shard: configuration.shard)
        observers.append { steps, _ in metrics.record(steps) }
        return (observers, metrics)
    }
}
