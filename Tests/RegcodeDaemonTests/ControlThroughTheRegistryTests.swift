import ControlRPC
import Foundation
import RegcodeSupport
import Testing

@testable import RegcodeDaemon

/// The control methods reach the devices through the registry alone: a harness with no daemon answers them.
@Suite struct ControlThroughTheRegistryTests {
    @Test func devicesAreListedReadResetAndRemovedThroughTheRegistry() async throws {
        let harness = try ControlHarness(fleets: [ControlHarness.idleFleet(count: 2)])
        try await harness.run {
            try await harness.start()
            let handler = harness.handler
            let peer = ControlHarness.peer
            let list = try await handler.handle(method: "devices.list", params: nil, peer: peer)
            #expect(list["devices"]?.arrayValue?.compactMap { $0["device"]?.stringValue } == ["stb-1", "stb-2"])
            let detail = try await handler.handle(method: "devices.get", params: ["device": "stb-2"], peer: peer)
            #expect(detail["fleet"] == "stb")
            #expect(detail["registered"] == false)
            let polls = try await handler.handle(method: "devices.polls", params: ["device": "stb-1"], peer: peer)
            #expect(polls["polls"] == [])
            await #expect(throws: RPCError.unknownDevice("stb-9")) {
                try await handler.handle(method: "devices.polls", params: ["device": "stb-9"], peer: peer)
            }
            #expect(try await handler.handle(method: "devices.reset", params: ["device": "stb-1"], peer: peer)["reset"] == true)
            #expect(try await handler.handle(method: "devices.remove", params: ["device": "stb-2"], peer: peer)["removed"] == true)
            let status = try await handler.handle(method: "daemon.status", params: nil, peer: peer)
            #expect(status["devices"] == 1)
            #expect(status["starting"] == false)
            // A device of one plain app has no TV Provider: the registry's refusal, in the control surface's words.
            let noProvider = await #expect(throws: RPCError.self) {
                try await handler.handle(method: "vsa.status", params: ["device": "stb-1"], peer: peer)
            }
            #expect(noProvider?.code == -32602)
        }
    }
}
