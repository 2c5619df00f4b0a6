import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real executables (`pass-sim`, `regcoded`, `regcodectl`) over real sockets and a real SQLite file.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct DaemonEndToEndTests {
        /// A running pass-sim and regcoded in a temporary directory.
        struct Lab {
            let directory: TemporaryDirectory
            let backend: PassSimProcess
            var daemon: ChildProcess

            var simulator: ChildProcess { backend.process }
            var simulatorURL: String { backend.url }
            var socket: String { directory.path("regcoded.sock") }
            var database: String { directory.path("regcoded.sqlite") }

            static func start(
                devices: Int = 1,
                extraArguments: [String] = [],
                simulatorArguments: [String] = [],
                wire: BackendWire = .http,
                directory: TemporaryDirectory? = nil,
                softwareStatement: Bool = true
            ) async throws -> Lab {
                let directory = try directory ?? TemporaryDirectory()
                let backend = try await PassSimProcess.start(simulatorArguments, wire: wire)
                let daemon = try Self.startDaemon(
                    directory: directory,
                    backend: backend,
                    devices: devices,
                    extraArguments: extraArguments,
                    softwareStatement: softwareStatement
                )
                let lab = Lab(directory: directory, backend: backend, daemon: daemon)
                try await lab.waitUntilServing()
                return lab
            }

            static func startDaemon(
                directory: TemporaryDirectory,
                backend: PassSimProcess,
                devices: Int,
                extraArguments: [String],
                softwareStatement: Bool = true
            ) throws
                -> ChildProcess
            {
                try ChildProcess(
                    "regcoded",
                    (softwareStatement ? backend.daemonArguments : backend.backendArguments) + [
                        "--database", directory.path("regcoded.sqlite"),
                        "--socket", directory.path("regcoded.sock"),
                        "--devices", "\(devices)",
                        "--poll-interval", "3",
                        "--log-level", "debug",
                    ] + extraArguments
                )
            }

            func waitUntilServing() async throws {
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    if let status = try? await ControlClient.withConnection(to: socket, { try await $0.call(method: "daemon.status") }),
                        status["devices"]?.intValue ?? 0 > 0
                    {
                        return
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
                Issue.record("regcoded did not start serving: \(daemon.text)")
                throw CancellationError()
            }

            func approve(_ code: String) async throws -> Int {
                try await backend.request("/_sim/approve", method: "POST", json: #"{"code":"\#(code)","userId":"lab-user"}"#).status
            }

            /// The second screen's part of a login: waits for the code the device shows, approves it, and waits until the
            /// device reports itself authenticated.
            func approveShownCode(_ events: inout ControlClient.Notifications.Iterator) async throws {
                let regcode = try #require(await DaemonEndToEndTests.nextEvent(&events, where: DaemonEndToEndTests.isRegcode))
                let code = try #require(regcode["args"]?["statusDictionary"]?["message"]?.stringValue)
                #expect(try await self.approve(code) == 200)
                _ = try #require(await DaemonEndToEndTests.nextEvent(&events, where: DaemonEndToEndTests.isAuthenticated))
            }
        }

        /// Reads `event` notifications until one matches, with a bound.
        /// The next event matching `predicate`, or nil when none arrives by the deadline (or the
        /// connection ends): the wait is raced against the deadline, so a silent daemon cannot hold it up.
        static func nextEvent(
            _ iterator: inout ControlClient.Notifications.Iterator,
            timeout: Duration = .seconds(30),
            where predicate: @escaping @Sendable (JSONValue) -> Bool
        ) async -> JSONValue? {
            let reader = iterator
            return await withTaskGroup(of: JSONValue?.self) { group in
                group.addTask {
                    var notifications = reader
                    while let notification = await notifications.next() {
                        if notification.method == "event", let params = notification.params, predicate(params) { return params }
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        static func isRegcode(_ event: JSONValue) -> Bool {
            event["name"] == "status" && event["args"]?["statusDictionary"]?["errorId"] == "REGCODE"
        }

        static func isAuthenticated(_ event: JSONValue) -> Bool {
            event["name"] == "setAuthenticationStatus" && event["args"]?["status"] == 1
        }

        @Test(arguments: BackendWire.allCases) func subscriberSeesTheCodeApprovesItAndSeesAuthentication(wire: BackendWire) async throws {
            let lab = try await Lab.start(wire: wire)
            try await ControlClient.withConnection(to: lab.socket) { client in
                let reply = try await client.call(method: "subscribe", params: ["since": 0])
                #expect(reply["subscribed"] == true)
                var events = client.notifications.makeAsyncIterator()
                let regcode = try #require(await Self.nextEvent(&events, where: Self.isRegcode))
                let code = try #require(regcode["args"]?["statusDictionary"]?["message"]?.stringValue)
                #expect(regcode["device"] == "stb-1")
                #expect(regcode["args"]?["statusDictionary"]?["level"] == "success")
                #expect(regcode["args"]?["statusDictionary"]?["expires"]?.intValue != nil)
                #expect(try await lab.approve(code) == 200)
                let done = try #require(await Self.nextEvent(&events, where: Self.isAuthenticated))
                #expect(done["args"] == ["status": 1, "errorCode": ""])
                #expect(done["seq"]!.intValue! > regcode["seq"]!.intValue!)
            }
            // Stored before sent: the database has the same events, gap-free from 1.
            let seqs = try SQLiteShell.run(lab.database, "SELECT group_concat(seq) FROM events ORDER BY seq")
            let numbers = seqs.split(separator: ",").compactMap { Int($0) }
            #expect(numbers == Array(1...numbers.count))
            let names = try SQLiteShell.run(lab.database, "SELECT group_concat(name, ' ') FROM (SELECT name FROM events ORDER BY seq)")
            #expect(
                names
                    == "setRequestorComplete setAuthenticationStatus sendTrackingData displayProviderDialog sendTrackingData status setAuthenticationStatus sendTrackingData"
            )
            // The simulator saw the wire asked for, and nothing else.
            let stats = try JSONValueParser.parse(try await lab.backend.request("/_sim/stats").body)
            for key in BackendWire.allCases.map(\.expectedConnectionKey) {
                let count = stats["connections"]?[key]?.intValue ?? 0
                if key == wire.expectedConnectionKey { #expect(count > 0, "\(key)") } else { #expect(count == 0, "\(key)") }
            }
        }

        @Test func sinceReplaysExactlyWhatWasMissed() async throws {
            let lab = try await Lab.start(devices: 2)
            // Wait until both devices showed their codes.
            let all: [JSONValue] = try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                var seen: [JSONValue] = []
                var codes = 0
                while codes < 2, let notification = await events.next() {
                    guard notification.method == "event", let params = notification.params else { continue }
                    seen.append(params)
                    if Self.isRegcode(params) { codes += 1 }
                }
                return seen
            }
            let seqs = all.compactMap { $0["seq"]?.intValue }
            #expect(seqs == Array(seqs[0]...seqs[seqs.count - 1]))
            // A client that saw up to the 5th event asks for the rest, for one device and one callback.
            let since = seqs[4]
            let expected = all.filter { ($0["seq"]?.intValue ?? 0) > since && $0["device"] == "stb-2" && $0["name"] == "status" }
            let replayed: [JSONValue] = try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": .int(since), "devices": ["stb-2"], "events": ["status"]])
                var events = client.notifications.makeAsyncIterator()
                var got: [JSONValue] = []
                while got.count < expected.count, let notification = await events.next() {
                    if notification.method == "event", let params = notification.params { got.append(params) }
                }
                return got
            }
            #expect(!expected.isEmpty)
            #expect(replayed == expected)
        }

        @Test func badLinesGetJSONRPCErrorsAndTheConnectionKeepsWorking() async throws {
            let lab = try await Lab.start()
            let raw = try RawSocket(path: lab.socket)
            raw.send("{not json\n")
            #expect(raw.readJSON()?["error"]?["code"] == -32700)
            raw.send(#"{"jsonrpc":"2.0","id":1,"method":"no.such.method"}"# + "\n")
            let unknown = raw.reply(id: 1)
            #expect(unknown?["error"]?["code"] == -32601)
            raw.send(#"{"jsonrpc":"2.0","id":2,"method":"getAuthentication","params":{"device":42}}"# + "\n")
            #expect(raw.reply(id: 2)?["error"]?["code"] == -32602)
            raw.send(#"{"jsonrpc":"2.0","id":3,"method":"getAuthentication","params":{"device":"stb-99"}}"# + "\n")
            #expect(raw.reply(id: 3)?["error"]?["code"] == 1001)
            raw.send(#"{"jsonrpc":"2.0","id":4,"method":"daemon.status"}"# + "\n")
            #expect(raw.reply(id: 4)?["result"]?["devices"] == 1)
        }

        @Test func twoMebibyteLineIsRefusedWithoutDisturbingOtherClients() async throws {
            let lab = try await Lab.start()
            let other = try RawSocket(path: lab.socket)
            let big = try RawSocket(path: lab.socket)
            let padding = String(repeating: "x", count: 2 << 20)
            big.send(#"{"jsonrpc":"2.0","id":1,"method":"daemon.status","params":{"pad":""# + padding + "\"}}\n")
            other.send(#"{"jsonrpc":"2.0","id":7,"method":"devices.list"}"# + "\n")
            #expect(other.reply(id: 7)?["result"]?["devices"]?.arrayValue?.count == 1)
            let refused = big.readJSON()
            #expect(refused?["error"]?["code"] == -32600)
            #expect(refused?["id"] == .null)
            big.send(#"{"jsonrpc":"2.0","id":2,"method":"daemon.status"}"# + "\n")
            #expect(big.reply(id: 2)?["result"] != nil)
        }

        @Test func subscriberThatNeverReadsIsCutOffWhileAnotherKeepsReceiving() async throws {
            let lab = try await Lab.start(extraArguments: ["--subscriber-buffer", "1024"])
            let stalled = try RawSocket(path: lab.socket)
            var size: Int32 = 4096
            setsockopt(stalled.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            stalled.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{}}"# + "\n")
            let reader = try RawSocket(path: lab.socket)
            reader.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"events":["selectedProvider"]}}"# + "\n")
            #expect(reader.reply(id: 1)?["result"]?["subscribed"] == true)
            // Each getSelectedProvider call fires one selectedProvider event; pipeline a few thousand.
            let total = 3000
            // The reader keeps reading on its own thread while the calls go out.
            let progress = Counter()
            let readerDone = Task.detached { () -> Int in
                var received = 0
                while received < total, let message = reader.readJSON() {
                    if message["method"] == "event" {
                        received += 1
                        progress.set(received)
                    }
                }
                return received
            }
            let caller = try RawSocket(path: lab.socket)
            // Pipelined in rounds: the server answers in order and waits for each reply to be taken,
            // so the caller reads a round's replies before sending the next.
            for round in 0..<(total / 100) {
                var batch = ""
                for id in (round * 100 + 1)...(round * 100 + 100) {
                    batch += #"{"jsonrpc":"2.0","id":\#(id),"method":"getSelectedProvider","params":{"device":"stb-1"}}"# + "\n"
                }
                caller.send(batch)
                #expect(caller.reply(id: round * 100 + 100)?["result"] != nil)
                // The healthy subscriber is a reader that keeps up: let it take this round's events
                // before the next, so only the stalled one can fall a whole buffer behind.
                let deadline = ContinuousClock.now + .seconds(10)
                while progress.value < (round + 1) * 100, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            #expect(await readerDone.value == total)
            let status = try await ControlClient.withConnection(to: lab.socket) { try await $0.call(method: "daemon.status") }
            #expect(status["cutOffSubscribers"]?.intValue ?? 0 >= 1)
        }

        @Test(arguments: BackendWire.allCases) func sigkillMidPollThenRestartResumesTheSameCode(wire: BackendWire) async throws {
            var lab = try await Lab.start(wire: wire)
            let (code, lastSeq): (String, Int64) = try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                let regcode = try #require(await Self.nextEvent(&events, where: Self.isRegcode))
                return (regcode["args"]!["statusDictionary"]!["message"]!.stringValue!, regcode["seq"]!.intValue!)
            }
            // Let it poll a couple of times, then kill it hard.
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, (Int(try SQLiteShell.run(lab.database, "SELECT count(*) FROM poll_attempts")) ?? 0) < 2 {
                try await Task.sleep(for: .milliseconds(200))
            }
            let clientBefore = try SQLiteShell.run(lab.database, "SELECT client_id || ':' || client_secret FROM client_credentials")
            let tokenBefore = try SQLiteShell.run(lab.database, "SELECT token FROM access_tokens")
            let seqBefore = Int64(try SQLiteShell.run(lab.database, "SELECT max(seq) FROM events")) ?? 0
            #expect(!clientBefore.isEmpty)
            lab.daemon.signal(SIGKILL)
            _ = await lab.daemon.waitForExit()

            lab.daemon = try Lab.startDaemon(directory: lab.directory, backend: lab.backend, devices: 1, extraArguments: [])
            try await lab.waitUntilServing()
            let pollsAfterRestart = try await ControlClient.withConnection(to: lab.socket) { client -> Int64 in
                _ = try await client.call(method: "subscribe", params: ["since": .int(seqBefore)])
                var events = client.notifications.makeAsyncIterator()
                #expect(try await lab.approve(code) == 200)
                var seen: [JSONValue] = []
                while let event = await Self.nextEvent(&events, where: { _ in true }) {
                    seen.append(event)
                    if Self.isAuthenticated(event) { break }
                }
                let seqs = seen.compactMap { $0["seq"]?.intValue }
                #expect(seqs.first == seqBefore + 1, "events continue without a gap")
                #expect(seqs == Array((seqBefore + 1)...(seqBefore + Int64(seqs.count))))
                #expect(!seen.contains(where: Self.isRegcode), "no new REGCODE after restart")
                #expect(seen.contains(where: Self.isAuthenticated))
                let polled = try SQLiteShell.run(lab.database, "SELECT count(DISTINCT code) FROM poll_attempts")
                #expect(polled == "1", "only the original code was ever polled")
                return Int64(try SQLiteShell.run(lab.database, "SELECT count(*) FROM poll_attempts")) ?? 0
            }
            #expect(pollsAfterRestart >= 3)
            #expect(lastSeq <= seqBefore)
            #expect(try SQLiteShell.run(lab.database, "SELECT client_id || ':' || client_secret FROM client_credentials") == clientBefore)
            #expect(try SQLiteShell.run(lab.database, "SELECT token FROM access_tokens") == tokenBefore)
            #expect(try SQLiteShell.run(lab.database, "SELECT count(*) FROM codes") == "1")
        }

        @Test func regcodectlReportsADaemonThatIsNotRunning() async throws {
            let directory = try TemporaryDirectory()
            let ctl = try ChildProcess("regcodectl", ["devices", "--socket", directory.path("none.sock")])
            let status = await ctl.waitForExit()
            #expect(status == 3)
            // The message names the path and the fix.
            #expect(ctl.text.contains("no daemon at \(directory.path("none.sock"))"), "\(ctl.text)")
            #expect(ctl.text.contains("start one with 'regcoded'"), "\(ctl.text)")
        }

        @Test func regcodectlListsDevicesAndWatchesEvents() async throws {
            let lab = try await Lab.start()
            let watch = try ChildProcess("regcodectl", ["watch", "--socket", lab.socket, "--since", "0", "--count", "6"])
            #expect(await watch.waitForExit() == 0)
            #expect(watch.text.contains("stb-1 status REGCODE [success]"))
            // Times are UTC and say so, the expiry as the README shows it.
            #expect(
                watch.text.range(of: #"REGCODE \[success\] \w+ \(expires \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)"#, options: .regularExpression) != nil,
                "\(watch.text)"
            )
            #expect(watch.text.contains("#1 "))
            let devices = try ChildProcess("regcodectl", ["devices", "--socket", lab.socket])
            #expect(await devices.waitForExit() == 0)
            #expect(devices.text.contains("DEVICE"))
            #expect(devices.text.contains("stb-1"))
            #expect(devices.text.contains("polling"))
            let call = try ChildProcess("regcodectl", ["call", "--socket", lab.socket, "devices.get", #"{"device":"stb-1"}"#])
            #expect(await call.waitForExit() == 0)
            #expect(call.text.contains("\"deviceId\""))
            let bad = try ChildProcess("regcodectl", ["call", "--socket", lab.socket, "devices.get", #"{"device":"nope"}"#])
            #expect(await bad.waitForExit() == 1)
            #expect(bad.text.contains("unknown device 'nope'"))
        }

        @Test func badConfigurationNamesFileKeyAndReasonAndTouchesNothing() async throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("bad.yaml")
            try "fleets:\n  - name: stb\n    count: 2\n    poll:\n      interval: 1s\n".write(toFile: config, atomically: true, encoding: .utf8)
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock")]
            )
            #expect(await daemon.waitForExit() == 2)
            #expect(daemon.text.contains(config))
            #expect(daemon.text.contains("fleets[0].poll"))
            #expect(daemon.text.contains("3 s floor"))
            #expect(!FileManager.default.fileExists(atPath: directory.path("db.sqlite")))
            try "fleets:\n  - name: stb\n    intervall: 5\n".write(toFile: config, atomically: true, encoding: .utf8)
            let typo = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock")]
            )
            #expect(await typo.waitForExit() == 2)
            #expect(typo.text.contains("fleets[0].intervall: unknown key"))
        }
    }
}
