import ControlRPC
import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real daemon with its database locked by another process and 256 `devices.reset` calls waiting on it (192 on
/// the socket, 64 over `POST /rpc`: the socket's cap is a quarter of the descriptor reserve, 256, and the probe needs
/// a connection too): the control plane still answers (`daemon.status`, `devices.list`, `devices.get`, `rpc.discover`)
/// on both transports while the resets wait, and a reset that gives up says storage is unavailable and the call may
/// be retried (1004), never -32603.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(4))) struct StorageStallControlTests {
        /// The answers the resets got, as they arrive.
        final class Answers: Sendable {
            private let list = Mutex<[JSONValue]>([])
            func append(_ answer: JSONValue) { list.withLock { $0.append(answer) } }
            var all: [JSONValue] { list.withLock { $0 } }
        }

        /// A session that opens as many connections as the test asks for (the shared one queues past a few).
        static let session: URLSession = {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 128
            configuration.timeoutIntervalForRequest = 120
            return URLSession(configuration: configuration)
        }()

        @Test func readCallsAnswerWhileTwoHundredFiftySixResetsWaitOnALockedDatabase() async throws {
            let directory = try TemporaryDirectory()
            let sim = try await PassSimProcess.start(["--no-throttle"])
            let config = directory.path("regcoded.yaml")
            try """
            backend: \(sim.url)
            print_codes: false
            fleets:
              - name: stall
                count: 257
                ramp: 2s
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--config", config, "--database", database, "--socket", socket, "--software-statement", sim.statementFile,
                    "--http", "127.0.0.1:0",
                ]
            )
            try #require(await daemon.waitForOutput("regcoded ready", timeout: .seconds(60)), "\(daemon.text)")
            try #require(await daemon.waitForOutput("console: "), "\(daemon.text)")
            let text = daemon.text
            let console = text[try #require(text.range(of: "console: ")).upperBound...].prefix { !$0.isWhitespace }
            let (http, token) = HTTPTransportTests.split(String(console))
            // Every device up (they ramp over 2 s).
            var listed: [String] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while listed.count < 257, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                listed = try await ControlClient.withConnection(to: socket) { client in
                    try await client.call(method: "devices.list")["devices"]?.arrayValue?.compactMap { $0["device"]?.stringValue } ?? []
                }
            }
            try #require(listed.count == 257, "\(listed.count) devices")
            // 256 are reset; the last, untouched, is the one `devices.get` reads (a device being reset is out of the
            // fleet until its new row is written).
            let probed = listed[256]

            let lock = try StorageFaultEndToEndTests.ExclusiveLock(database: database)
            let answers = Answers()
            let names = Array(listed.prefix(256))
            let resets = Task {
                await withTaskGroup(of: JSONValue.self) { group in
                    for (index, name) in names.enumerated() {
                        group.addTask {
                            if index % 4 == 3 {
                                let (status, answer) =
                                    (try? await HTTPTransportTests.post(
                                        http,
                                        #"{"jsonrpc":"2.0","id":1,"method":"devices.reset","params":{"device":"\#(name)"}}"#,
                                        token: token,
                                        session: Self.session
                                    )) ?? (0, nil)
                                return answer?["result"] ?? answer?["error"] ?? ["transport": .string("HTTP \(status)")]
                            }
                            do {
                                return try await ControlClient.withConnection(to: socket) { client in
                                    try await client.call(method: "devices.reset", params: ["device": .string(name)])
                                }
                            } catch let error as RPCError {
                                return error.jsonValue
                            } catch {
                                return ["transport": .string("\(error)")]
                            }
                        }
                    }
                    for await answer in group { answers.append(answer) }
                }
            }
            // Every reset has been read and is waiting (the lock holds their writes) before the probes start.
            try await Task.sleep(for: .seconds(1))
            let answeredBeforeProbes = answers.all.count

            var slowest: Duration = .zero
            for _ in 0..<5 {
                let began = ContinuousClock.now
                let (status, answer) = try await HTTPTransportTests.post(
                    http,
                    #"{"jsonrpc":"2.0","id":1,"method":"daemon.status"}"#,
                    token: token,
                    session: Self.session
                )
                #expect(status == 200 && answer?["result"]?["version"] != nil, "\(status) \(answer ?? .null)")
                slowest = max(slowest, ContinuousClock.now - began)
            }
            try await ControlClient.withConnection(to: socket) { client in
                for _ in 0..<5 {
                    for (method, params) in [
                        ("daemon.status", nil), ("devices.list", nil), ("devices.get", ["device": .string(probed)]), ("rpc.discover", nil),
                    ] as [(String, JSONValue?)] {
                        let began = ContinuousClock.now
                        _ = try await client.call(method: method, params: params)
                        slowest = max(slowest, ContinuousClock.now - began)
                    }
                }
            }
            let answeredDuringProbes = answers.all.count
            print("slowest read call with the database locked and \(names.count) resets waiting: \(slowest)")
            // The resets were still waiting on storage all along: the probes went past them.
            #expect(answeredBeforeProbes == 0 && answeredDuringProbes < names.count, "\(answeredDuringProbes) resets answered")
            // A generous bound: before, with 64 resets waiting, these calls timed out after 10 s.
            #expect(slowest < .seconds(1), "a read call took \(slowest) while resets waited on storage")

            // Past the busy timeout some resets give up: a retryable storage error with the storage state.
            try await Task.sleep(for: .seconds(7))
            lock.release()
            await resets.value
            let all = answers.all
            #expect(all.count == names.count)
            var gaveUp = 0
            for answer in all {
                if answer["reset"] == true { continue }
                #expect(answer["code"] == 1004, "\(answer)")
                #expect(answer["data"]?["reason"] == "storage" && answer["data"]?["retryable"] == true, "\(answer)")
                #expect(answer["data"]?["storage"]?["state"] != nil, "\(answer)")
                gaveUp += 1
            }
            print("resets: \(all.count - gaveUp) done after the lock, \(gaveUp) gave up with 1004 storage")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text)")
            sim.process.signal(SIGTERM)
        }
    }
}
