import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real daemon, a real pass-sim and a real SQLite file whose writes fail for 30 s (another
/// process holds an exclusive lock; the filesystem is full): afterwards every event and every
/// backend request the daemon made is stored, once, in order, under a gap-free sequence, and a
/// live subscriber saw exactly that; a graceful stop records every poll the backend answered.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(4))) struct StorageFaultEndToEndTests {
        /// A fleet that produces events all the time: log in, authorize every second, log out, again.
        static func cyclingFleet(backend: String, count: Int) -> String {
            """
            backend: \(backend)
            fleets:
              - name: lab
                count: \(count)
                scenario: cycle
                poll:
                  interval: 3s
                cycle:
                  hold: 3s
                  authorize_every: 1s
                  resource: REF30
            """
        }

        /// Collects the sequence numbers a subscriber receives, from the first event on.
        final class Subscriber: Sendable {
            final class Seen: Sendable {
                let seqs = Mutex<[Int64]>([])
            }

            let seen = Seen()
            let task: Task<Void, Never>

            init(socket: String) {
                let seen = self.seen
                task = Task {
                    try? await ControlClient.withConnection(to: socket) { client in
                        _ = try await client.call(method: "subscribe", params: ["since": 0])
                        for await notification in client.notifications {
                            if notification.method == "event", let seq = notification.params?["seq"]?.intValue {
                                seen.seqs.withLock { $0.append(seq) }
                            }
                        }
                    }
                }
            }

            var seqs: [Int64] { seen.seqs.withLock { $0 } }
        }

        static func storage(_ socket: String) async -> JSONValue? {
            try? await ControlClient.withConnection(to: socket) { client in
                try await client.call(method: "daemon.status")["storage"]
            }
        }

        /// Waits until the daemon reports storage `state` (and, for "ok", an empty backlog).
        static func waitForStorage(_ state: String, socket: String, within limit: Duration) async throws -> JSONValue? {
            let deadline = ContinuousClock.now + limit
            var last: JSONValue?
            while ContinuousClock.now < deadline {
                last = await storage(socket)
                if last?["state"]?.stringValue == state, state != "ok" || last?["backlog"] == 0 { return last }
                try await Task.sleep(for: .milliseconds(200))
            }
            return last
        }

        /// Every request the backend answered or dropped, by endpoint class.
        static func simulatorRequests(_ url: String) async throws -> (polls: Int, all: Int) {
            let (data, _) = try await URLSession.shared.data(from: URL(string: "\(url)/_sim/stats")!)
            let stats = try JSONValueParser.parse(data, numbers: .integralAsInt)
            var polls = 0
            var all = 0
            for (endpoint, statuses) in stats["requests"]?.objectValue ?? [:] {
                for (status, count) in statuses.objectValue ?? [:] {
                    let count = Int(count.intValue ?? 0)
                    all += count
                    if endpoint == "poll", status != "dropped" { polls += count }
                }
            }
            return (polls, all)
        }

        static func count(_ database: String, _ sql: String) throws -> Int {
            Int(try SQLiteShell.run(database, sql)) ?? -1
        }

        /// What both fault tests check once the daemon has stopped.
        static func expectNothingLost(database: String, subscriber: Subscriber, sim: PassSimProcess) async throws {
            let seqs = try SQLiteShell.run(database, "SELECT seq FROM events ORDER BY seq").split(separator: "\n").compactMap { Int64($0) }
            #expect(!seqs.isEmpty)
            #expect(seqs == Array(1...Int64(seqs.count)), "the event sequence has gaps")
            // The subscriber saw each stored event once, in order (it may stop short of the last ones).
            let seen = subscriber.seqs
            #expect(seen.count > 0)
            #expect(seen == Array(seqs.prefix(seen.count)), "the subscriber saw events out of order, twice, or unstored")
            // Every request the backend saw is in the logs: polls in poll_attempts, the rest in request_attempts.
            let backend = try await simulatorRequests(sim.url)
            let polls = try count(database, "SELECT count(*) FROM poll_attempts WHERE http_status IS NOT NULL")
            let requests = try count(database, "SELECT count(*) FROM request_attempts") + count(database, "SELECT count(*) FROM poll_attempts")
            #expect(polls == backend.polls, "the backend answered \(backend.polls) polls, \(polls) are stored")
            #expect(requests == backend.all, "the backend saw \(backend.all) requests, \(requests) are stored")
        }

        /// Holds `BEGIN EXCLUSIVE` on `database` from another process until `release()`.
        final class ExclusiveLock {
            let process = Process()
            let input = Pipe()
            let output = Pipe()

            init(database: String) throws {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["sqlite3", database]
                process.standardInput = input
                process.standardOutput = output
                try process.run()
                input.fileHandleForWriting.write(Data("PRAGMA busy_timeout = 10000;\nBEGIN EXCLUSIVE;\nSELECT 'held';\n".utf8))
                // The lock is ours once the CLI answers the statement after it.
                _ = readOutput(until: "held")
            }

            /// What the CLI wrote up to and including `marker`.
            private func readOutput(until marker: String) -> String {
                var seen = Data()
                while !String(decoding: seen, as: UTF8.self).contains(marker) {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    seen.append(chunk)
                }
                return String(decoding: seen, as: UTF8.self)
            }

            /// One value read through the connection that holds the lock (the daemon can write nothing meanwhile).
            func value(_ sql: String) -> String {
                input.fileHandleForWriting.write(Data("\(sql);\nSELECT 'end-of-value';\n".utf8))
                return readOutput(until: "end-of-value").split(separator: "\n").first.map(String.init) ?? ""
            }

            func release() {
                input.fileHandleForWriting.write(Data("COMMIT;\n.quit\n".utf8))
                try? input.fileHandleForWriting.close()
                process.waitUntilExit()
            }
        }

        /// pass-sim, a daemon with 20 cycling devices on `database`, and a subscriber from seq 0;
        /// returns once events flow (the first authorizations are stored).
        static func startCyclingLab(
            directory: TemporaryDirectory,
            database: String
        ) async throws -> (PassSimProcess, ChildProcess, Subscriber, String) {
            let sim = try await PassSimProcess.start(["--auto-approve-after", "1s"])
            let config = directory.path("regcoded.yaml")
            try Self.cyclingFleet(backend: sim.url, count: 20).write(toFile: config, atomically: true, encoding: .utf8)
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", socket, "--software-statement", sim.statementFile]
            )
            try #require(await daemon.waitForOutput("regcoded ready"), "\(daemon.text)")
            let subscriber = Subscriber(socket: socket)
            while (try? Self.count(database, "SELECT count(*) FROM events WHERE name = 'setToken'")) ?? 0 < 5, daemon.process.isRunning {
                try await Task.sleep(for: .milliseconds(200))
            }
            return (sim, daemon, subscriber, socket)
        }

        @Test func anExclusiveLockHeldThirtySecondsLosesNothing() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let (sim, daemon, subscriber, socket) = try await Self.startCyclingLab(directory: directory, database: database)

            let lock = try ExclusiveLock(database: database)
            let failing = try await Self.waitForStorage("failing", socket: socket, within: .seconds(15))
            #expect(failing?["state"] == "failing", "\(failing ?? .null)")
            try await Task.sleep(for: .seconds(30))
            let during = await Self.storage(socket)
            #expect((during?["backlog"]?.intValue ?? 0) > 0, "steps wait in memory: \(during ?? .null)")
            lock.release()

            let recovered = try await Self.waitForStorage("ok", socket: socket, within: .seconds(30))
            #expect(recovered?["state"] == "ok", "\(recovered ?? .null)")
            #expect((recovered?["failedWrites"]?.intValue ?? 0) > 0)
            try await Task.sleep(for: .seconds(2))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            subscriber.task.cancel()
            #expect(daemon.text.contains("could not store device steps; keeping them and retrying"))
            #expect(daemon.text.contains("device steps stored again"))
            try await Self.expectNothingLost(database: database, subscriber: subscriber, sim: sim)
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }

        /// A small tmpfs the test mounts (root only; skipped elsewhere).
        static let canMount: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/mount")

        @Test(.enabled(if: canMount, "mounting a small filesystem needs root"))
        func aFullDiskForThirtySecondsLosesNothing() async throws {
            let directory = try TemporaryDirectory()
            let mountPoint = directory.path("small")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            let mount = try Command.run(URL(fileURLWithPath: "/usr/bin/mount"), ["-t", "tmpfs", "-o", "size=16m", "tmpfs", mountPoint])
            try #require(mount.status == 0, "\(mount.stderr)")
            defer { _ = try? Command.run(URL(fileURLWithPath: "/usr/bin/umount"), ["-l", mountPoint]) }

            let database = "\(mountPoint)/db.sqlite"
            let (sim, daemon, subscriber, socket) = try await Self.startCyclingLab(directory: directory, database: database)

            // Fill every byte that is left.
            let filler = "\(mountPoint)/filler"
            let fill = try Command.run(URL(fileURLWithPath: "/usr/bin/dd"), ["if=/dev/zero", "of=\(filler)", "bs=64k"])
            #expect(fill.status != 0, "dd stops at a full disk")
            let failing = try await Self.waitForStorage("failing", socket: socket, within: .seconds(15))
            #expect(failing?["state"] == "failing", "\(failing ?? .null)")
            try await Task.sleep(for: .seconds(30))
            try FileManager.default.removeItem(atPath: filler)

            let recovered = try await Self.waitForStorage("ok", socket: socket, within: .seconds(30))
            #expect(recovered?["state"] == "ok", "\(recovered ?? .null)")
            try await Task.sleep(for: .seconds(2))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            subscriber.task.cancel()
            #expect(daemon.text.contains("could not store device steps; keeping them and retrying"))
            #expect(try SQLiteShell.run(database, "PRAGMA integrity_check") == "ok")
            try await Self.expectNothingLost(database: database, subscriber: subscriber, sim: sim)
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }

        @Test func aGracefulStopRecordsEveryPollTheBackendAnswered() async throws {
            let directory = try TemporaryDirectory()
            let faults = directory.path("faults.json")
            // Slow polls, so that hundreds are in flight at any moment, SIGTERM's included.
            try #"{"poll":{"latencyMs":300,"latencySpreadMs":900}}"#.write(toFile: faults, atomically: true, encoding: .utf8)
            let sim = try await PassSimProcess.start(["--faults", faults])
            let config = directory.path("regcoded.yaml")
            try """
            backend: \(sim.url)
            fleets:
              - name: soak
                count: 400
                poll:
                  interval: 3s
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("s.sock"), "--software-statement", sim.statementFile]
            )
            while (try? Self.count(database, "SELECT count(*) FROM poll_attempts")) ?? 0 < 2_000, daemon.process.isRunning {
                try await Task.sleep(for: .milliseconds(200))
            }
            daemon.signal(SIGTERM)
            let status = await daemon.waitForExit(timeout: .seconds(60))
            #expect(status == 0, "\(daemon.text.suffix(3000))")
            let backend = try await Self.simulatorRequests(sim.url)
            let polls = try Self.count(database, "SELECT count(*) FROM poll_attempts WHERE http_status IS NOT NULL")
            #expect(backend.polls > 2_000)
            #expect(polls == backend.polls, "the backend answered \(backend.polls) polls, \(polls) are stored")
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }
    }
}
