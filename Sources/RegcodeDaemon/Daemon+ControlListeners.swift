import ControlHTTP
import ControlSocket
import RegcodeSupport
import ServiceLifecycle

extension Daemon {
    /// The control socket (the path, or the descriptor systemd passed) and, with `http`, the HTTP listener with the
    /// console: both answer through `handler`.
    func controlListeners(handler: DaemonControlHandler) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let listener: ControlServer.Listener
        if let fd = SocketActivation.controlDescriptor(environment: environment) {
            SocketActivation.clearEnvironment()
            listener = .fileDescriptor(fd)
            logger.info("serving the socket systemd passed", metadata: ["fd": "\(fd)"])
        } else {
            listener = .path(configuration.socket)
        }
        var serverConfiguration = ControlServer.Configuration(listener: listener)
        if let groupName = configuration.socketGroup {
            guard let gid = ControlServer.groupID(named: groupName) else {
                throw ConfigurationError(file: configuration.configFile, key: "socket_group", reason: "no group named '\(groupName)'")
            }
            serverConfiguration.group = gid
        }
        let systemd = self.systemd
        let server = ControlServer(configuration: serverConfiguration, handler: handler, logger: logger) {
            await systemd.reached(.socketListening)
        }
        guard let http = configuration.http, let address = HostPort.parse(http) else { return [.init(service: server)] }
        var httpConfiguration = HTTPControlServer.Configuration(host: address.host, port: address.port, token: httpToken)
        httpConfiguration.inputLimits = serverConfiguration.inputLimits
        if let eventStreams { httpConfiguration.maxEventStreams = eventStreams.limit }
        let logger = self.logger
        var exposition: (@Sendable () -> String)?
        if let metrics = self.metrics {
            exposition = { metrics.exposition() }
        }
        let onListening: @Sendable (Int) async -> Void = { port in
            let host = address.host.contains(":") ? "[\(address.host)]" : address.host
            let url = "http://\(host):\(port)/"
            logger.notice("console and HTTP API listening", metadata: ["http.url": "\(url)"])
            // Like the activation page: the address a person (or a test, with port 0) needs to know.
            CodePrinter.say("console: \(url)")
        }
        let httpServer = HTTPControlServer(
            configuration: httpConfiguration,
            handler: handler,
            streams: eventStreams,
            metrics: exposition,
            logger: logger,
            onListening: onListening
        )
        return [.init(service: server), .init(service: httpServer)]
    }
}
