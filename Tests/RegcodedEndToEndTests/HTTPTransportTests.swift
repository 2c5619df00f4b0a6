import Foundation
import RegcodeSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension EndToEnd {
    /// The control API over HTTP against the real daemon: one suite of calls over both transports.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct HTTPTransportTests {
        /// A daemon with no configured devices, its socket and its HTTP listener on a free port.
        static func startDaemon(
            _ directory: TemporaryDirectory,
            http: String = "127.0.0.1:0",
            extra: [String] = []
        ) async throws -> (ChildProcess, String) {
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock"), "--simulator-listen", "127.0.0.1:0",
                    "--devices", "0", "--http", http,
                ] + extra
            )
            let marker = "console: "
            try #require(await daemon.waitForOutput("/activate"), "\(daemon.text)")
            try #require(await daemon.waitForOutput(marker), "\(daemon.text)")
            let after = try #require(daemon.text.range(of: marker)).upperBound
            let url = String(daemon.text[after...].prefix { !$0.isWhitespace })
            return (daemon, url)
        }

        /// The console URL's address and the token in its fragment (the daemon's generated one), if any.
        static func split(_ url: String) -> (base: String, token: String?) {
            guard let mark = url.range(of: "#token=") else { return (url, nil) }
            return (String(url[..<mark.lowerBound]), String(url[mark.upperBound...]))
        }

        /// POSTs `body` to `/rpc` with `token`, or with the token of the console URL's fragment when none is given.
        static func post(_ url: String, _ body: String, token: String? = nil, session: URLSession = .shared) async throws -> (Int, JSONValue?) {
            let (url, printed) = split(url)
            let token = token ?? printed
            var request = URLRequest(url: URL(string: url + "rpc")!)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            request.httpBody = Data(body.utf8)
            let (data, response) = try await session.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONValueParser.parse(data, numbers: .integralAsInt))
        }

        @Test func theSameCallsGetTheSameAnswersOverTheSocketAndOverHTTP() async throws {
            let directory = try TemporaryDirectory()
            let (daemon, url) = try await Self.startDaemon(directory)
            let socket = try RawSocket(path: directory.path("s.sock"))
            var id = 0
            func overSocket(_ method: String, _ params: String) -> JSONValue? {
                id += 1
                socket.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"# + "\n")
                return socket.reply(id: id)
            }
            // Wait until the daemon has brought its (zero) devices up.
            let deadline = ContinuousClock.now + .seconds(20)
            while overSocket("daemon.status", "{}")?["result"]?["starting"] != false, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(overSocket("devices.add", #"{"device":"lab-1","scenario":"idle"}"#)?["result"]?["device"] == "lab-1")

            let calls: [(String, String)] = [
                ("rpc.discover", "{}"), ("devices.list", "{}"), ("devices.get", #"{"device":"lab-1"}"#), ("devices.polls", #"{"device":"lab-1"}"#),
                ("fleets.stats", "{}"), ("devices.get", #"{"device":"ghost"}"#), ("devices.get", "{}"), ("devices.get", #"{"device":"lab-1","x":1}"#),
                ("nope", "{}"), ("devices.add", #"{"device":"lab-1"}"#), ("setOptions", #"{"device":"lab-1","options":{"bogus":"1"}}"#),
                ("devices.polls", #"{"device":"lab-1","limit":0}"#), ("simulator.approve", #"{"code":"ZZZZZZZ"}"#),
                ("getAuthorization", #"{"device":"lab-1"}"#),
            ]
            for (method, params) in calls {
                let socketAnswer = overSocket(method, params)
                let (status, httpAnswer) = try await Self.post(url, #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
                #expect(status == 200, "\(method)")
                #expect(socketAnswer != nil && socketAnswer == httpAnswer, "\(method) \(params)")
            }
            // Every method the document lists exists on both transports (subscribe streams at GET /events on HTTP).
            let document = try #require(overSocket("rpc.discover", "{}")?["result"])
            let names = (document["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            #expect(names.count >= 30)
            for name in names where name != "subscribe" {
                let (_, answer) = try await Self.post(url, #"{"jsonrpc":"2.0","id":1,"method":"\#(name)","params":{}}"#)
                #expect(answer?["error"]?["code"] != .int(-32601), "\(name)")
            }
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        /// Both Hummingbird listeners (console/API and metrics) stop at their turn in the daemon's shutdown; one that
        /// stopped on SIGTERM by itself made the daemon exit 1 in 7 runs of 10.
        @Test func sigtermStopsTheDaemonWithBothHTTPListenersCleanly() async throws {
            for _ in 0..<4 {
                let directory = try TemporaryDirectory()
                let (daemon, _) = try await Self.startDaemon(directory, extra: ["--metrics", "127.0.0.1:0"])
                try #require(await daemon.waitForOutput("metrics listening"), "\(daemon.text)")
                daemon.signal(SIGTERM)
                #expect(await daemon.waitForExit() == 0, "\(daemon.text)")
                #expect(!daemon.text.contains("finished unexpectedly"), "\(daemon.text)")
            }
        }

        @Test func offLoopbackTheListenerNeedsATokenAndAWrongOneGets401() async throws {
            let directory = try TemporaryDirectory()
            let refused = try ChildProcess(
                "regcoded",
                ["--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock"), "--devices", "0", "--http", "0.0.0.0:0"]
            )
            #expect(await refused.waitForExit() == 2)
            #expect(refused.text.contains("http_token_file"), "\(refused.text)")
            #expect(!FileManager.default.fileExists(atPath: directory.path("db.sqlite")))

            let token = "0123456789abcdef-lab-token"
            try (token + "\n").write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
            let (daemon, url) = try await Self.startDaemon(directory, http: "0.0.0.0:0", extra: ["--http-token-file", directory.path("token")])
            let local = url.replacingOccurrences(of: "0.0.0.0", with: "127.0.0.1")
            let call = #"{"jsonrpc":"2.0","id":1,"method":"daemon.status"}"#
            for wrong in ["0123456789abcdef-lab-tokem", ""] {
                let (status, body) = try await Self.post(local, call, token: wrong)
                #expect(status == 401)
                #expect(body == nil)
            }
            let (status, body) = try await Self.post(local, call, token: token)
            #expect(status == 200)
            #expect(body?["result"]?["version"] != nil)
            #expect(!daemon.text.contains(token))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }
}
