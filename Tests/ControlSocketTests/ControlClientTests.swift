import Foundation
import RegcodeEngine
import Testing

@testable import ControlSocket

@Suite("ControlClient", .timeLimit(.minutes(1)))
struct ControlClientTests {
    @Test func missingSocketSaysTheDaemonIsNotRunning() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/absent.sock"
            let error = await #expect(throws: ControlClientError.daemonNotRunning(path: path)) {
                try await ControlClient.withConnection(to: path) { _ in }
            }
            #expect(error.map { "\($0)" } == "daemon not running at \(path)")
        }
    }

    @Test func staleSocketSaysTheDaemonIsNotRunning() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/stale.sock"
            try makeStaleSocketFile(at: path)
            await #expect(throws: ControlClientError.daemonNotRunning(path: path)) {
                try await ControlClient.withConnection(to: path) { _ in }
            }
        }
    }

    @Test func connectErrnoIsClassified() {
        #expect(ControlClientError.connect(errno: ENOENT, path: "/p") == .daemonNotRunning(path: "/p"))
        #expect(ControlClientError.connect(errno: ECONNREFUSED, path: "/p") == .daemonNotRunning(path: "/p"))
        #expect(ControlClientError.connect(errno: EACCES, path: "/p") == .permissionDenied(path: "/p"))
        #expect("\(ControlClientError.permissionDenied(path: "/p"))" == "permission denied: /p")
    }

    // Root bypasses file permissions, so this only means something for an unprivileged user.
    @Test(.enabled(if: geteuid() != 0, "root is never refused by file permissions"))
    func unreadableSocketSaysPermissionDenied() async throws {
        let configure: (inout ControlServer.Configuration) -> Void = { $0.socketMode = 0o600 }
        try await withServer(configure: configure) { _, path in
            try #require(chmod(path, 0) == 0)
            await #expect(throws: ControlClientError.permissionDenied(path: path)) {
                try await ControlClient.withConnection(to: path) { _ in }
            }
        }
    }

    @Test func callsAfterTheDaemonGoesAwayFail() async throws {
        try await withServer { server, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                #expect(try await client.call(method: "echo", params: [1]) == [1])
                server.triggerGracefulShutdown()
                // The notification stream ends when the daemon closes the connection.
                for await notification in client.notifications { Issue.record("unexpected \(notification)") }
                await #expect(throws: ControlClientError.connectionClosed) { try await client.call(method: "echo") }
            }
        }
    }

    @Test func cancelledCallDoesNotConfuseLaterReplies() async throws {
        let handler = TestHandler()
        try await withServer(handler: handler) { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                let slow = Task { try await client.call(method: "slow", params: ["ms": 200, "tag": "late"]) }
                #expect(try await eventually { handler.receivedMethods == ["slow"] })
                slow.cancel()
                await #expect(throws: CancellationError.self) { try await slow.value }
                // The reply to the cancelled call still arrives first, and must not be taken for this one.
                #expect(try await client.call(method: "echo", params: ["mine"]) == ["mine"])
            }
        }
    }

    @Test func notificationsCanBeSent() async throws {
        let handler = TestHandler()
        try await withServer(handler: handler) { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                try await client.notify(method: "echo", params: ["fire and forget"])
                #expect(try await client.call(method: "echo", params: [2]) == [2])
            }
        }
        #expect(handler.receivedMethods == ["echo", "echo"])
    }
}
