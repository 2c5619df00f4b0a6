import ArgumentParser
import Foundation
import Logging
import RegcodeDaemon
import SoakReport
import SoakReportLoader

/// The end of a timed run (or one with thresholds): its report on standard output, read from the database
/// the daemon just closed, and the verdict — exit 99 when a threshold fails, as `regcodectl report --check`.
enum RunReport {
    static func print(configuration: DaemonConfiguration, sinceMs: Int64) async throws {
        let nowMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let report: SoakReport
        do {
            let logs = try await ReportLoader().load(configuration.database, sinceMs: sinceMs)
            report = SoakReport(logs: logs, generatedAtMs: nowMs, sinceMs: sinceMs)
        } catch {
            FileHandle.standardError.write(Data("regcoded: cannot read the run's report from \(configuration.database): \(error)\n".utf8))
            throw ExitCode(1)
        }
        let results = report.check(configuration.thresholds)
        var text = "\n" + report.text()
        if !results.isEmpty { text += "\n" + results.text }
        FileHandle.standardOutput.write(Data(text.utf8))
        if !results.allPassed {
            throw ExitCode(99)
        }
    }
}
