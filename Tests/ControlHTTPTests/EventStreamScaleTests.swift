import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RegcodeSupport
import RegcodeTestSupport
import Testing

@testable import ControlHTTP
@testable import ControlRPC

#if canImport(Glibc)
import Glibc
#endif

/// Many event streams: one encoding per event, a limit on streams, and a client that stops reading cut off.
@Suite struct EventStreamScaleTests {
    func server(_ handler: FakeControlHandler, configure: (inout HTTPControlServer.Configuration) -> Void = { _ in }) -> HTTPControlServer {
        var configuration = HTTPControlServer.Configuration(host: "127.0.0.1", port: 0)
        // A closed client is found by the next write: keep-alives this often end the test server promptly.
        configuration.keepAliveInterval = .milliseconds(100)
        // Events written as they come: the tests count events, not batches.
        configuration.eventWriteInterval = .milliseconds(1)
        configure(&configuration)
        return HTTPControlServer(configuration: configuration, handler: handler, logger: Logger(label: "test"))
    }

    /// Waits, polling a bounded number of times, until `condition` holds.
    func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test func eachEventIsEncodedOnceWhateverTheNumberOfStreams() async throws {
        let streamCount = 20
        let eventCount = 30
        let handler = FakeControlHandler()
        let tally = EventEncodingTally()
        // Bound to the server's tasks and the publisher alike: every encoding of an event is counted.
        try await EventEncodingTally.$current.withValue(tally) {
            try await Application(router: server(handler).makeRouter()).test(.live) { client in
                let port = try #require(client.port)
                let clients = try (0..<streamCount).map { _ in try EventStreamClient(port: port) }
                defer { for client in clients { client.close() } }
                for client in clients { try client.get("/events") }
                #expect(try await eventually { handler.broadcaster.subscriberCount == streamCount })
                for index in 0..<eventCount { handler.emit(device: "stb-\(index % 3)", name: "status") }
                for client in clients {
                    #expect(try await client.read { $0.eventIDs.count >= eventCount })
                    #expect(client.eventIDs == (1...Int64(eventCount)).map { $0 })
                }
            }
        }
        // One encoding per event for all 20 streams (per-stream encoding made it 600).
        #expect(tally.encodings == eventCount)
    }

    @Test func theStreamsLoopRunsBelowTheFleetsPriority() async throws {
        #if os(Linux)
        // The nice value of the loop's own thread, read on it.
        let niceness = try await EventStreamLoop.group.next().submit { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }.get()
        #expect(niceness >= EventStreamLoop.niceness)
        #endif
    }

    @Test func aStreamBeyondTheLimitGets503WithRetryAfterAndIsCounted() async throws {
        let handler = FakeControlHandler()
        let server = server(handler) { $0.maxEventStreams = 3 }
        try await Application(router: server.makeRouter()).test(.live) { client in
            let port = try #require(client.port)
            let clients = try (0..<3).map { _ in try EventStreamClient(port: port) }
            defer { for client in clients { client.close() } }
            for client in clients { try client.get("/events") }
            #expect(try await eventually { handler.broadcaster.subscriberCount == 3 })
            #expect(server.streams.openCount == 3)

            try await client.execute(uri: "/events", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "5")
                #expect(String(buffer: response.body).contains(#""code":1004"#))
            }
            #expect(server.streams.refusedCount == 1)
            // Refused before subscribing: no subscription, no replay query.
            #expect(handler.broadcaster.subscriberCount == 3)

            // A stream that ends frees its place.
            clients[0].close()
            #expect(try await eventually { server.streams.openCount == 2 })
            let next = try EventStreamClient(port: port)
            defer { next.close() }
            try next.get("/events")
            #expect(try await next.read { $0.text.contains("retry: 1000") })
            #expect(next.text.hasPrefix("HTTP/1.1 200"))
            #expect(server.streams.refusedCount == 1)
        }
    }

    @Test func aStreamThatNeverReadsIsCutOffAndDisconnectedWhileAnotherReceivesEverything() async throws {
        let bufferSize = 16
        let batch = 8  // below the buffer size, so the reading stream never overflows within one publish
        let batches = 400  // 3,200 events of 8 KB: far beyond socket buffers plus the bounded queue
        let handler = FakeControlHandler(bufferSize: bufferSize)
        let server = server(handler) { $0.cutOffGracePeriod = .milliseconds(200) }
        try await Application(router: server.makeRouter()).test(.live) { client in
            let port = try #require(client.port)
            let stalled = try EventStreamClient(port: port, receiveBuffer: 4096)
            defer { stalled.close() }
            try stalled.get("/events")
            #expect(try await eventually { handler.broadcaster.subscriberCount == 1 })
            let reader = try EventStreamClient(port: port)
            defer { reader.close() }
            try reader.get("/events")
            #expect(try await eventually { handler.broadcaster.subscriberCount == 2 })

            for round in 0..<batches {
                for _ in 0..<batch { handler.emit(device: "stb-1", name: "status", padding: 8192) }
                let expected = (round + 1) * batch
                #expect(try await reader.read { $0.eventIDs.count >= expected })
            }
            #expect(reader.eventIDs == (1...Int64(batch * batches)).map { $0 })
            #expect(handler.broadcaster.cutOffCount == 1)

            // The server hung up on the stalled client by itself, without waiting for it to read; what that client
            // can still read is a gap-free prefix of the events.
            #expect(try await stalled.readUntilClosed(), "the stalled stream was not disconnected")
            let ids = stalled.eventIDs
            #expect(ids == (0..<Int64(ids.count)).map { $0 + 1 })
            #expect(ids.count < batch * batches, "the stalled stream cannot have received everything")
            #expect(try await eventually { server.streams.openCount == 1 })
        }
    }
}
