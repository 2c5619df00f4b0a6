import AccessEnablerAPI
import ArgumentParser
import Foundation
import Logging
import RegcodeEngine
import RegcodeStore
import SoakReport

/// `regcodectl report`: soak figures straight from the state database (no daemon needed).
struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a soak report from the state database: polls, requests by stage, onboardings, logins, expiries.",
        discussion: """
            Reads the state database directly; running it next to the daemon is fine.
            --since takes a duration back from now (30m, 2h, 7d, 1h30m), an ISO-8601 time or epoch milliseconds.
            Percentiles use the nearest-rank method. Example:
              regcodectl report --since 2h --format json
              regcodectl report --device stb-1 --device stb-2 --html soak.html
              regcodectl report --database shard-0.sqlite --database shard-1.sqlite --database shard-2.sqlite
              regcodectl report --check 'login_success_rate>=0.99' 'poll_lateness_p99<50ms' --format junit
            Several --database (one per shard) make one report of the union: counts add up, percentiles are
            taken over every shard's samples.
            --check takes thresholds as k6 writes them, METRIC[{fleet:NAME}] OP VALUE with OP one of
            < <= > >= == !=; the report lists each with its value, and the exit status is 99 when one fails.
            Metrics: \(ThresholdMetric.allCases.map(\.rawValue).joined(separator: ", ")).
            Rates are fractions or percentages (0.01, 1%), times need a unit (50ms, 2s).
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, csv, junit
    }

    /// The exit status when a threshold fails (k6's, so CI scripts written for it read it the same way).
    static let thresholdFailureStatus: Int32 = 99

    @Option(
        name: .long,
        help: """
            State database (default: $REGCODED_DATABASE, else /var/lib/regcoded/regcoded.sqlite if present, else ./regcoded.sqlite). \
            Repeat it to merge the databases of several shards into one report.
            """
    )
    var database: [String] = []

    @Option(name: .long, help: "Only polls and events from this time on: 30m, 2h, 7d, an ISO-8601 time or epoch ms.")
    var since: String?

    @Option(name: .long, help: "Only this device (repeatable).")
    var device: [String] = []

    @Option(name: .long, help: "Output on stdout: text, json, csv, or junit (the --check results as JUnit XML).")
    var format: Format = .text

    @Option(
        name: .long,
        parsing: .upToNextOption,
        help: ArgumentHelp("Thresholds the run must meet, e.g. 'http_429_rate<0.01' 'poll_lateness_p99{fleet:stb}<50ms'.", valueName: "expression")
    )
    var check: [String] = []

    @Option(name: .long, help: "Also write a self-contained HTML page with charts to this file.")
    var html: String?

    var databasePaths: [String] {
        database.isEmpty ? [defaultDatabasePath] : database
    }

    var defaultDatabasePath: String {
        if let fromEnvironment = ProcessInfo.processInfo.environment["REGCODED_DATABASE"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        if FileManager.default.fileExists(atPath: "/var/lib/regcoded/regcoded.sqlite") { return "/var/lib/regcoded/regcoded.sqlite" }
        return "./regcoded.sqlite"
    }

    func run() async throws {
        let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        var sinceMs: Int64?
        if let since {
            do {
                sinceMs = try ReportSince.parse(since, nowMs: nowMs)
            } catch {
                throw ValidationError(error.description)
            }
        }

        for path in databasePaths {
            var isDirectory: ObjCBool = false
            // The store creates a missing file; a report must not leave an empty database behind.
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw failure("no state database at \(path); pass --database PATH or set REGCODED_DATABASE")
            }
        }

        // Shards run disjoint devices, so their logs concatenate into the logs of one fleet.
        var logs = ReportLogs()
        for path in databasePaths {
            do {
                try await logs.append(load(path, sinceMs: sinceMs), from: path)
            } catch let error as RegcodeStoreError {
                throw failure(error.description)
            } catch {
                throw failure("cannot read \(path): \(error)")
            }
        }
        for (device, paths) in logs.devicesInSeveralDatabases {
            let warning = "regcodectl: warning: \(device) is in \(paths.joined(separator: " and ")); its figures are added up\n"
            FileHandle.standardError.write(Data(warning.utf8))
        }
        let report = SoakReport(
            polls: logs.polls,
            statusEvents: logs.events,
            requests: logs.requests,
            devices: logs.devices,
            logins: logs.logins,
            generatedAtMs: nowMs,
            sinceMs: sinceMs
        )

        let results = report.check(try thresholds)
        switch format {
        case .text: print(report.text() + (results.isEmpty ? "" : "\n" + results.text), terminator: "")
        case .json: print(report.json(thresholds: check.isEmpty ? nil : results))
        case .csv: print(report.csv(), terminator: "")
        case .junit: print(results.junit(), terminator: "")
        }

        if let html {
            do {
                try Data(report.html().utf8).write(to: URL(fileURLWithPath: html), options: .atomic)
            } catch {
                throw failure("cannot write \(html): \(error.localizedDescription)")
            }
            FileHandle.standardError.write(Data("regcodectl: wrote \(html)\n".utf8))
        }
        if !results.allPassed {
            // In CSV or JUnit the failing lines are not on stdout in words; say them where a person looks.
            if format == .csv || format == .junit {
                FileHandle.standardError.write(Data(("regcodectl: " + results.text).utf8))
            }
            throw ExitCode(Self.thresholdFailureStatus)
        }
    }

    /// The `--check` expressions, read before any database is opened.
    var thresholds: [Threshold] {
        get throws {
            try check.map { expression in
                do {
                    return try Threshold(parsing: expression)
                } catch {
                    throw ValidationError("\(error)")
                }
            }
        }
    }

    func validate() throws {
        _ = try thresholds
        if format == .junit && check.isEmpty {
            throw ValidationError("--format junit writes the --check results: give at least one --check")
        }
    }

    /// The logs of one database.
    private func load(_ path: String, sinceMs: Int64?) async throws -> ReportLogs {
        let store = try RegcodeStore(readingOnly: path, logger: Logger(label: "regcodectl.report", factory: { _ in SwiftLogNoOpLogHandler() }))
        return ReportLogs(
            polls: try await loadPolls(store, sinceMs: sinceMs),
            events: try await loadStatusEvents(store, sinceMs: sinceMs),
            // A read-only store of schema version 1 has no request log: the report then leaves the
            // request figures out rather than showing zeros.
            requests: store.fileSchemaVersion >= 2 ? try await loadRequests(store, sinceMs: sinceMs) : nil,
            devices: try await loadDevices(store),
            logins: try await loadLogins(store, sinceMs: sinceMs)
        )
    }

    /// The logins of the window (nil for a database without a login log).
    private func loadLogins(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [LoginRecord]? {
        let wanted = device.isEmpty ? nil : Set(device)
        guard let logins = try await store.logins(device: nil, sinceEpochMs: sinceMs) else { return nil }
        return logins.filter { wanted?.contains($0.device) ?? true }
            .map { LoginRecord(device: $0.device, timeMs: $0.epochMs, mvpd: $0.mvpd, kind: $0.kind) }
    }

    private func loadPolls(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [PollRecord] {
        let attempts: [StoredPollAttempt]
        if device.isEmpty {
            attempts = try await store.pollAttempts(device: nil, sinceEpochMs: sinceMs)
        } else {
            var all: [StoredPollAttempt] = []
            for name in Set(device).sorted() { all += try await store.pollAttempts(device: name, sinceEpochMs: sinceMs) }
            attempts = all
        }
        return attempts.map { stored in
            let attempt = stored.attempt
            return PollRecord(
                device: stored.device,
                code: attempt.code,
                plannedMs: attempt.plannedEpochMs,
                sentMs: attempt.sentEpochMs,
                latencyMs: attempt.latencyMs,
                httpStatus: attempt.httpStatus,
                outcome: attempt.outcome,
                nextDelayMs: attempt.nextDelayMs
            )
        }
    }

    private func loadRequests(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [RequestRecord] {
        let attempts: [StoredRequestAttempt]
        if device.isEmpty {
            attempts = try await store.requestAttempts(device: nil, sinceEpochMs: sinceMs)
        } else {
            var all: [StoredRequestAttempt] = []
            for name in Set(device).sorted() { all += try await store.requestAttempts(device: name, sinceEpochMs: sinceMs) }
            attempts = all
        }
        return attempts.map { stored in
            let attempt = stored.attempt
            return RequestRecord(
                device: stored.device,
                stage: attempt.stage,
                endpoint: attempt.endpoint,
                sentMs: attempt.sentEpochMs,
                latencyMs: attempt.latencyMs,
                httpStatus: attempt.httpStatus,
                outcome: attempt.outcome,
                errorCode: attempt.errorCode,
                retryDelayMs: attempt.retryDelayMs
            )
        }
    }

    /// The stored devices (all of them: a device without activity in the window is still reported).
    private func loadDevices(_ store: RegcodeStore) async throws -> [DeviceRecord] {
        let wanted = device.isEmpty ? nil : Set(device)
        return try await store.deviceRecordSummaries()
            .filter { wanted?.contains($0.name) ?? true }
            .map { DeviceRecord(device: $0.name, state: $0.state.rawValue, codesIssued: $0.codesIssued, fleet: $0.fleet) }
    }

    /// The `status` events of the window, read page by page.
    private func loadStatusEvents(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [StatusEventRecord] {
        let pageSize = 10_000
        let devices = device.isEmpty ? nil : Set(device)
        var records: [StatusEventRecord] = []
        var after: Int64 = 0
        while true {
            let page = try await store.events(after: after, devices: devices, names: [Callback.status.rawValue], limit: pageSize)
            for event in page {
                if let sinceMs, event.time < sinceMs { continue }
                let dictionary = event.args["statusDictionary"]
                guard let errorId = dictionary?["errorId"]?.stringValue else { continue }
                records.append(
                    StatusEventRecord(
                        device: event.device,
                        timeMs: event.time,
                        errorId: errorId,
                        code: dictionary?["code"]?.stringValue,
                        message: dictionary?["message"]?.stringValue,
                        level: dictionary?["level"]?.stringValue
                    )
                )
            }
            guard page.count == pageSize, let last = page.last else { return records }
            after = last.seq
        }
    }

    /// Prints `message` and gives the exit code to throw.
    private func failure(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("regcodectl: \(message)\n".utf8))
        return ExitCode(1)
    }
}
