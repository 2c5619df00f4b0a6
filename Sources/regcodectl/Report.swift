import AccessEnablerAPI
import ArgumentParser
import Foundation
import Logging
import RegcodeEngine
import RegcodeStore
import SoakReport
import SoakReportLoader

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
        let loader = ReportLoader(devices: device)
        var logs = ReportLogs()
        for path in databasePaths {
            do {
                try await logs.append(loader.load(path, sinceMs: sinceMs), from: path)
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
        let report = SoakReport(logs: logs, generatedAtMs: nowMs, sinceMs: sinceMs)

        let results = check.isEmpty ? [] : report.check(try thresholds)
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

    private func failure(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("regcodectl: \(message)\n".utf8))
        return ExitCode(1)
    }
}
