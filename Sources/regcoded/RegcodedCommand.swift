import ArgumentParser
import BackendHTTP
import DeviceRegistry
import Foundation
import Logging
import NIOCore
import NIOPosix
import RegcodeDaemon
import RegcodeEngine
import RegcodeSupport
import SoakReport

/// `regcoded`: emulates AccessEnabler devices doing the second-screen login.
@main
struct RegcodedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regcoded",
        abstract: "Emulates tvOS AccessEnabler devices doing the Adobe Pass second-screen (registration code) login.",
        discussion: """
            With no arguments it runs one device, stb-1, against an in-process Adobe Pass simulator, \
            keeps state in ./regcoded.sqlite, listens on ./regcoded.sock and prints the activation URL \
            and each code. Under systemd the defaults come from $STATE_DIRECTORY, $RUNTIME_DIRECTORY \
            and $CREDENTIALS_DIRECTORY. Flags override the configuration file.

            The in-process simulator checks software statements: fleets that name none get one it signed. \
            A separately started pass-sim needs its own: `pass-sim statement` prints one for \
            --software-statement.

            REST API v1 (--profile v1) is past Adobe's end of support (2025-12-31) and reaches its end of \
            life at the end of 2026; the AccessEnabler SDKs lost support on 2026-05-31 and end at the same \
            time. A fleet using v1 or the legacy signed header against a backend off this host is warned \
            about at start.
            """,
        version: RegcodeVersion.current
    )

    /// Every flag, declared once: the values a SIGHUP reload applies again.
    @OptionGroup var flags: FlagOverrides

    /// Writes docs/reference's generated pages into this directory and exits (`Tests/generate-reference.sh`'s).
    @Option(name: .long, help: .hidden)
    var generateReference: String?

    /// Runs Swift concurrency's jobs on NIO's event-loop threads, so a device's call that awaits its answer
    /// resumes on the thread that read it instead of handing over to Dispatch's pool (10,000 devices: 589 →
    /// 523 CPU-µs per poll). Not in `pass-sim`: with its state behind a lock it measured the same with and
    /// without (60.2 against 60.6 CPU-µs per request under `wrk`, 111.1 against 110.8 under 25,000 devices),
    /// so it keeps Swift's own executor. Installed before any task is started. Nothing here blocks a thread:
    /// SQLite runs on GRDB's own queues.
    static func main() async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        await main(nil)
    }

    func run() async throws {
        if let generateReference {
            try ReferencePages.write(into: generateReference)
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let overrides = flags
        let configuration: DaemonConfiguration
        do {
            configuration = try overrides.loadConfiguration(environment: environment)
        } catch {
            printError("regcoded: configuration error: \(error)")
            throw ExitCode(2)
        }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var reload: (@Sendable () throws -> DaemonConfiguration)?
        if overrides.config != nil {
            reload = { @Sendable () throws -> DaemonConfiguration in try overrides.loadConfiguration(environment: environment) }
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(
                configuration: configuration,
                environment: environment,
                reloadConfiguration: reload,
                embeddedBackend: EmbeddedSimulator.factory
            )
        } catch let error as ConfigurationError {
            // Secrets, the socket path, the database lock and the database's header: before anything is written.
            printError("regcoded: configuration error: \(error)")
            throw ExitCode(2)
        } catch {
            printError("regcoded: \(error)")
            throw ExitCode(1)
        }
        let startedMs = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        do {
            try await daemon.run()
        } catch {
            printError("regcoded: \(error)")
            throw ExitCode(1)
        }
        if configuration.runLength != nil || !configuration.thresholds.isEmpty {
            try await RunReport.print(configuration: configuration, sinceMs: startedMs)
        }
    }

    private func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
