import ControlHTTP
import ControlSocket
import ListenerGuard
import RegcodeSupport
import ServiceLifecycle

extension Daemon {
    /// The control socket (the path, or the descriptor systemd passed) and, with `http`, the HTTP listener with the
    /// console: both answer through `handler`.
    func controlListeners(handler: ControlMethodsHandler) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let listener: ControlServer.Listener
        if let fd = SocketActivation.controlDescriptor(environment: environment) {
            SocketActivation.clearEnvironment()
            listener = .fileDescriptor(fd)
            logger.info("serving the socket systemd passed", metadata: ["fd": "\(fd)"])
        } else {
            listener = .path(configuration.socket)
        }
        var serverConfiguration = ControlServer.Configuration(listener: listener)
        serverConfiguration.limits = listenerLimits(maxConnections: descriptorBudget.control)
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
        listeners.value.append(server.listenerCounters)
        guard let http = configuration.http, let address = HostPort.parse(http) else { return [.init(service: server)] }
        var httpConfiguration = HTTPControlServer.Configuration(host: address.host, port: address.port, token: httpToken?.value)
        httpConfiguration.inputLimits = serverConfiguration.inputLimits
        if let eventStreams { httpConfiguration.maxEventStreams = eventStreams.limit }
        httpConfiguration.limits = listenerLimits(maxConnections: descriptorBudget.http)
        let logger = self.logger
        var exposition: (@Sendable () -> String)?
        if let metrics = self.metrics {
            exposition = { metrics.exposition() }
        }
        // Written before the listener starts, so a client that sees the console line finds the token.
        let token = httpToken
        if let token, let path = token.generatedFile { try token.write(to: path) }
        let onListening: @Sendable (Int) async -> Void = { port in
            let host = address.host.contains(":") ? "[\(address.host)]" : address.host
            let url = "http://\(host):\(port)/"
            logger.notice("console and HTTP API listening", metadata: ["http.url": "\(url)", "http.token_file": "\(token?.generatedFile ?? "")"])
            // Like the activation page: the address a person (or a test, with port 0) needs to know. A generated token
            // goes with it, in the fragment (the browser never sends it; the console keeps it in sessionStorage).
            let fragment = token?.generatedFile != nil ? "#token=\(token?.value ?? "")" : ""
            CodePrinter.say("console: \(url)\(fragment)")
        }
        let httpServer = HTTPControlServer(
            configuration: httpConfiguration,
            handler: handler,
            streams: eventStreams,
            metrics: exposition,
            logger: logger,
            onListening: onListening
        )
        listeners.value.append(httpServer.listenerGuard.counters)
        return [.init(service: server), .init(service: httpServer)]
    }

    /// A listener's limits: `maxConnections` from the descriptor budget, the configured idle and read timeouts.
    func listenerLimits(maxConnections: Int) -> ListenerLimits {
        ListenerLimits(maxConnections: maxConnections, idleTimeout: configuration.idleTimeout, readTimeout: configuration.readTimeout)
    }
}
