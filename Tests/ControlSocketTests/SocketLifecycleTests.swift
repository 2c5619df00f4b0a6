import Foundation
import RegcodeEngine
import Synchronization
import Testing

@testable import ControlRPC
@testable import ControlSocket

@Suite("Socket file, adoption, peers and shutdown", .timeLimit(.minutes(1)))
struct SocketLifecycleTests {
    @Test func socketFileIsCreatedWithMode0660AndRemovedOnShutdown() async throws {
        var socketPath = ""
        try await withServer { _, path in
            socketPath = path
            let mode = try #require(fileMode(path))
            #expect(mode & S_IFMT == S_IFSOCK)
            #expect(mode & 0o7777 == 0o660)
        }
        #expect(fileMode(socketPath) == nil)
    }

    @Test func staleSocketFileIsReplaced() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/control.sock"
            try makeStaleSocketFile(at: path)
            #expect(UnixSocketFile.probe(path: path) == .stale)
            try await withServer(configuration: .init(listener: .path(path)), handler: TestHandler()) { _ in
                try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                    #expect(try await client.call(method: "echo", params: ["fresh"]) == ["fresh"])
                }
            }
        }
    }

    @Test func liveSocketIsRefusedAndLeftAlone() async throws {
        try await withServer { _, path in
            let second = ControlServer(socketPath: path, handler: TestHandler())
            await #expect(throws: ControlServerError.socketInUse(path)) { try await second.run() }
            #expect("\(ControlServerError.socketInUse(path))".contains("another daemon is listening"))
            // The first server still owns and serves the path.
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                #expect(try await client.call(method: "echo", params: [1]) == [1])
            }
        }
    }

    @Test func nonSocketFileIsRefusedAndLeftAlone() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/control.sock"
            try Data("not a socket".utf8).write(to: URL(fileURLWithPath: path))
            let server = ControlServer(socketPath: path, handler: TestHandler())
            await #expect(throws: ControlServerError.notASocket(path)) { try await server.run() }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a socket")
        }
    }

    @Test func tooLongPathIsRefused() async throws {
        let path = "/tmp/" + String(repeating: "d", count: 120) + "/control.sock"
        let server = ControlServer(socketPath: path, handler: TestHandler())
        await #expect(throws: ControlServerError.pathTooLong(path)) { try await server.run() }
    }

    @Test func runTwiceIsRefused() async throws {
        try await withServer { server, _ in
            await #expect(throws: ControlServerError.alreadyStarted) { try await server.run() }
        }
    }

    @Test func inheritedListeningSocketIsAdoptedAndItsFileKept() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/activated.sock"
            let fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
            try #require(fd >= 0)
            try bindAndListen(fd, path: path)
            try await withServer(configuration: .init(listener: .fileDescriptor(fd)), handler: TestHandler()) { _ in
                try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                    #expect(try await client.call(method: "echo", params: ["activated"]) == ["activated"])
                }
            }
            // The file belongs to whoever created the socket (systemd), not to the server.
            #expect(fileMode(path).map { $0 & S_IFMT } == S_IFSOCK)
        }
    }

    @Test func inheritedNonUnixSocketIsRefused() async throws {
        let fd = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        let server = ControlServer(listeningFD: fd, handler: TestHandler())
        await #expect(throws: ControlServerError.unsupportedListeningSocket(fd: fd, reason: "not a Unix-domain socket")) {
            try await server.run()
        }
    }

    @Test func refusedPeerGetsPermissionDeniedThenEOF() async throws {
        let handler = TestHandler()
        let configure: (inout ControlServer.Configuration) -> Void = { $0.peerPolicy = PeerPolicy { _ in false } }
        try await withServer(handler: handler, configure: configure) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                let refusal = try #require(try await connection.readJSON())
                #expect(refusal == ["jsonrpc": "2.0", "id": .null, "error": ["code": 1005, "message": "permission denied"]])
                #expect(try await connection.readLine() == nil)
            }
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                let error = await #expect(throws: RPCError.self) { try await client.call(method: "echo", params: [1]) }
                #expect(error == .permissionDenied)
            }
        }
        #expect(handler.receivedMethods.isEmpty)
    }

    @Test func policySeesTheRealPeer() async throws {
        let seen = PeerLog()
        let configure: (inout ControlServer.Configuration) -> Void = { $0.peerPolicy = PeerPolicy { seen.record($0) } }
        try await withServer(configure: configure) { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                _ = try await client.call(method: "echo")
            }
        }
        #expect(seen.peers == [PeerCredentials(pid: getpid(), uid: geteuid(), gid: getegid())])
    }

    @Test func defaultPolicyAllowsOwnerRootAndGroup() {
        let owner: uid_t = 4242
        let group: gid_t = 4343
        // Ids far outside any real user database, so only the uid/gid rules can match.
        let stranger = PeerCredentials(pid: 1, uid: 3_999_999_001, gid: 3_999_999_002)
        let withGroup = PeerPolicy.ownerRootOrGroup(group, ownerUID: owner)
        #expect(withGroup.allows(PeerCredentials(pid: 1, uid: owner, gid: 1)))
        #expect(withGroup.allows(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(withGroup.allows(PeerCredentials(pid: 1, uid: stranger.uid, gid: group)))
        #expect(!withGroup.allows(stranger))

        let withoutGroup = PeerPolicy.ownerRootOrGroup(nil, ownerUID: owner)
        #expect(!withoutGroup.allows(PeerCredentials(pid: 1, uid: stranger.uid, gid: group)))
        #expect(withoutGroup.allows(PeerCredentials(pid: 1, uid: owner, gid: group)))
    }

    @Test func groupMembershipComesFromTheGroupDatabase() throws {
        // root is a listed member of no group on most systems but always has a name; use the database both ways.
        let rootName = try #require(UserDatabase.userName(uid: 0))
        #expect(rootName == "root")
        let rootGroup = try #require(ControlServer.groupID(named: "root"))
        #expect(rootGroup == 0)
        #expect(ControlServer.groupID(named: "no-such-group-regcoded") == nil)
        let members = try #require(UserDatabase.groupMembers(gid: rootGroup))
        #expect(UserDatabase.isListedMember(uid: 0, ofGroup: rootGroup) == members.contains("root"))
    }

    @Test func cancellingRunClosesConnectionsAndTheSocketAtOnce() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/control.sock"
            let (listening, listeningContinuation) = AsyncStream<Void>.makeStream()
            let server = ControlServer(configuration: .init(listener: .path(path)), handler: TestHandler()) {
                listeningContinuation.yield()
            }
            let running = Task { try await server.run() }
            var iterator = listening.makeAsyncIterator()
            _ = await iterator.next()
            // A subscriber that never reads, and a call still in progress: cancellation waits for neither.
            let stalled = try PosixClientSocket(connectingTo: path)
            defer { stalled.close() }
            try stalled.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
            try stalled.send(#"{"jsonrpc":"2.0","id":2,"method":"slow","params":{"ms":60000}}"# + "\n")
            #expect(try await eventually { server.connectionCount == 1 })
            running.cancel()
            _ = try? await running.value
            #expect(server.connectionCount == 0)
            #expect(fileMode(path) == nil)
            #expect(try await stalled.readUntilClosed(timeout: .seconds(5)) != nil)
        }
    }

    @Test func gracefulShutdownFinishesInFlightCallsAndRemovesTheSocket() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/control.sock"
            let handler = TestHandler()
            try await withServer(configuration: .init(listener: .path(path)), handler: handler) { server in
                try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                    async let slow = client.call(method: "slow", params: ["ms": 300, "tag": "done"])
                    #expect(try await eventually { handler.receivedMethods == ["slow"] })
                    server.triggerGracefulShutdown()
                    #expect(try await slow == "done")
                    // The session ended after that call: the server closed its side.
                    await #expect(throws: ControlClientError.connectionClosed) { try await client.call(method: "echo") }
                }
                // Removed as soon as the listener closed, before the server finished draining connections.
                #expect(try await eventually { fileMode(path) == nil })
            }
        }
    }
}

/// Records the peers a policy was asked about (and allows them).
final class PeerLog: Sendable {
    private let state = Mutex<[PeerCredentials]>([])

    func record(_ peer: PeerCredentials) -> Bool {
        self.state.withLock { $0.append(peer) }
        return true
    }

    var peers: [PeerCredentials] { self.state.withLock { $0 } }
}
