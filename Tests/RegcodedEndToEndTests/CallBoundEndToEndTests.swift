import ControlRPC
import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// The 256-call wedge over the control socket, with the real daemon: a device that has not completed
    /// `setRequestor` and has 256 calls waiting refuses a 257th with 1004 (and says so on its event stream), still
    /// accepts `setRequestor`, and then answers every waiting call in order.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct CallBoundEndToEndTests {
        @Test func aDeviceWith256WaitingCallsStillAcceptsSetRequestorAndAnswersThemAll() async throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            try """
            simulator:
              listen: 127.0.0.1:0
            fleets:
              - name: stb
                count: 1
                scenario: idle
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let socket = directory.path("s.sock")
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess("regcoded", ["--config", config, "--database", database, "--socket", socket])
            try #require(await daemon.waitForOutput("regcoded ready"), "\(daemon.text)")
            let refusal = try await ControlClient.withConnection(to: socket) { client -> RPCError? in
                for index in 0..<256 {
                    _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": .string("r\(index)")])
                }
                do {
                    _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "r256"])
                    return nil
                } catch let error as RPCError {
                    return error
                }
            }
            #expect(refusal?.code == 1004, "\(String(describing: refusal))")
            let setRequestorError = try await ControlClient.withConnection(to: socket) { client -> RPCError? in
                do {
                    _ = try await client.call(method: "setRequestor", params: ["device": "stb-1"])
                    return nil
                } catch let error as RPCError {
                    return error
                }
            }
            #expect(setRequestorError == nil, "setRequestor was refused: \(String(describing: setRequestorError))")
            // Every waiting call is answered, in the order it was made; the refused one is on the event stream.
            var answered: [String] = []
            for _ in 0..<300 where answered.count < 256 && daemon.process.isRunning {
                let rows = try SQLiteShell.run(
                    database,
                    "SELECT json_extract(args, '$.resource') FROM events WHERE name = 'tokenRequestFailed' ORDER BY seq"
                )
                answered = rows.split(separator: "\n").map(String.init)
                if answered.count < 256 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(answered == (0..<256).map { "r\($0)" })
            let refused = try SQLiteShell.run(database, "SELECT args FROM events WHERE name = 'queue.callRefused'")
            #expect(refused == #"{"call":"checkAuthorization","limit":256,"waiting":256}"#)
            let completed = try SQLiteShell.run(database, "SELECT count(*) FROM events WHERE name = 'setRequestorComplete'")
            #expect(completed == "1")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }
}
