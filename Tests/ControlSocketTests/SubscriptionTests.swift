import Foundation
import NIOCore
import RegcodeEngine
import RegcodeSupport
import Testing

@testable import ControlRPC
@testable import ControlSocket

@Suite("Subscriptions over the socket", .timeLimit(.minutes(1)))
struct SubscriptionTests {
    @Test func subscriberReceivesLiveEventsAndCanStillCall() async throws {
        let broadcaster = EventBroadcaster<JSONValue>()
        try await withServer(handler: TestHandler(broadcaster: broadcaster)) { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                #expect(try await client.call(method: "subscribe") == ["subscribed": true])
                #expect(broadcaster.subscriberCount == 1)
                var notifications = client.notifications.makeAsyncIterator()

                broadcaster.publish([testEvent(1), testEvent(2)])
                #expect(await notifications.next() == ControlNotification(method: "event", params: testEvent(1)))
                #expect(try await client.call(method: "echo", params: ["between"]) == ["between"])
                #expect(await notifications.next() == ControlNotification(method: "event", params: testEvent(2)))
                broadcaster.publish(testEvent(3))
                #expect(await notifications.next()?.params?["seq"] == 3)
            }
            // The subscription ends with its connection.
            #expect(try await eventually { broadcaster.subscriberCount == 0 })
        }
        #expect(broadcaster.cutOffCount == 0)
    }

    @Test func eventNotificationLineFormat() async throws {
        let broadcaster = EventBroadcaster<JSONValue>()
        try await withServer(handler: TestHandler(broadcaster: broadcaster)) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
                #expect(try await connection.readLine() == #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#)
                broadcaster.publish(testEvent(42))
                #expect(
                    try await connection.readLine()
                        == #"{"jsonrpc":"2.0","method":"event","params":{"args":{"errorCode":"","status":1},"device":"stb-1","name":"setAuthenticationStatus","seq":42}}"#
                )
            }
        }
    }

    /// A handler whose events are encoded once, by their publisher, and written as they are.
    private struct EncodedEventHandler: ControlHandler {
        let broadcaster: EventBroadcaster<EventNotification>

        func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
            throw .methodNotFound(method)
        }

        func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
            Subscription(result: ["subscribed": true], live: self.broadcaster.subscribe())
        }
    }

    @Test func eventsEncodedByThePublisherGoOutAsTheSameLine() async throws {
        let broadcaster = EventBroadcaster<EventNotification>()
        let line =
            #"{"jsonrpc":"2.0","method":"event","params":{"args":{"errorCode":"","status":1},"device":"stb-1","name":"setAuthenticationStatus","seq":7}}"#
        let notification = EventNotification(params: testEvent(7))
        #expect(String(buffer: notification.line(allocator: ByteBufferAllocator())) == line + "\n")
        try await withServer(handler: EncodedEventHandler(broadcaster: broadcaster)) { _, path in
            try await withRawConnection(to: path) { (first: inout RawConnection) async throws in
                try await withRawConnection(to: path) { (second: inout RawConnection) async throws in
                    for connection in [first, second] {
                        try await connection.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
                    }
                    #expect(try await first.readLine() == #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#)
                    #expect(try await second.readLine() == #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#)
                    #expect(try await eventually { broadcaster.subscriberCount == 2 })
                    broadcaster.publish(notification)
                    #expect(try await first.readLine() == line)
                    #expect(try await second.readLine() == line)
                }
            }
        }
    }

    @Test func subscribeErrorsAreOrdinaryErrors() async throws {
        try await withServer { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                let error = await #expect(throws: RPCError.self) { try await client.call(method: "subscribe", params: ["since": "yesterday"]) }
                #expect(error?.code == -32602)
            }
        }
    }

    @Test func replayThenLiveHasNoGapsAndNoDuplicates() async throws {
        let broadcaster = EventBroadcaster<JSONValue>()
        // Stored: 1...6. Published while the subscriber registers: 4...8, overlapping the stored ones.
        let handler = TestHandler(
            broadcaster: broadcaster,
            store: (1...6).map { testEvent(Int64($0)) },
            afterRegistration: { broadcaster.publish((4...8).map { testEvent(Int64($0)) }) }
        )
        try await withServer(handler: handler) { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                _ = try await client.call(method: "subscribe", params: ["since": 2])
                var notifications = client.notifications.makeAsyncIterator()
                var seqs: [Int64] = []
                for _ in 0..<6 {
                    seqs.append(try #require(await notifications.next()?.params?["seq"]?.intValue))
                }
                #expect(seqs == [3, 4, 5, 6, 7, 8])
                broadcaster.publish(testEvent(9))
                #expect(await notifications.next()?.params?["seq"] == 9)
            }
        }
    }

    @Test func overflowingSubscriberIsToldWhereToResume() async throws {
        let broadcaster = EventBroadcaster<JSONValue>(bufferSize: 8)
        try await withServer(handler: TestHandler(broadcaster: broadcaster)) { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                _ = try await client.call(method: "subscribe")
                // More than the buffer in one go: nothing can drain in between, so this subscriber is cut off.
                broadcaster.publish((1...20).map { testEvent(Int64($0)) })
                #expect(broadcaster.cutOffCount == 1)

                var received: [Int64] = []
                var cutoff: JSONValue?
                for await notification in client.notifications {
                    switch notification.method {
                    case "event": received.append(try #require(notification.params?["seq"]?.intValue))
                    case "cutoff": cutoff = notification.params
                    default: Issue.record("unexpected notification \(notification)")
                    }
                }
                // The stream ended: the server closed the connection after the cutoff notice.
                let notice = try #require(cutoff)
                // Possibly none: the burst may arrive before the stream is first polled.
                #expect(received == (0..<received.count).map { Int64($0) + 1 })
                #expect(notice["lastSeq"] == (received.last.map { .int($0) } ?? .null))
                #expect(notice["reason"]?.stringValue?.contains("buffer of 8 events") == true)
            }
        }
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test func subscriberThatNeverReadsIsCutOffWhileAnotherReceivesEverything() async throws {
        let bufferSize = 64
        let batch = 50  // below the buffer size, so the reading subscriber never overflows within one publish
        let batches = 80  // 4,000 events of ~500 bytes: far beyond socket buffers plus the bounded queue
        let broadcaster = EventBroadcaster<JSONValue>(bufferSize: bufferSize)
        let configure: (inout ControlServer.Configuration) -> Void = { $0.cutOffGracePeriod = .milliseconds(200) }
        try await withServer(
            handler: TestHandler(broadcaster: broadcaster),
            configure: configure
        ) { server, path in
            let stalled = try PosixClientSocket(connectingTo: path)
            defer { stalled.close() }
            try stalled.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
            #expect(try await eventually { broadcaster.subscriberCount == 1 })

            try await ControlClient.withConnection(to: path) { (reader: ControlClient) async throws in
                _ = try await reader.call(method: "subscribe")
                #expect(broadcaster.subscriberCount == 2)
                var notifications = reader.notifications.makeAsyncIterator()
                var next: Int64 = 1
                for _ in 0..<batches {
                    broadcaster.publish((0..<batch).map { testEvent(next + Int64($0), padding: 400) })
                    for _ in 0..<batch {
                        let notification = try #require(await notifications.next())
                        #expect(notification.method == "event")
                        #expect(notification.params?["seq"]?.intValue == next)
                        next += 1
                    }
                }
                #expect(next == Int64(batch * batches + 1))
                #expect(broadcaster.cutOffCount == 1)
                // The server hung up on the stalled peer by itself, without waiting for it to read.
                #expect(try await eventually { server.connectionCount == 1 })
            }

            // The stalled peer was disconnected; what it can still read is a gap-free prefix, perhaps the cutoff notice.
            let bytes = try #require(try await stalled.readUntilClosed(timeout: .seconds(10)), "the stalled subscriber was not disconnected")
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map {
                try? JSONValueParser.parse($0.utf8, numbers: .integralAsInt)
            }
            #expect(lines.first == ["jsonrpc": "2.0", "id": 1, "result": ["subscribed": true]])
            var expected: Int64 = 1
            for case let line? in lines.dropFirst() {
                if line["method"] == "event" {
                    #expect(line["params"]?["seq"]?.intValue == expected)
                    expected += 1
                } else {
                    #expect(line["method"] == "cutoff")
                    #expect(line["params"]?["lastSeq"] == .int(expected - 1))
                }
            }
            #expect(expected - 1 < Int64(batch * batches), "the stalled subscriber cannot have received everything")
            #expect(try await eventually { server.connectionCount == 0 })
        }
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test func shutdownEndsSubscriptions() async throws {
        let broadcaster = EventBroadcaster<JSONValue>()
        try await withServer(handler: TestHandler(broadcaster: broadcaster)) { server, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                _ = try await client.call(method: "subscribe")
                server.triggerGracefulShutdown()
                var count = 0
                for await _ in client.notifications { count += 1 }
                #expect(count == 0)
            }
        }
        #expect(broadcaster.subscriberCount == 0)
    }
}
