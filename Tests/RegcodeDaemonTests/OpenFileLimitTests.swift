import BackendHTTP
import Foundation
import InMemoryLogging
import Logging
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// The open-file limit and the connection budget it leaves (past it the process would crash: see `ConnectionBudget`).
@Suite struct OpenFileLimitTests {
    @Test func theBudgetKeepsAReserveForEverythingElse() {
        #expect(OpenFileLimit.connectionBudget(forLimit: 1024) == 768)
        #expect(OpenFileLimit.connectionBudget(forLimit: 20_000) == 18_976)
        #expect(OpenFileLimit.connectionBudget(forLimit: 524_288) == 523_264)
        #expect(OpenFileLimit.connectionBudget(forLimit: 100) == 75)
        // Against the embedded simulator a connection's both ends are the daemon's descriptors.
        #expect(OpenFileLimit.connectionBudget(forLimit: 20_000, embeddedSimulator: true) == 9_488)
    }

    @Test func eventStreamsTakeMostOfTheHTTPListenersShareUnlessConfigured() throws {
        #expect(DescriptorBudget(limit: 1024, http: true).eventStreams == 112)
        #expect(DescriptorBudget(limit: 20_000, http: true).eventStreams == 2_188)
        #expect(DescriptorBudget(limit: 524_288, http: true).eventStreams == 3_584)
        #expect(DescriptorBudget(limit: 64, http: true).eventStreams == 4)
        #expect(DescriptorBudget(limit: 20_000, http: false).eventStreams == 0)
        let budget = DescriptorBudget(limit: 20_000, http: true)
        let capture = InMemoryLogHandler()
        let logger = Logger(label: "streams") { _ in capture }
        var configuration = try ConfigurationFile.parse("http: 127.0.0.1:0\n", file: "x.yaml")
        #expect(Daemon.eventStreams(configuration, budget: budget, logger: logger)?.limit == 2_188)
        configuration = try ConfigurationFile.parse("http: 127.0.0.1:0\nhttp_max_event_streams: 7\n", file: "x.yaml")
        #expect(configuration.httpMaxEventStreams == 7)
        #expect(Daemon.eventStreams(configuration, budget: budget, logger: logger)?.limit == 7)
        #expect(capture.entries.isEmpty)
        // Never past the listener's connection cap: the streams beyond it could not connect anyway. Said at start.
        configuration.httpMaxEventStreams = 100_000
        #expect(Daemon.eventStreams(configuration, budget: budget, logger: logger)?.limit == budget.http)
        #expect(capture.entries.map(\.level) == [.warning])
        #expect(capture.entries.first?.metadata["limit"] == "\(budget.http)")
        configuration.http = nil
        #expect(Daemon.eventStreams(configuration, budget: budget, logger: logger) == nil)
        #expect(throws: (any Error).self) { try ConfigurationFile.parse("http_max_event_streams: 0\n", file: "x.yaml") }
    }

    @Test func everyListenerTheFleetAndTheDatabaseFitInTheLimit() {
        for limit in [64, 100, 256, 400, 1024, 4096, 20_000, 65_536, 524_288] {
            for (http, metrics, embedded) in [(false, false, false), (true, true, false), (true, true, true), (false, false, true)] {
                let budget = DescriptorBudget(limit: limit, http: http, metrics: metrics, embeddedSimulator: embedded)
                // The reserve keeps the control socket's and metrics listener's connections and the simulator's
                // visitors, with at least half of it left for the database, the listening sockets and the runtime.
                #expect(budget.control + budget.metrics + budget.simulatorVisitors <= budget.reserve / 2 + 3, "\(budget)")
                let fleetDescriptors = budget.fleet * (embedded ? 2 : 1)
                #expect(budget.reserve + budget.http + fleetDescriptors <= limit, "\(budget)")
                #expect(budget.control >= 2 && (!http || budget.http >= 8) && (!metrics || budget.metrics >= 1))
            }
        }
        // At the limit systemd units set, with the console on: 4,096 HTTP connections (event streams) and 256 on the socket.
        let units = DescriptorBudget(limit: 65_536, http: true, metrics: true)
        #expect(units.http == 4_096)
        #expect(units.control == 256)
        #expect(units.metrics == 16)
        #expect(units.fleet == 65_536 - 1_024 - 4_096)
    }

    @Test func theSoftLimitIsRaisedToTheHardOne() throws {
        let raised = OpenFileLimit.raiseToHardLimit()
        var limits = rlimit()
        try #require(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0)
        #expect(raised.after >= raised.before)
        #expect(limits.rlim_max == rlim_t.max || limits.rlim_cur == limits.rlim_max)
        #expect(Int(limits.rlim_cur) == raised.after)
    }

    private func configuration(_ yaml: String) throws -> DaemonConfiguration {
        try ConfigurationFile.parse(yaml, file: "lab.yaml")
    }

    private static let fleets = """
        max_concurrent_requests: 100
        fleets:
          - name: pooled
            count: 5
          - name: lab
            count: 50
            connections: shared 16
          - name: boxes
            count: 1000
            connections: per-device
        """

    @Test func theConnectionsNeededCountEveryModel() throws {
        var configuration = try configuration(Self.fleets)
        #expect(Daemon.connectionsNeeded(by: configuration) == 100 + 16 + 1000)
        // A shard runs its slice of the per-device devices (rounded up).
        configuration.shard = try Shard.parse("1/3").get()
        #expect(Daemon.connectionsNeeded(by: configuration) == 100 + 16 + 334)
        let perDeviceOnly = try self.configuration("fleets:\n  - name: boxes\n    count: 40\n    connections: per-device\n")
        #expect(Daemon.connectionsNeeded(by: perDeviceOnly) == 40)
    }

    @Test func aFleetLargerThanTheBudgetIsAWarningAtStartAndAFittingOneIsNot() throws {
        let configuration = try configuration(Self.fleets)
        for (limit, warns) in [(1_000, true), (2_000, false)] {
            let capture = InMemoryLogHandler()
            var logger = Logger(label: "budget") { _ in capture }
            logger.logLevel = .debug
            Daemon.checkConnectionBudget(ConnectionBudget(limit: limit), openFiles: (1024, 4096), configuration: configuration, logger: logger)
            let warnings = capture.entries.filter { $0.level == .warning }
            #expect(warnings.count == (warns ? 1 : 0))
            #expect(capture.entries.count == 1)
            #expect(capture.entries.first?.metadata["connections.needed"] == "1116")
            #expect(capture.entries.first?.metadata["connections.budget"] == "\(limit)")
        }
    }
}
