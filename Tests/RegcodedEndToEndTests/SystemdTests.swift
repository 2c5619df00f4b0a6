import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket the test owns, standing in for systemd's `NOTIFY_SOCKET`.
final class NotifySocket: @unchecked Sendable {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next datagram, or nil after a one-second silence.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Collects datagrams until `predicate` holds for one, within `timeout`.
    func collect(until predicate: (String) -> Bool, timeout: Duration = .seconds(30)) -> [String] {
        var messages: [String] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = receive() else { continue }
            messages.append(message)
            if predicate(message) { break }
        }
        return messages
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct SystemdTests {
        static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

        static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }

        /// The units as installed, with ExecStart pointing at the built binary so verify can check it.
        static func stagedUnits(in directory: TemporaryDirectory) throws -> (service: String, socket: String) {
            let service = try String(contentsOf: repository.appendingPathComponent("systemd/regcoded.service"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/regcoded", with: BuiltProducts.url("regcoded").path)
            let socket = try String(contentsOf: repository.appendingPathComponent("systemd/regcoded.socket"), encoding: .utf8)
            try service.write(toFile: directory.path("regcoded.service"), atomically: true, encoding: .utf8)
            try socket.write(toFile: directory.path("regcoded.socket"), atomically: true, encoding: .utf8)
            return (directory.path("regcoded.service"), directory.path("regcoded.socket"))
        }

        @Test func unitsVerifyAndTheServiceIsHardened() throws {
            let directory = try TemporaryDirectory()
            let units = try Self.stagedUnits(in: directory)
            let verify = try Self.run("/usr/bin/systemd-analyze", ["verify", "--man=no", units.service, units.socket])
            #expect(verify.status == 0, "\(verify.output)")
            #expect(!verify.output.contains("regcoded.service:"), "\(verify.output)")
            let security = try Self.run("/usr/bin/systemd-analyze", ["security", "--offline=true", units.service])
            let line = try #require(security.output.split(separator: "\n").first { $0.contains("Overall exposure level") })
            let figure = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
            #expect(figure <= 2.0, "\(line)")
        }

        /// The template units staged like ``stagedUnits(in:)``; systemd reads an instance (`regcoded@0-3`) from them.
        static func stagedTemplateUnits(in directory: TemporaryDirectory, instance: String) throws -> (service: String, socket: String) {
            let service = try String(contentsOf: repository.appendingPathComponent("systemd/regcoded@.service"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/regcoded", with: BuiltProducts.url("regcoded").path)
            let socket = try String(contentsOf: repository.appendingPathComponent("systemd/regcoded@.socket"), encoding: .utf8)
            try service.write(toFile: directory.path("regcoded@.service"), atomically: true, encoding: .utf8)
            try socket.write(toFile: directory.path("regcoded@.socket"), atomically: true, encoding: .utf8)
            return (directory.path("regcoded@\(instance).service"), directory.path("regcoded@\(instance).socket"))
        }

        @Test func templateUnitsVerifyAndAnInstanceIsAsHardenedAsTheService() throws {
            let directory = try TemporaryDirectory()
            let units = try Self.stagedTemplateUnits(in: directory, instance: "0-3")
            let verify = try Self.run("/usr/bin/systemd-analyze", ["verify", "--man=no", units.service, units.socket])
            #expect(verify.status == 0, "\(verify.output)")
            #expect(!verify.output.contains("regcoded@"), "\(verify.output)")
            let security = try Self.run("/usr/bin/systemd-analyze", ["security", "--offline=true", units.service])
            let line = try #require(security.output.split(separator: "\n").first { $0.contains("Overall exposure level") })
            let figure = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
            #expect(figure <= 2.0, "\(line)")
            // Each instance has its own state, socket and shard; the sandbox is the plain service's.
            let template = try String(contentsOfFile: directory.path("regcoded@.service"), encoding: .utf8)
            for line in ["StateDirectory=regcoded/%i", "RuntimeDirectory=regcoded/%i", "--shard %I"] {
                #expect(template.contains(line), "\(line)")
            }
            let socket = try String(contentsOfFile: directory.path("regcoded@.socket"), encoding: .utf8)
            #expect(socket.contains("ListenStream=/run/regcoded/%i/regcoded.sock"))
            let plain = try String(contentsOf: Self.repository.appendingPathComponent("systemd/regcoded.service"), encoding: .utf8)
            let prefixes = ["User=", "NoNewPrivileges", "Capability", "Protect", "Private", "Restrict", "SystemCall", "IPAddress", "UMask"]
            let sandbox = { (unit: String) in unit.split(separator: "\n").filter { line in prefixes.contains { line.hasPrefix($0) } } }
            #expect(sandbox(template) == sandbox(plain))
        }

        @Test func socketActivatedDaemonServesTheSocketItWasHanded() async throws {
            let directory = try TemporaryDirectory()
            let socketPath = directory.path("activated.sock")
            let activator = try ChildProcess(
                "/usr/bin/systemd-socket-activate",
                [
                    "-l", socketPath, "--fdname=control",
                    BuiltProducts.url("regcoded").path,
                    "--database", directory.path("db.sqlite"), "--socket", directory.path("unused.sock"),
                    "--simulator-listen", "127.0.0.1:0",
                ],
                absolute: true
            )
            let deadline = ContinuousClock.now + .seconds(30)
            var status: JSONValue?
            while ContinuousClock.now < deadline, status?["devices"] != 1 {
                status = try? await ControlClient.withConnection(to: socketPath) { try await $0.call(method: "daemon.status") }
                if status?["devices"] != 1 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(status?["devices"] == 1, "\(activator.text)")
            // It served the inherited descriptor and did not create its own socket file.
            #expect(!FileManager.default.fileExists(atPath: directory.path("unused.sock")))
            #expect(activator.text.contains("serving the socket systemd passed"))
            activator.signal(SIGTERM)
            #expect(await activator.waitForExit() == 0)
        }

        @Test func notifySocketReceivesReadyStatusWatchdogAndStoppingInOrder() async throws {
            let directory = try TemporaryDirectory()
            let notify = try NotifySocket(path: directory.path("notify"))
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--database", database, "--socket", directory.path("s.sock"), "--simulator-listen", "127.0.0.1:0",
                    "--devices", "2", "--simulator-auto-approve-after", "1", "--poll-interval", "3",
                ],
                environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"]
            )
            var messages = notify.collect { $0.contains("WATCHDOG=1") }
            // Keep listening a little for STATUS updates, then stop the daemon.
            messages += notify.collect(until: { $0.contains("authenticated") }, timeout: .seconds(10))
            daemon.signal(SIGTERM)
            messages += notify.collect { $0.contains("STOPPING=1") }
            #expect(await daemon.waitForExit() == 0, "\(daemon.text)")
            // Whatever came after STOPPING=1 until the exit: never a fleet summary (it would read as running on).
            messages += notify.collect(until: { _ in false }, timeout: .milliseconds(200))

            let ready = try #require(messages.firstIndex { $0.contains("READY=1") }, "\(messages)")
            let watchdog = try #require(messages.firstIndex { $0.contains("WATCHDOG=1") })
            let stopping = try #require(messages.firstIndex { $0.contains("STOPPING=1") })
            #expect(ready < watchdog && watchdog < stopping)
            #expect(messages[ready].contains("STATUS=2 devices"))
            #expect(messages.contains { $0.hasPrefix("STATUS=") && $0.contains("authenticated") })
            #expect(stopping == messages.count - 1 || messages[(stopping + 1)...].allSatisfy { !$0.contains("READY") })
            #expect(messages[(stopping + 1)...].allSatisfy { !$0.contains(" devices") }, "\(messages)")

            // A clean stop: the database is consistent and the event log gap-free.
            #expect(try SQLiteShell.run(database, "PRAGMA integrity_check") == "ok")
            let seqs = try SQLiteShell.run(database, "SELECT group_concat(seq) FROM events ORDER BY seq").split(separator: ",").compactMap { Int($0) }
            #expect(!seqs.isEmpty && seqs == Array(1...seqs.count))
        }

        @Test func sighupAddsADeviceFromTheEditedConfig() async throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            func write(count: Int, scenario: String = "idle") throws {
                try """
                simulator:
                  listen: 127.0.0.1:0
                fleets:
                  - name: lab
                    count: \(count)
                    scenario: \(scenario)
                """.write(toFile: config, atomically: true, encoding: .utf8)
            }
            try write(count: 1)
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess("regcoded", ["--config", config, "--database", directory.path("db.sqlite"), "--socket", socket])
            func names() async -> [String] {
                let list = try? await ControlClient.withConnection(to: socket) { try await $0.call(method: "devices.list") }
                return list?["devices"]?.arrayValue?.compactMap { $0["device"]?.stringValue } ?? []
            }
            var deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, await names() != ["lab-1"] { try await Task.sleep(for: .milliseconds(100)) }
            #expect(await names() == ["lab-1"])
            let idBefore = try SQLiteShell.run(directory.path("db.sqlite"), "SELECT device_id FROM devices WHERE name = 'lab-1'")

            try write(count: 2)
            daemon.signal(SIGHUP)
            deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, await names() != ["lab-1", "lab-2"] { try await Task.sleep(for: .milliseconds(100)) }
            #expect(await names() == ["lab-1", "lab-2"])
            #expect(try SQLiteShell.run(directory.path("db.sqlite"), "SELECT device_id FROM devices WHERE name = 'lab-1'") == idBefore)

            // A broken file is reported and the running configuration kept.
            try "fleets: [\n".write(toFile: config, atomically: true, encoding: .utf8)
            daemon.signal(SIGHUP)
            #expect(await daemon.waitForOutput("reload failed"))
            #expect(await names() == ["lab-1", "lab-2"])

            try write(count: 1)
            daemon.signal(SIGHUP)
            deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, await names() != ["lab-1"] { try await Task.sleep(for: .milliseconds(100)) }
            #expect(await names() == ["lab-1"])
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        @Test func makeInstallStagesBinariesUnitsAndConfiguration() throws {
            let stage = try TemporaryDirectory()
            let result = try Self.run(
                "/usr/bin/make",
                [
                    "-C", Self.repository.path, "install", "NO_BUILD=1", "DESTDIR=\(stage.url.path)",
                    "BUILD_BIN=\(BuiltProducts.url("regcoded").deletingLastPathComponent().path)",
                ]
            )
            #expect(result.status == 0, "\(result.output)")
            for path in [
                "usr/local/bin/regcoded", "usr/local/bin/regcodectl", "usr/local/bin/pass-sim",
                "etc/systemd/system/regcoded.service", "etc/systemd/system/regcoded.socket",
                "etc/systemd/system/regcoded@.service", "etc/systemd/system/regcoded@.socket",
                "usr/lib/sysusers.d/regcoded.conf", "usr/lib/tmpfiles.d/regcoded.conf",
                "etc/regcoded/regcoded.yaml", "etc/regcoded/credentials/software-statement",
            ] {
                #expect(FileManager.default.fileExists(atPath: stage.path(path)), "\(path) missing")
            }
            // The template's ExecStart points at the installed binary, like the plain unit's.
            let template = try String(contentsOfFile: stage.path("etc/systemd/system/regcoded@.service"), encoding: .utf8)
            #expect(template.contains("ExecStart=/usr/local/bin/regcoded --config"))
            let attributes = try FileManager.default.attributesOfItem(atPath: stage.path("etc/regcoded/credentials/software-statement"))
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
    }
}
