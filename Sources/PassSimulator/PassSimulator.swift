import Hummingbird
import ListenerGuard
import Logging
import Synchronization

/// An in-process Adobe Pass backend: DCR, REST API v2, legacy REST API v1, the second-screen activation pages, fault
/// injection and an admin API, all served on one origin by Hummingbird.
///
/// Embed it in tests or the daemon with ``withRunningServer(_:)``, or run it with ``makeApplication(host:port:onServerRunning:)``.
package final class PassSimulator: Sendable {
    /// The configuration the simulator was created with.
    package let configuration: SimulatorConfiguration
    /// Clients, tokens, codes and profiles; shared by every application built from this simulator.
    package let state: SharedSimulatorState
    let logger: Logger
    let throttle: Throttle?
    let faults: FaultInjector
    let mediaTokens = MediaTokenIssuer()
    let connections = ConnectionCounters()
    /// The listener's cap, counts and timeouts; shared by every application built from this simulator.
    let listener: ListenerGuard
    /// Carries state changes to the state file; `nil` without ``SimulatorConfiguration/statePath``.
    let journal: StateJournal?
    private let stateLoad = Mutex<Task<Void, any Error>?>(nil)

    /// Creates a simulator with empty state; with ``SimulatorConfiguration/statePath``, the state file is loaded
    /// before the first application built from it serves (or by ``loadState()``).
    package init(configuration: SimulatorConfiguration = .init(), logger: Logger = Logger(label: "pass-sim")) {
        self.configuration = configuration
        self.state = SharedSimulatorState(configuration: configuration)
        self.logger = logger
        let limits = ListenerLimits(
            maxConnections: configuration.maxConnections ?? DescriptorLimit.soleListenerCap(forLimit: DescriptorLimit.current),
            idleTimeout: configuration.idleTimeout,
            readTimeout: configuration.readTimeout
        )
        self.listener = ListenerGuard(name: "simulator", limits: limits, logger: logger)
        self.journal = configuration.statePath == nil ? nil : StateJournal(logger: logger)
        self.throttle =
            configuration.throttleEnabled
            ? Throttle(
                burst: configuration.throttleBurst,
                ratePerSecond: configuration.throttleRatePerSecond,
                clock: configuration.clock
            )
            : nil
        self.faults = FaultInjector(configuration: configuration.faults, seed: configuration.faultSeed)
    }

    /// Issues a software statement this simulator accepts (see ``SoftwareStatementKey/issue(softwareId:redirectURIs:clientName:issuedAt:)``),
    /// as `POST /_sim/statements` does.
    package func issueStatement(softwareId: String, redirectURIs: [String] = []) throws(SoftwareStatementKeyError) -> String {
        try self.configuration.statementKey.issue(softwareId: softwareId, redirectURIs: redirectURIs)
    }

    /// The fault-injection settings in force (initially ``SimulatorConfiguration/faults``).
    package var faultConfiguration: FaultConfiguration {
        self.faults.configuration
    }

    /// Replaces the fault-injection settings, as `PUT /_sim/faults` does.
    package func setFaultConfiguration(_ configuration: FaultConfiguration) throws(FaultConfigurationError) {
        try configuration.validate()
        self.faults.replace(configuration)
    }

    /// Opens the state file of ``SimulatorConfiguration/statePath`` (creating it when missing) and loads it; from
    /// then on every state change is written to it. Runs once; later calls wait for, or repeat the outcome of, the
    /// first. Does nothing without a state path.
    /// - Throws: ``SimulatorStateError`` when the file is not a pass-sim state file (it is left untouched) or cannot
    ///   be used.
    package func loadState() async throws(SimulatorStateError) {
        guard let path = self.configuration.statePath, let journal = self.journal else { return }
        let task = self.stateLoad.withLock { task in
            if let task { return task }
            let started = Task { [state = self.state, logger = self.logger] in
                let file = try await StateFile.prepare(path: path, logger: logger)
                let snapshot = try await file.load()
                state.withLock { $0.restore(snapshot, journal: journal) }
                journal.attach(file)
                logger.info(
                    "state loaded",
                    metadata: [
                        "sim.state.path": .string(path), "sim.state.clients": .stringConvertible(snapshot.clients.count),
                        "sim.state.codes": .stringConvertible(snapshot.sessions.count),
                    ]
                )
            }
            task = started
            return started
        }
        do {
            try await task.value
        } catch let error as SimulatorStateError {
            throw error
        } catch {
            throw .cannotOpen(path: path, reason: String(describing: error))
        }
    }

    /// Request, injected-fault and connection counters, as `GET /_sim/stats` reports them.
    package var stats: SimulatorStats {
        var stats = self.faults.stats
        stats.connections = self.connections.snapshot
        stats.peers = self.connections.peers.snapshot
        stats.listener = ListenerStats(self.listener.counters.snapshot)
        stats.oauth = self.state.withLock { $0.oauth.stats }
        return stats
    }

    /// Builds the Hummingbird application listening on `host:port` (port 0 = ephemeral); `onServerRunning` gets the bound port.
    ///
    /// With ``SimulatorConfiguration/tls`` it serves HTTPS (a TLS file that cannot be used makes `run()` throw a
    /// ``SimulatorTLSError``), else plain HTTP/1.1.
    package func makeApplication(
        host: String,
        port: Int,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        var application = Application(
            router: self.makeRouter(),
            server: .simulator(tls: self.configuration.tls, counters: self.connections, listener: self.listener),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), backlog: Int(self.listener.limits.backlog)),
            onServerRunning: { [listener = self.listener] channel in
                try? await listener.install(on: channel)
                await onServerRunning(channel.localAddress?.port ?? port)
            },
            logger: self.logger
        )
        // The state file is loaded before the first request is answered; a file that cannot be used stops the start.
        application.beforeServerStarts { try await self.loadState() }
        return application
    }

    /// Starts on 127.0.0.1 with an ephemeral port, runs `body` with the base URL ("http://127.0.0.1:PORT", or
    /// "https://127.0.0.1:PORT" with ``SimulatorConfiguration/tls``), then shuts the server down.
    package func withRunningServer<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = self.makeApplication(host: "127.0.0.1", port: 0) { port in
            portSink.yield(port)
            portSink.finish()
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Ends the port stream if the server stops before binding, so the wait below cannot hang.
                defer { portSink.finish() }
                try await application.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.next()
                throw PassSimulatorError.serverDidNotStart
            }
            defer { group.cancelAll() }
            let scheme = self.configuration.tls == nil ? "http" : "https"
            return try await body("\(scheme)://127.0.0.1:\(port)")
        }
    }

    func makeRouter() -> Router<SimulatorRequestContext> {
        let router = Router(context: SimulatorRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: ForwardedForCountingMiddleware(peers: self.connections.peers))
        if let journal = self.journal {
            router.add(middleware: DurabilityMiddleware(journal: journal))
        }

        // Faults run outside the throttle: every answer is counted, and an injected fault consumes no token.
        let routes = self.faultedRoutes()
        let faultMiddleware = FaultMiddleware(
            injector: self.faults,
            clock: self.configuration.clock,
            routes: RouteTable(routes.dcrAndV2 + routes.v1 + routes.oauth)
        )
        let trusts = self.configuration.trustForwardedFor
        let api = router.group()
        api.add(middleware: faultMiddleware)
        if let throttle = self.throttle {
            api.add(
                middleware: ThrottleMiddleware(throttle: throttle, key: self.configuration.throttleKey, api: .dcrAndV2, trustsForwardedFor: trusts)
            )
        }
        api.endpoints(routes.dcrAndV2)

        let v1Group = router.group()
        v1Group.add(middleware: faultMiddleware)
        if let throttle = self.throttle {
            v1Group.add(middleware: ThrottleMiddleware(throttle: throttle, key: self.configuration.throttleKey, api: .v1, trustsForwardedFor: trusts))
        }
        v1Group.endpoints(routes.v1)

        let oauthGroup = router.group()
        oauthGroup.add(middleware: faultMiddleware)
        if let throttle = self.throttle {
            oauthGroup.add(
                middleware: ThrottleMiddleware(throttle: throttle, key: self.configuration.throttleKey, api: .oauth, trustsForwardedFor: trusts)
            )
        }
        oauthGroup.endpoints(routes.oauth)
        let v1 = V1Routes(state: self.state, configuration: self.configuration, faults: self.faults, mediaTokens: self.mediaTokens)
        v1.registerBrowser(on: router.group())

        AdminRoutes(state: self.state, faults: self.faults, connections: self.connections, listener: self.listener.counters).register(
            on: router.group("/_sim")
        )
        SSOAdminRoutes(state: self.state).register(on: router.group("/_sim"))
        EntitlementAdminRoutes(state: self.state).register(on: router.group("/_sim"))
        ActivationPages(state: self.state, configuration: self.configuration).register(on: router.group())
        OAuthAdminRoutes(state: self.state).register(on: router.group("/_sim/oauth"))
        OAuthVerificationPages(state: self.state, configuration: self.configuration).register(on: router.group())
        return router
    }

    /// The fault-injected (and throttled) routes: DCR and v2, v1, and the OAuth device flow.
    func faultedRoutes() -> (dcrAndV2: [APIRoute], v1: [APIRoute], oauth: [APIRoute]) {
        let v2 = V2Routes(state: self.state, configuration: self.configuration, faults: self.faults)
        let v1 = V1Routes(state: self.state, configuration: self.configuration, faults: self.faults, mediaTokens: self.mediaTokens)
        let groups: [[APIRoute]] = [
            DCRRoutes(state: self.state, configuration: self.configuration).apiRoutes, v2.apiRoutes,
            V2Decisions(routes: v2, mediaTokens: self.mediaTokens).apiRoutes, PartnerRoutes(routes: v2).apiRoutes,
            ResetTempPassRoutes(routes: v2).apiRoutes, SSOServiceRoutes(routes: v2).apiRoutes,
        ]
        return (groups.flatMap { $0 }, v1.apiRoutes, OAuthRoutes(state: self.state, configuration: self.configuration).apiRoutes)
    }
}

/// Failures of the embedding API.
package enum PassSimulatorError: Error, Sendable {
    /// The server stopped before it was listening (for example, the address could not be bound).
    case serverDidNotStart
}

/// Holds every answer until the state changes made before it are committed to the state file, so an answer never
/// reports a change a crash could still lose. A failed write turns the answer into a 500.
struct DurabilityMiddleware: RouterMiddleware {
    typealias Context = SimulatorRequestContext

    let journal: StateJournal

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            try await self.waitUntilDurable(context)
            throw error
        }
        try await self.waitUntilDurable(context)
        return response
    }

    private func waitUntilDurable(_ context: Context) async throws {
        do {
            try await self.journal.waitUntilDurable()
        } catch {
            context.logger.error("answer withheld: the state file could not be written", metadata: ["error": .string(String(describing: error))])
            throw HTTPError(.internalServerError)
        }
    }
}

/// Logs one line per request at debug level: method, path (never the query, which may carry credentials) and status.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = SimulatorRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            self.log(request, context: context, status: response.status, start: start)
            return response
        } catch let error as any HTTPResponseError {
            self.log(request, context: context, status: error.status, start: start)
            throw error
        }
    }

    private func log(_ request: Request, context: Context, status: HTTPResponse.Status, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        context.logger.debug(
            "request",
            metadata: [
                "http.method": .string(request.method.rawValue),
                "http.path": .string(request.uri.path),
                "http.status": .stringConvertible(status.code),
                "http.duration_us": .stringConvertible(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000),
            ]
        )
    }
}
