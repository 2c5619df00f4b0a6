import ControlSocket

extension Daemon {
    /// What a start must pass before it creates any file (database, lock, simulator state, key, socket, token): a
    /// refused start leaves nothing behind.
    ///
    /// An existing database is locked first, so "in use" is what a second daemon on it (by any path) says. Then the
    /// control socket (bound only in `run()`): a path that cannot work, or one another daemon listens on. Then every
    /// TCP address the daemon will listen on.
    /// - Throws: ``ConfigurationError`` naming the setting (exit 2).
    static func checkBeforeAnyFile(_ configuration: DaemonConfiguration, environment: [String: String]) throws(ConfigurationError) {
        try DatabaseLock.acquire(database: configuration.database, createIfMissing: false)
        if SocketActivation.controlDescriptor(environment: environment) == nil {
            try configuration.checkSocketPath()
            if let problem = ControlServer.inUseProblem(path: configuration.socket) {
                throw ConfigurationError(file: configuration.configFile, key: "socket", reason: problem)
            }
        }
        try ListenAddress.checkAvailable(configuration)
    }
}
