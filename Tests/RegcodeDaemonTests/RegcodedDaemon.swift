import Logging

@testable import RegcodeDaemon
@testable import regcoded

extension Daemon {
    /// A daemon as `regcoded` builds it: a configuration without `backend` gets the embedded simulator.
    static func asRegcoded(configuration: DaemonConfiguration, environment: [String: String] = [:], logger: Logger) throws -> Daemon {
        try Daemon(configuration: configuration, environment: environment, logger: logger, embeddedBackend: EmbeddedSimulator.factory)
    }
}
