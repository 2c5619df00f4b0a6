import AdobePassClient
import BackendHTTP
import Logging
import NIOCore
import NIOPosix

/// How the daemon reaches its backend: the fleet's event loops, the TLS context, the connection pools within the
/// open-file limit, and what it warns about at start.
extension Daemon {
    /// `count` of NIO's shared loops (nil: all of them, one per core); more than there are repeat loops, which
    /// splits the devices without adding a thread.
    static func fleetLoops(count: Int?) -> [any EventLoop] {
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        return (0..<(count ?? loops.count)).map { loops[$0 % loops.count] }
    }

    /// The TLS context every `https://` backend connection uses, with its files read now: a bad `tls.*` setting stops
    /// the start before the database is touched. nil with a plain-HTTP backend.
    static func tlsContext(_ configuration: DaemonConfiguration, embeddedCA: String?) throws(ConfigurationError) -> TLSClientContext? {
        guard configuration.backendUsesTLS else { return nil }
        var settings = configuration.tls
        // The embedded simulator's own CA, unless the operator named one.
        if settings.caFile == nil, let embeddedCA { settings.caFile = embeddedCA }
        do {
            return try TLSClientContext(settings: settings)
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "tls", reason: error.description)
        }
    }

    /// Every backend connection, by fleet connection model (`connections:`), over plain HTTP or TLS, within what the
    /// open-file limit (raised to its hard limit) leaves.
    static func makeConnectionPools(
        _ configuration: DaemonConfiguration,
        loops: [any EventLoop],
        embeddedCA: String?,
        logger: Logger
    ) throws(ConfigurationError) -> ConnectionPools {
        let tls = try tlsContext(configuration, embeddedCA: embeddedCA)
        let openFiles = OpenFileLimit.raised
        let connectionBudget = ConnectionBudget(limit: DescriptorBudget(limit: openFiles.after, configuration: configuration).fleet)
        let pools = ConnectionPools(
            commonConnections: max(8, configuration.maxConcurrentRequests),
            // A refused connection (or a silent TLS port) fails fast and backs off.
            connectTimeout: .seconds(3),
            loops: loops,
            connectionBudget: connectionBudget,
            tls: tls
        )
        checkConnectionBudget(connectionBudget, openFiles: openFiles, configuration: configuration, logger: logger)
        return pools
    }

    /// Says at start what the operator should know about the wire: devices sharing a client address under a throttling
    /// backend, REST API v1 or the legacy signed header against a remote backend, certificates not checked.
    static func warnAboutTheBackend(_ status: TransportStatus, configuration: DaemonConfiguration, logger: Logger) {
        if let warning = status.sharedAddressWarning {
            logger.warning("\(warning)", metadata: ["backend": "\(configuration.backend ?? "embedded simulator")"])
        }
        for warning in configuration.legacyAPIWarnings {
            logger.warning("\(warning)", metadata: ["backend": "\(configuration.backend ?? "")"])
        }
        if let warning = status.verifyWarning {
            logger.warning("\(warning): any certificate is accepted", metadata: ["backend": "\(configuration.backend ?? "")"])
        }
    }
}
