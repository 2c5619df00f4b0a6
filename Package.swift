// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "regcoded",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Small pure helpers several targets share: JSON value and writer, duration grammar, HOST:PORT,
        // HTML escaping, the seeded RNG.
        .target(
            name: "RegcodeSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The AccessEnabler vocabulary: callback names, status ids, error strings, tracking events.
        .target(
            name: "AccessEnablerAPI",
            swiftSettings: swiftSettings
        ),
        // The values of the poll and request logs: poll and request outcomes, request stages. The engine records
        // them, the store keeps them as text, the soak report reads them.
        .target(
            name: "RegcodeRecords",
            swiftSettings: swiftSettings
        ),
        // The OAuth 2.0 device grant's shared vocabulary (RFC 8628): the provider rules table, client authentication
        // methods, token errors and wire types. The client (OAuthDeviceClient) and the simulator both read it.
        .target(
            name: "OAuthDeviceGrant",
            swiftSettings: swiftSettings
        ),
        // The OAuth 2.0 device authorization grant client (RFC 8628) as a sans-IO state machine: discovery, device
        // authorization, polling with slow_down, refresh with rotation, revocation; client authentication including
        // private_key_jwt (RFC 7523, swift-crypto).
        .target(
            name: "OAuthDeviceClient",
            dependencies: [
                "OAuthDeviceGrant",
                // DeviceClock / DeviceInstant and PollPolicy's bounded back-off; the engine's actions, which
                // OAuthDeviceEngine translates the machine's into for the fleet.
                "RegcodeEngine",
                "RegcodeRecords",
                "RegcodeSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                // RS256 client assertions (RSA is only in swift-crypto's extras module).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure, sans-IO device state machine: commands, HTTP results and timer fires in, actions out.
        .target(
            name: "RegcodeEngine",
            dependencies: [
                "AccessEnablerAPI",
                // An OAuth device's events, snapshot and settings are carried by the engine's types.
                "OAuthDeviceGrant",
                "RegcodeRecords",
                "RegcodeSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The one HTTP transport: exchanges over pooled persistent connections to one origin, plain HTTP/1.1, or TLS
        // with HTTP/2 when offered (SwiftNIO's codecs, swift-nio-ssl, swift-nio-http2; certificates checked by
        // swift-certificates).
        .target(
            name: "BackendHTTP",
            dependencies: [
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // Adobe Pass REST v2 / DCR / v1 client over BackendHTTP; executes the engine's requests.
        .target(
            name: "AdobePassClient",
            dependencies: [
                "BackendHTTP",
                "RegcodeSupport",
                "RegcodeEngine",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Drives many engines in one process: one timer heap, bounded backend concurrency, a Service.
        .target(
            name: "DeviceFleet",
            dependencies: [
                "OAuthDeviceClient",
                "AccessEnablerAPI",
                "RegcodeEngine",
                "RegcodeSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // An event loop as a task executor: a connection's task runs where its channel does.
        .target(
            name: "EventLoopExecutor",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // What bounds every listener: a connection cap from the descriptor budget, accept back-off, idle and read
        // timeouts, and a log that rate-limits its own repeats.
        .target(
            name: "ListenerGuard",
            dependencies: [
                "RegcodeSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Adobe Pass backend simulator (Hummingbird 2), embeddable in-process.
        .target(
            name: "PassSimulator",
            dependencies: [
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "ListenerGuard",
                "RegcodeSupport",
                "EventLoopExecutor",
                // The OAuth device flow's provider rows and wire types, shared with the client.
                "OAuthDeviceGrant",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Its HTTP/1.1 channel, wrapped to run each connection on its event loop.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RS256 service tokens (RSA is only in swift-crypto's extras module).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                // The request context keeps the connection (peer address on demand, the `drop` fault).
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPS (http/1.1 and h2 by ALPN) and a CA issuing certificates for labs and tests.
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // SQLite state through GRDB on the system libsqlite3; schema.sql is the schema.
        .target(
            name: "RegcodeStore",
            dependencies: [
                "RegcodeSupport",
                "RegcodeEngine",
                // An OAuth device's stored state (`devices.oauth_state`).
                "OAuthDeviceGrant",
                "RegcodeRecords",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's own memory figures (`sqlite3_memory_used`), which GRDB does not wrap.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.embedInCode("schema.sql")],
            swiftSettings: swiftSettings
        ),
        // The control API's JSON-RPC 2.0 core, whatever carries it: requests and errors, the dispatcher, the handler
        // the daemon implements, subscriptions and the event fan-out, each event encoded once for every transport.
        .target(
            name: "ControlRPC",
            dependencies: [
                "RegcodeSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The input workers' threads.
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The control socket: JSON-RPC 2.0 over a Unix stream socket, one object per line.
        .target(
            name: "ControlSocket",
            dependencies: [
                "ControlRPC",
                "ListenerGuard",
                "RegcodeSupport",
                "EventLoopExecutor",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The same control API over HTTP (JSON-RPC, server-sent events) and the web console, on Hummingbird.
        .target(
            name: "ControlHTTP",
            dependencies: [
                "ControlRPC",
                "EventLoopExecutor",
                "ListenerGuard",
                "RegcodeSupport",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The listener's own low-priority event loop.
                .product(name: "NIOPosix", package: "swift-nio"),
                // The HTTP request parts, for the body coalescer in the pipeline.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Console/index.html")],
            swiftSettings: swiftSettings
        ),
        // The device events on their way to storage and subscribers: the event pipeline (stored in batches, then
        // published), the storage health it reports, and the live figures its steps feed.
        .target(
            name: "DeviceEvents",
            dependencies: [
                "AccessEnablerAPI",
                "ControlRPC",
                "DeviceFleet",
                "RegcodeEngine",
                "RegcodeRecords",
                "RegcodeStore",
                "RegcodeSupport",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The device lifecycle: the catalog of fleets, client addresses and the registry that alone changes a device's
        // fleet entry and store row together.
        .target(
            name: "DeviceRegistry",
            dependencies: [
                "OAuthDeviceGrant",
                "RegcodeRecords",
                "DeviceEvents",
                "DeviceFleet",
                "RegcodeEngine",
                "RegcodeStore",
                "RegcodeSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The daemon: configuration, control handler, services.
        .target(
            name: "RegcodeDaemon",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                "AccessEnablerAPI",
                "OAuthDeviceGrant",
                "DeviceEvents",
                "DeviceRegistry",
                "RegcodeSupport",
                "RegcodeEngine",
                "RegcodeRecords",
                "AdobePassClient",
                "BackendHTTP",
                "DeviceFleet",
                "RegcodeStore",
                "ControlRPC",
                "ControlSocket",
                "ControlHTTP",
                // Thresholds in the configuration.
                "SoakReport",
                "ListenerGuard",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "regcoded",
            dependencies: [
                "OAuthDeviceGrant",
                "DeviceRegistry",
                "BackendHTTP",
                "RegcodeSupport",
                "RegcodeDaemon",
                "RegcodeEngine",
                // The report and verdict at the end of a timed run.
                "SoakReport",
                "SoakReportLoader",
                // The in-process backend of a configuration that names none.
                "PassSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "regcodectl",
            dependencies: [
                "AccessEnablerAPI",
                "RegcodeSupport",
                "ControlRPC",
                "ControlSocket",
                "RegcodeStore",
                "SoakReport",
                "SoakReportLoader",
                .product(name: "Logging", package: "swift-log"),
                "RegcodeEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Soak reports read from state databases (one per shard): what `regcodectl report` and the end of a
        // timed `regcoded --duration` run report on.
        .target(
            name: "SoakReportLoader",
            dependencies: [
                "AccessEnablerAPI",
                "SoakReport",
                "RegcodeStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Soak reports from the poll log: figures (text, JSON, CSV) and a self-contained HTML page.
        .target(
            name: "SoakReport",
            dependencies: ["AccessEnablerAPI", "RegcodeRecords", "RegcodeSupport"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pass-sim",
            dependencies: [
                "OAuthDeviceGrant",
                "RegcodeSupport",
                "PassSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RegcodeStoreTests",
            dependencies: [
                "RegcodeStore", "RegcodeEngine", "RegcodeRecords", "RegcodeSupport", "RegcodeTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            // A database file written by the release before schema version 3, to migrate in tests.
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ControlSocketTests",
            dependencies: [
                "RegcodeSupport",
                "RegcodeTestSupport",
                "ControlRPC",
                "ControlSocket",
                "EventLoopExecutor",
                .product(name: "Logging", package: "swift-log"),
                "RegcodeEngine",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ControlHTTPTests",
            dependencies: [
                "ListenerGuard",
                "ControlHTTP",
                "ControlRPC",
                "RegcodeSupport",
                "RegcodeTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RegcodedEndToEndTests",
            dependencies: [
                // Its test certificate authority issues the client certificates of the mutual-TLS test.
                "PassSimulator",
                "RegcodeSupport",
                "RegcodeTestSupport",
                "ControlRPC",
                "ControlSocket",
                "RegcodeEngine",
                "regcoded",
                "regcodectl",
                "pass-sim",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DeviceRegistryTests",
            dependencies: [
                "ControlRPC", "DeviceEvents", "DeviceFleet", "DeviceRegistry", "RegcodeEngine", "RegcodeRecords", "RegcodeStore",
                "RegcodeTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RegcodeDaemonTests",
            dependencies: [
                "AccessEnablerAPI", "DeviceEvents", "DeviceFleet", "DeviceRegistry", "OAuthDeviceGrant", "RegcodeDaemon", "RegcodeEngine",
                "RegcodeRecords", "RegcodeStore", "RegcodeSupport",
                "ControlRPC", "RegcodeTestSupport", "BackendHTTP",
                // The control harness's fleet runs on NIO's event loops.
                .product(name: "NIOPosix", package: "swift-nio"),
                // The web console's page, whose calls are checked against the control methods.
                "ControlHTTP",
                // Daemons are built as the executable builds them, with its embedded simulator.
                "regcoded",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BackendHTTPTests",
            dependencies: [
                "BackendHTTP",
                // Its test certificate authority issues the certificates of the TLS tests.
                "PassSimulator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SoakReportTests",
            dependencies: ["SoakReport", "RegcodeRecords", "RegcodeSupport", "RegcodeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RegcodeEngineTests",
            // AdobePassClient: the entitlement-variant tests feed Adobe's sample bodies through the client's parser.
            dependencies: ["AccessEnablerAPI", "AdobePassClient", "RegcodeEngine", "RegcodeRecords", "RegcodeSupport", "RegcodeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PassSimulatorTests",
            dependencies: [
                .product(name: "InMemoryLogging", package: "swift-log"),
                // Signs SSO tokens of a test identity service, and OAuth client assertions (P-256 and RSA).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                "OAuthDeviceGrant",
                "PassSimulator",
                // The TV Provider's identity provider signs the partner SAML answers.
                "RegcodeEngine",
                "RegcodeTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // Verifies the chains the test certificate authority issues.
                .product(name: "X509", package: "swift-certificates"),
            ],
            // Adobe's documented SSO request samples (MIT, see AdobeSamples/README.md).
            resources: [.copy("AdobeSamples")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AdobePassClientTests",
            dependencies: [
                .product(name: "InMemoryLogging", package: "swift-log"),
                "AdobePassClient",
                .product(name: "Logging", package: "swift-log"),
                "PassSimulator",
                "RegcodeEngine",
                "RegcodeTestSupport",
                "BackendHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // Adobe's OpenAPI files (Apache-2.0, see OpenAPI/README.md).
            resources: [.copy("OpenAPI")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DeviceFleetTests",
            dependencies: [
                .product(name: "InMemoryLogging", package: "swift-log"),
                "AccessEnablerAPI",
                "RegcodeRecords",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                "RegcodeSupport",
                "RegcodeTestSupport",
                "DeviceFleet",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                "AdobePassClient",
                "PassSimulator",
                "RegcodeEngine",
            ],
            swiftSettings: swiftSettings
        ),
        // What several test targets share: a manual clock, process helpers, the simulator's admin calls.
        .target(
            name: "RegcodeTestSupport",
            dependencies: [
                "BackendHTTP",
                "RegcodeEngine",
                "RegcodeSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/RegcodeTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OAuthDeviceClientTests",
            dependencies: [
                "OAuthDeviceClient",
                "OAuthDeviceGrant",
                "RegcodeEngine",
                "RegcodeRecords",
                // Verifies the private_key_jwt assertions.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RegcodeRecordsTests",
            dependencies: ["RegcodeRecords"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RegcodeSupportTests",
            dependencies: [
                "RegcodeSupport",
                "RegcodeTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ListenerGuardTests",
            dependencies: [
                "ListenerGuard",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
