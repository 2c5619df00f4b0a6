import ControlRPC
import NIOCore
import RegcodeSupport
import Testing

@testable import ControlHTTP

@Suite struct EventStreamFramingTests {
    @Test func anEventIsOneIdOneNameOneDataLine() {
        let text = String(buffer: ServerSentEvents.event(name: "event", data: ["seq": 7, "args": ["message": "a\nb"]], id: 7))
        #expect(text == "id: 7\nevent: event\ndata: {\"args\":{\"message\":\"a\\nb\"},\"seq\":7}\n\n")
    }

    @Test func queryBecomesSubscribeParams() throws {
        let params = try EventStreamQuery.params(
            query: [("since", "4"), ("device", "stb-1,stb-2"), ("device", "stb-3"), ("events", "status")],
            lastEventID: nil
        )
        #expect(params == ["since": 4, "devices": ["stb-1", "stb-2", "stb-3"], "events": ["status"]])
    }

    @Test func lastEventIDWinsOverSince() throws {
        #expect(try EventStreamQuery.params(query: [("since", "4")], lastEventID: "19") == ["since": 19])
        #expect(try EventStreamQuery.params(query: [], lastEventID: nil) == [:])
    }

    @Test func badQueriesAreInvalidParams() {
        #expect(throws: RPCError.self) { try EventStreamQuery.params(query: [("since", "-1")], lastEventID: nil) }
        #expect(throws: RPCError.self) { try EventStreamQuery.params(query: [("since", "soon")], lastEventID: nil) }
        #expect(throws: RPCError.self) { try EventStreamQuery.params(query: [("sinse", "1")], lastEventID: nil) }
    }
}
