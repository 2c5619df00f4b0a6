import AccessEnablerAPI
import BackendHTTP
import ControlHTTP
import ControlRPC
import CoreMetrics
import DeviceEvents
import DeviceFleet
import DeviceRegistry
import Foundation
import Hummingbird
import ListenerGuard
import Logging
import Metrics
import Prometheus
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle
import Synchronization

/// The daemon's metrics, recorded through swift-metrics into a Prometheus registry.
///
/// Poll figures come from the stored steps (so they match the poll log); device states are
/// sampled from the fleet; subscriber counts from the broadcaster. A sharded daemon labels every
/// series `shard="K/N"`, so one scrape of N shards sums (or splits) without relabelling.
final class RegcodeMetrics: Sendable {
    /// The registry `/metrics` renders; nil when recording into another factory (tests).
    let registry: PrometheusCollectorRegistry?
    private let factory: any MetricsFactory
    /// Labels every series carries: `shard` when sharded, else none.
    private let common: [(String, String)]
    private let pollLatency: Metrics.Timer
    private let pollLateness: Metrics.Timer
    private let timeToAuthenticate: Metrics.Timer
    private let codesIssued: CoreMetrics.Counter
    private let codesExpired: CoreMetrics.Counter
    private let subscribers: CoreMetrics.Gauge
    private let cutOffSubscribers: CoreMetrics.Counter
    private let cutOffSeen = Mutex(0)
    private let eventStreams: CoreMetrics.Gauge
    private let refusedEventStreams: CoreMetrics.Counter
    private let refusedEventStreamsSeen = Mutex(0)
    private let storageFailing: CoreMetrics.Gauge
    private let storageBacklog: CoreMetrics.Gauge
    private let fleetHeld: CoreMetrics.Gauge
    private let storageWriteFailures: CoreMetrics.Counter
    private let deferredPollsCounter: CoreMetrics.Counter
    private let totalsSeen = Mutex((failedWrites: 0, deferredPolls: 0))
    /// The transport's totals as last sampled, so its counters take the increase.
    private let transportSeen = Mutex<TransportStatistics.Counts?>(nil)
    private let generatorSeen = Mutex<[GeneratorHealthTracker.Reason: Int64]>([:])
    /// Each listener's totals as last sampled, so its counters take the increase.
    private let listenersSeen = Mutex<[String: (refused: Int, timedOut: Int)]>([:])
    /// When each device showed its current code, to measure time to authenticate.
    private let codeShownAt = Mutex<[String: Int64]>([:])

    /// Metrics exposed in Prometheus text format, with histogram buckets suited to polls and logins.
    convenience init(shard: Shard? = nil) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["regcoded_poll_lateness_seconds"] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.durationHistogramBuckets["regcoded_time_to_authenticate_seconds"] = [
            .seconds(1), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(120), .seconds(300),
            .seconds(600), .seconds(1200), .seconds(1800), .seconds(3600),
        ]
        self.init(factory: factory, registry: registry, shard: shard)
    }

    /// Metrics recorded into `factory` (`registry` is what ``exposition()`` renders).
    init(factory: any MetricsFactory, registry: PrometheusCollectorRegistry? = nil, shard: Shard? = nil) {
        self.registry = registry
        self.factory = factory
        let common = shard.map { [("shard", $0.description)] } ?? []
        self.common = common
        pollLatency = Metrics.Timer(label: "regcoded_poll_latency_seconds", dimensions: common, factory: factory)
        pollLateness = Metrics.Timer(label: "regcoded_poll_lateness_seconds", dimensions: common, factory: factory)
        timeToAuthenticate = Metrics.Timer(label: "regcoded_time_to_authenticate_seconds", dimensions: common, factory: factory)
        codesIssued = CoreMetrics.Counter(label: "regcoded_codes_issued_total", dimensions: common, factory: factory)
        codesExpired = CoreMetrics.Counter(label: "regcoded_codes_expired_total", dimensions: common, factory: factory)
        subscribers = CoreMetrics.Gauge(label: "regcoded_subscribers", dimensions: common, factory: factory)
        cutOffSubscribers = CoreMetrics.Counter(label: "regcoded_subscribers_cut_off_total", dimensions: common, factory: factory)
        eventStreams = CoreMetrics.Gauge(label: "regcoded_event_streams", dimensions: common, factory: factory)
        refusedEventStreams = CoreMetrics.Counter(label: "regcoded_event_streams_refused_total", dimensions: common, factory: factory)
        storageFailing = CoreMetrics.Gauge(label: "regcoded_storage_failing", dimensions: common, factory: factory)
        storageBacklog = CoreMetrics.Gauge(label: "regcoded_storage_backlog_steps", dimensions: common, factory: factory)
        fleetHeld = CoreMetrics.Gauge(label: "regcoded_fleet_held", dimensions: common, factory: factory)
        storageWriteFailures = CoreMetrics.Counter(label: "regcoded_storage_write_failures_total", dimensions: common, factory: factory)
        deferredPollsCounter = CoreMetrics.Counter(label: "regcoded_polls_deferred_total", dimensions: common, factory: factory)
    }

    /// Records the polls and events of stored steps.
    func record(_ steps: [DeviceStep]) {
        for attempt in steps.lazy.flatMap(\.polls) {
            Counter(
                label: "regcoded_polls_total",
                dimensions: common + [("outcome", attempt.outcome.rawValue), ("status", attempt.httpStatus.map(String.init) ?? "none")],
                factory: factory
            ).increment()
            pollLatency.recordNanoseconds(Int64(attempt.latencyMs * 1_000_000))
            pollLateness.recordMilliseconds(max(0, attempt.sentEpochMs - attempt.plannedEpochMs))
        }
        for attempt in steps.lazy.flatMap(\.requests) {
            // Every backend request that is not a poll, by stage: throttled onboardings show here.
            Counter(
                label: "regcoded_requests_total",
                dimensions: common + [
                    ("stage", attempt.stage.rawValue), ("outcome", attempt.outcome.rawValue), ("retried", attempt.retryDelayMs == nil ? "no" : "yes"),
                ],
                factory: factory
            ).increment()
        }
        for step in steps {
            for event in step.events {
                CoreMetrics.Counter(label: "regcoded_events_total", dimensions: common + [("name", event.name)], factory: factory).increment()
                if event.shownCode != nil {
                    codesIssued.increment()
                    codeShownAt.withLock { $0[step.device] = step.epochMs }
                } else if event.saysCodeExpired {
                    codesExpired.increment()
                    _ = codeShownAt.withLock { $0.removeValue(forKey: step.device) }
                } else if event.loginSignal == .signedIn {
                    if let shown = codeShownAt.withLock({ $0.removeValue(forKey: step.device) }) {
                        timeToAuthenticate.recordMilliseconds(max(0, step.epochMs - shown))
                    }
                }
            }
        }
    }

    /// Samples gauges that are states rather than events.
    func sample(phases: [DevicePhase: Int], subscriberCount: Int, cutOffCount: Int) {
        for phase in DevicePhase.allCases {
            CoreMetrics.Gauge(label: "regcoded_devices", dimensions: common + [("state", phase.rawValue)], factory: factory)
                .record(phases[phase] ?? 0)
        }
        subscribers.record(subscriberCount)
        // The broadcaster counts cut-offs since start; the counter takes the increase.
        let increase = cutOffSeen.withLock { seen -> Int in
            defer { seen = max(seen, cutOffCount) }
            return max(0, cutOffCount - seen)
        }
        if increase > 0 { cutOffSubscribers.increment(by: increase) }
    }

    /// Samples the HTTP listener's event streams: open now, and refused at the limit (the counter takes the increase).
    func sample(openEventStreams: Int, refusedEventStreams refused: Int) {
        eventStreams.record(openEventStreams)
        let increase = refusedEventStreamsSeen.withLock { seen -> Int in
            defer { seen = max(seen, refused) }
            return max(0, refused - seen)
        }
        if increase > 0 { refusedEventStreams.increment(by: increase) }
    }

    /// Samples the storage health and what holds deferred (counters take the increase of the totals).
    func sample(storage: StorageHealth, holds: HoldTotals) {
        storageFailing.record(storage.failure == nil ? 0 : 1)
        storageBacklog.record(storage.backlog)
        fleetHeld.record(storage.holding ? 1 : 0)
        let (failedWrites, deferredPolls) = totalsSeen.withLock { seen -> (Int, Int) in
            defer { seen = (max(seen.failedWrites, storage.failedWrites), max(seen.deferredPolls, holds.deferredPolls)) }
            return (max(0, storage.failedWrites - seen.failedWrites), max(0, holds.deferredPolls - seen.deferredPolls))
        }
        if failedWrites > 0 { storageWriteFailures.increment(by: failedWrites) }
        if deferredPolls > 0 { deferredPollsCounter.increment(by: deferredPolls) }
    }

    /// Samples the backend connections by wire and the TLS handshakes (`regcoded_backend_connections_total`,
    /// `regcoded_tls_handshakes_total`): which protocol the fleets speak, and how often they shake hands.
    func sample(transport counts: TransportStatistics.Counts) {
        let previous = transportSeen.withLock { seen in
            defer { seen = counts }
            return seen ?? TransportStatistics.Counts(plainHTTP1: 0, tlsHTTP1: 0, tlsHTTP2: 0, failedHandshakes: 0)
        }
        let connections: [(String, String, Int)] = [
            ("http/1.1", "false", counts.plainHTTP1 - previous.plainHTTP1),
            ("http/1.1", "true", counts.tlsHTTP1 - previous.tlsHTTP1),
            ("h2", "true", counts.tlsHTTP2 - previous.tlsHTTP2),
        ]
        for (version, tls, increase) in connections {
            // Created even when zero, so a scrape shows which wire is in use from the start.
            let counter = CoreMetrics.Counter(
                label: "regcoded_backend_connections_total",
                dimensions: common + [("protocol", version), ("tls", tls)],
                factory: factory
            )
            if increase > 0 { counter.increment(by: increase) }
        }
        let handshakes: [(String, Int)] = [
            ("full", counts.fullHandshakes - previous.fullHandshakes),
            // swift-nio-ssl keeps no client session cache: nothing is resumed, and the series says so.
            ("resumed", 0),
            ("failed", counts.failedHandshakes - previous.failedHandshakes),
        ]
        for (kind, increase) in handshakes {
            let counter = CoreMetrics.Counter(label: "regcoded_tls_handshakes_total", dimensions: common + [("kind", kind)], factory: factory)
            if increase > 0 { counter.increment(by: increase) }
        }
    }

    /// `regcoded_generator_behind` (1 while the emulator is behind its own schedule) and
    /// `regcoded_generator_behind_seconds_total{reason}`.
    func sample(generator: GeneratorHealthTracker) {
        CoreMetrics.Gauge(label: "regcoded_generator_behind", dimensions: common, factory: factory).record(generator.isBehind ? 1 : 0)
        let increases = generatorSeen.withLock { seen -> [(GeneratorHealthTracker.Reason, Int64)] in
            defer { seen = generator.behindMs }
            return GeneratorHealthTracker.Reason.allCases.map { ($0, (generator.behindMs[$0] ?? 0) - (seen[$0] ?? 0)) }
        }
        for (reason, milliseconds) in increases where milliseconds > 0 {
            CoreMetrics.FloatingPointCounter(
                label: "regcoded_generator_behind_seconds_total",
                dimensions: common + [("reason", reason.rawValue)],
                factory: factory
            )
            .increment(by: Double(milliseconds) / 1000)
        }
    }

    /// Samples each listener: connections open and its cap (`regcoded_listener_connections`,
    /// `regcoded_listener_connections_max`), and the connections refused over the cap or closed by a timeout
    /// (`regcoded_listener_refused_total`, `regcoded_listener_timed_out_total`), labelled `listener`.
    func sample(listeners: [ListenerCounters]) {
        for listener in listeners {
            let counts = listener.snapshot
            let dimensions = common + [("listener", listener.name)]
            CoreMetrics.Gauge(label: "regcoded_listener_connections", dimensions: dimensions, factory: factory).record(counts.open)
            CoreMetrics.Gauge(label: "regcoded_listener_connections_max", dimensions: dimensions, factory: factory).record(counts.cap)
            let previous = listenersSeen.withLock { seen in
                defer { seen[listener.name] = (counts.refused, counts.timedOut) }
                return seen[listener.name] ?? (0, 0)
            }
            let refused = CoreMetrics.Counter(label: "regcoded_listener_refused_total", dimensions: dimensions, factory: factory)
            if counts.refused > previous.refused { refused.increment(by: counts.refused - previous.refused) }
            let timedOut = CoreMetrics.Counter(label: "regcoded_listener_timed_out_total", dimensions: dimensions, factory: factory)
            if counts.timedOut > previous.timedOut { timedOut.increment(by: counts.timedOut - previous.timedOut) }
        }
    }

    /// The Prometheus text exposition.
    func exposition() -> String {
        registry?.emitToString() ?? ""
    }
}

/// Serves `/metrics` on the configured address and keeps the sampled gauges current.
struct MetricsService: Service {
    let metrics: RegcodeMetrics
    let address: HostPort
    let fleet: PartitionedFleet
    let broadcaster: EventBroadcaster<EventNotification>
    /// The HTTP listener's event streams; nil without `http`.
    let eventStreams: OpenStreams?
    let pipeline: EventPipeline<ContinuousClock>
    let transport: TransportStatistics
    let generatorHealth: GeneratorHealth
    /// Every listener's counts, sampled with the rest.
    let listeners: SharedValue<[ListenerCounters]>
    /// This listener's cap, counts and timeouts.
    let listenerGuard: ListenerGuard
    let logger: Logger

    func run() async throws {
        let router = Router()
        let metrics = self.metrics
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition()))
            )
        }
        let logger = self.logger
        let listenerGuard = self.listenerGuard
        let listeners = self.listeners
        let app = Application(
            router: router,
            server: .guarded(by: listenerGuard),
            configuration: .guarded(host: address.host, port: address.port, serverName: "regcoded", by: listenerGuard),
            onServerRunning: { channel in
                try? await listenerGuard.install(on: channel)
                // Port 0 picks a free port: say which, so a scraper (or a test) can find it.
                let port = channel.localAddress?.port ?? address.port
                logger.notice("metrics listening", metadata: ["metrics.url": "http://\(address.host):\(port)/metrics"])
            },
            logger: logger
        )
        try await withThrowingDiscardingTaskGroup { group in
            // `run()`: `runService()` would stop on SIGTERM by itself, ahead of this service's turn.
            group.addTask { try await app.run() }
            group.addTask {
                while !Task.isCancelled {
                    metrics.sample(
                        phases: await fleet.phaseCounts(),
                        subscriberCount: broadcaster.subscriberCount,
                        cutOffCount: broadcaster.cutOffCount
                    )
                    if let eventStreams {
                        metrics.sample(openEventStreams: eventStreams.openCount, refusedEventStreams: eventStreams.refusedCount)
                    }
                    metrics.sample(storage: pipeline.health, holds: await fleet.holdTotals)
                    metrics.sample(transport: transport.counts)
                    metrics.sample(generator: generatorHealth.snapshot)
                    metrics.sample(listeners: listeners.value)
                    do {
                        try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
                    } catch {
                        return
                    }
                }
            }
        }
    }
}
