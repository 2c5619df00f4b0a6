import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every listener bounded, with the real executables: floods past the connection caps, idle and half-sent
/// connections, against `regcoded` (control socket, `--http`, `--metrics`) and `pass-sim`.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(3))) struct ListenerBoundsEndToEndTests {
        static func status(_ socket: String) async -> JSONValue? {
            try? await ControlClient.withConnection(to: socket) { try await $0.call(method: "daemon.status") }
        }

        static func polls(_ database: String) -> Int {
            (try? SQLiteShell.run(database, "SELECT count(*) FROM poll_attempts")).flatMap { Int($0) } ?? 0
        }

        /// Waits (bounded) until `condition` holds on the daemon's status; returns the last status.
        static func waitForStatus(_ socket: String, timeout: Duration = .seconds(30), until condition: (JSONValue) -> Bool) async -> JSONValue? {
            let deadline = ContinuousClock.now + timeout
            var last = await status(socket)
            while ContinuousClock.now < deadline {
                if let last, condition(last) { return last }
                try? await Task.sleep(for: .milliseconds(200))
                last = await status(socket)
            }
            return last
        }

        /// 256 descriptors: the control socket may hold 16 connections and `--http` 32 (see `DescriptorBudget`).
        /// 3,000 connections to `--http` and 600 to the socket would each spend every descriptor the daemon has.
        @Test func aFloodPastTheCapsIsClosedAtOnceAndCountedWhileTheFleetPolls() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "/bin/sh",
                [
                    "-c", #"ulimit -n 256 && exec "$0" "$@""#, BuiltProducts.url("regcoded").path,
                    "--database", database, "--socket", socket, "--simulator-listen", "127.0.0.1:0", "--devices", "3",
                    "--poll-interval", "3", "--no-print-codes", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
                ],
                absolute: true
            )
            #expect(await daemon.waitForOutput("metrics.url=http://127.0.0.1:"), "\(daemon.text)")
            #expect(await daemon.waitForOutput("console: http://127.0.0.1:"), "\(daemon.text)")
            let httpPort = try #require(port(after: "console: http://127.0.0.1:", in: daemon.text))
            let metricsPort = try #require(port(after: "metrics.url=http://127.0.0.1:", in: daemon.text))
            let started = await Self.waitForStatus(socket) { ($0["devices"]?.intValue ?? 0) == 3 }
            #expect(started?["listeners"]?["control"]?["cap"] == .int(16), "\(String(describing: started))")
            #expect(started?["listeners"]?["http"]?["cap"] == .int(32))

            let http = FloodSockets()
            let control = FloodSockets()
            let metrics = FloodSockets()
            http.connect(tcpPort: httpPort, count: 3_000)
            control.connect(unixPath: socket, count: 600)
            metrics.connect(tcpPort: metricsPort, count: 200)
            #expect(http.count == 3_000)
            #expect(control.count == 600)
            #expect(metrics.count == 200)

            // Past each cap the connections are accepted and closed at once.
            #expect(await http.waitUntilClosed(3_000 - 32) >= 3_000 - 32)
            #expect(await control.waitUntilClosed(600 - 16) >= 600 - 16)
            #expect(await metrics.waitUntilClosed(200 - 1) >= 200 - 1)

            // The daemon lives, answers on the socket once its flood is gone, and counted what it refused.
            control.closeAll()
            let pollsBefore = Self.polls(database)
            let after = await Self.waitForStatus(socket) { ($0["listeners"]?["http"]?["refused"]?.intValue ?? 0) >= 3_000 - 32 }
            #expect(daemon.process.isRunning, "\(daemon.text)")
            let listeners = try #require(after?["listeners"], "daemon.status did not answer: \(daemon.text.suffix(2_000))")
            #expect((listeners["http"]?["refused"]?.intValue ?? 0) >= 3_000 - 32)
            #expect((listeners["http"]?["open"]?.intValue ?? 0) <= 32)
            #expect((listeners["control"]?["refused"]?.intValue ?? 0) >= 600 - 16)
            #expect((listeners["metrics"]?["refused"]?.intValue ?? 0) >= 200 - 1)

            // The fleet keeps polling while the flood is held.
            let deadline = ContinuousClock.now + .seconds(30)
            while Self.polls(database) < pollsBefore + 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(Self.polls(database) >= pollsBefore + 3, "the fleet stopped polling: \(daemon.text.suffix(2_000))")

            // One warning per interval, not one line per refused connection.
            let refusals = daemon.text.components(separatedBy: "refused a connection over the listener's cap").count - 1
            #expect(refusals >= 1 && refusals <= 12, "\(refusals) refusal lines")

            http.closeAll()
            metrics.closeAll()
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text.suffix(2_000))")
        }

        /// Idle and half-sent connections to `--http` and the control socket are closed after the configured
        /// timeouts; a socket subscriber and an event stream that only read stay open.
        @Test func idleAndHalfSentConnectionsAreClosedAndReadersStay() async throws {
            let directory = try TemporaryDirectory()
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--database", directory.path("db.sqlite"), "--socket", socket, "--simulator-listen", "127.0.0.1:0",
                    "--devices", "1", "--no-print-codes", "--http", "127.0.0.1:0", "--http-auth", "none", "--idle-timeout", "1s", "--read-timeout",
                    "1s",
                ]
            )
            #expect(await daemon.waitForOutput("console: http://127.0.0.1:"), "\(daemon.text)")
            let httpPort = try #require(port(after: "console: http://127.0.0.1:", in: daemon.text))
            _ = await Self.waitForStatus(socket) { ($0["devices"]?.intValue ?? 0) == 1 }

            // Readers first: a subscriber on the socket and an event stream over HTTP.
            let subscriber = try RawSocket(path: socket)
            subscriber.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{}}"# + "\n")
            #expect(subscriber.reply(id: 1)?["result"] != nil)
            let stream = FloodSockets()
            stream.connect(tcpPort: httpPort, count: 1)
            stream.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", to: 0..<1)

            let n = 20
            let http = FloodSockets()
            let control = FloodSockets()
            http.connect(tcpPort: httpPort, count: 2 * n)
            control.connect(unixPath: socket, count: 2 * n)
            http.send("POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty", to: n..<2 * n)
            control.send(#"{"jsonrpc":"2.0","id":1,"meth"#, to: n..<2 * n)

            #expect(await http.waitUntilClosed(n, in: 0..<n) == n, "idle HTTP connections")
            #expect(await http.waitUntilClosed(n, in: n..<2 * n) == n, "half-sent HTTP requests")
            #expect(await control.waitUntilClosed(n, in: 0..<n) == n, "idle control connections")
            #expect(await control.waitUntilClosed(n, in: n..<2 * n) == n, "half-sent control lines")

            // The readers outlive several timeouts: the subscriber still answers, the stream is still open.
            try await Task.sleep(for: .seconds(3))
            #expect(stream.closedByServer() == 0)
            subscriber.send(#"{"jsonrpc":"2.0","id":2,"method":"daemon.status"}"# + "\n")
            #expect(subscriber.reply(id: 2)?["result"]?["listeners"] != nil)
            let status = await Self.status(socket)
            #expect((status?["listeners"]?["http"]?["timedOut"]?.intValue ?? 0) >= Int64(2 * n))
            #expect((status?["listeners"]?["control"]?["timedOut"]?.intValue ?? 0) >= Int64(2 * n))

            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text.suffix(2_000))")
        }

        /// pass-sim: a flood past `--max-connections` is closed at once and counted in `/_sim/stats`; idle and
        /// half-sent connections are closed after the timeouts.
        @Test func passSimIsBoundedToo() async throws {
            let sim = try await PassSimProcess.start(["--max-connections", "40", "--idle-timeout", "1", "--read-timeout", "1"])
            let simPort = try #require(port(after: "127.0.0.1:", in: sim.url))
            let flood = FloodSockets()
            flood.connect(tcpPort: simPort, count: 500)
            #expect(flood.count == 500)
            // The first connections are held (idle ones until the timeout), the rest closed at once.
            #expect(await flood.waitUntilClosed(500) == 500, "every connection is closed: over the cap at once, the rest idle")
            let idle = FloodSockets()
            idle.connect(tcpPort: simPort, count: 20)
            idle.send("GET /_sim/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nAcc", to: 10..<20)
            // The timeouts are a second; the wait is long because a loaded machine may take long to close 20 sockets.
            let closedIdle = await idle.waitUntilClosed(20, timeout: .seconds(90))
            let statsAfterIdle = (try? await sim.request("/_sim/stats").body).map { String(decoding: $0, as: UTF8.self) } ?? ""
            #expect(closedIdle == 20, "idle and half-sent connections closed; /_sim/stats: \(statsAfterIdle.prefix(600))")

            let (status, body) = try await sim.request("/_sim/stats")
            #expect(status == 200)
            let stats = try JSONValueParser.parse(body, numbers: .integralAsInt)
            #expect(stats["listener"]?["cap"] == .int(40))
            #expect((stats["listener"]?["refused"]?.intValue ?? 0) >= 500 - 40)
            #expect((stats["listener"]?["timed_out"]?.intValue ?? 0) >= 20)
        }

        /// pass-sim on each wire: connections that send nothing, half a request head, a head and part of its body, or
        /// (over TLS) half a handshake are closed at the read timeout, long before the idle timeout, and counted.
        @Test(arguments: BackendWire.allCases)
        func passSimClosesSlowHeadsBodiesAndHandshakesAtTheReadTimeout(wire: BackendWire) async throws {
            let sim = try await PassSimProcess.start(["--idle-timeout", "600", "--read-timeout", "1"], wire: wire)
            let simPort = try #require(port(after: "127.0.0.1:", in: sim.url))
            let slow = FloodSockets()
            slow.connect(tcpPort: simPort, count: 30)
            #expect(slow.count == 30)
            if wire.usesTLS {
                // A handshake record that announces 64 bytes and brings 2, and one that never ends its ClientHello.
                slow.send("\u{16}\u{03}\u{01}\u{00}\u{40}\u{01}\u{00}", to: 10..<20)
                slow.send("\u{16}\u{03}", to: 20..<30)
            } else {
                slow.send("GET /_sim/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nAcc", to: 10..<20)
                slow.send(
                    "POST /_sim/approve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
                    to: 20..<30
                )
            }
            // The read timeout is seconds; the wait is long because a loaded machine may take long to close 30 sockets.
            #expect(await slow.waitUntilClosed(30, timeout: .seconds(60)) == 30, "every slow connection closed at the read timeout")

            let (status, body) = try await sim.request("/_sim/stats")
            #expect(status == 200)
            let stats = try JSONValueParser.parse(body, numbers: .integralAsInt)
            #expect((stats["listener"]?["timed_out"]?.intValue ?? 0) >= 30)
        }
    }
}
