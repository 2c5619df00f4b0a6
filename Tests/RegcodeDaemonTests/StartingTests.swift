import ControlRPC
import Foundation
import RegcodeSupport
import Testing

@testable import RegcodeDaemon

/// Until its configured devices exist the daemon answers calls that need them with a retryable
/// "starting" error, not "unknown device"; `daemon.status` says it is starting.
@Suite struct StartingTests {
    @Test func callsBeforeTheDevicesExistAreAnsweredStarting() async throws {
        let harness = try ControlHarness()
        defer { try? FileManager.default.removeItem(atPath: harness.directory) }
        let handler = harness.handler
        let peer = ControlPeer.unixSocket(PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))

        for (method, params) in [("checkAuthentication", ["device": "stb-1"]), ("devices.list", [:]), ("devices.get", ["device": "stb-1"])]
            as [(String, JSONValue)]
        {
            let error = await #expect(throws: RPCError.self) { try await handler.handle(method: method, params: params, peer: peer) }
            #expect(error == ControlMethodsHandler.starting, "\(method)")
            #expect(error?.code == 1004)
            #expect(error?.data?["retryable"] == true)
        }
        let status = try await handler.handle(method: "daemon.status", params: nil, peer: peer)
        #expect(status["starting"] == true)
        #expect(status["storage"]?["state"] == "ok")

        // Once up, a device that is not there is unknown, as it really is.
        harness.registry.devicesUp.value = true
        let unknown = await #expect(throws: RPCError.self) {
            try await handler.handle(method: "checkAuthentication", params: ["device": "stb-9"], peer: peer)
        }
        #expect(unknown?.code == 1001)
        #expect(try await handler.handle(method: "daemon.status", params: nil, peer: peer)["starting"] == false)
    }
}
