import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import ListenerGuard

#if canImport(Glibc)
import Glibc
#endif

/// Read and idle deadlines on the embedded event loop's manual time.
@Suite struct ReadDeadlineHandlerTests {
    static func listener(idle: Duration? = .seconds(60), read: Duration? = .seconds(10)) -> ListenerGuard {
        ListenerGuard(name: "test", limits: ListenerLimits(maxConnections: 8, idleTimeout: idle, readTimeout: read), logger: Logger(label: "test"))
    }

    static func lineChannel(_ listener: ListenerGuard, activity: ConnectionActivity = ConnectionActivity()) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ReadDeadlineHandler(framing: .lines, listener: listener, activity: activity))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.read()
        return channel
    }

    @Test func aLineThatStallsHalfWayIsCutAfterTheReadTimeout() throws {
        let listener = Self.listener()
        let channel = try Self.lineChannel(listener)
        try channel.writeInbound(ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"meth"#))
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9_999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
        #expect(listener.counters.snapshot.timedOut == 1)
    }

    @Test func aLineTrickledAByteAtATimeIsCutAfterTheReadTimeout() throws {
        let listener = Self.listener()
        let channel = try Self.lineChannel(listener)
        for second in 0..<10 {
            #expect(channel.isActive, "at \(second) s")
            try channel.writeInbound(ByteBuffer(string: "x"))
            // As the channel does after every read while it wants more.
            channel.read()
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        }
        #expect(!channel.isActive)
        #expect(listener.counters.snapshot.timedOut == 1)
    }

    @Test func wholeLinesDoNotStartTheReadTimeoutAndTheServerHoldingBackDoesNotCount() throws {
        let listener = Self.listener(idle: nil)
        let channel = try Self.lineChannel(listener)
        try channel.writeInbound(ByteBuffer(string: "{}\n{}\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        // A partial line while the server asks for nothing more (its own back-pressure): not the peer's fault.
        try channel.writeInbound(ByteBuffer(string: "{\"a\":"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        // Reading again: the time held back is not counted, so the peer has its whole period from then.
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func aSilentConnectionIdlesOutUnlessACallOrSubscriptionHoldsIt() throws {
        let listener = Self.listener(idle: .seconds(60))
        let activity = ConnectionActivity()
        let held = try Self.lineChannel(listener, activity: activity)
        let silent = try Self.lineChannel(listener)
        activity.hold()
        // Traffic moves the idle deadline.
        held.embeddedEventLoop.advanceTime(by: .seconds(59))
        try silent.writeInbound(ByteBuffer(string: "{}\n"))
        silent.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(silent.isActive)
        silent.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!silent.isActive)
        // A subscriber that only receives is never idled out.
        held.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(held.isActive)
        activity.release()
        held.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(!held.isActive)
        #expect(listener.counters.snapshot.timedOut == 2)
    }

    @Test func anHTTPRequestMustArriveWholeOnceBegun() throws {
        let listener = Self.listener(idle: nil, read: .seconds(10))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        try listener.addHTTPReadDeadline(to: channel)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.read()
        // A whole request, then silence: nothing to time.
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        // A body trickling in too slowly.
        try channel.writeInbound(ByteBuffer(string: "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{"))
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try channel.writeInbound(ByteBuffer(string: "\"a"))
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(!channel.isActive)
        #expect(listener.counters.snapshot.timedOut == 1)
    }

    static func httpChannel(_ listener: ListenerGuard) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        try listener.addHTTPReadDeadline(to: channel)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.read()
        return channel
    }

    @Test func aNewHTTPConnectionOwesItsFirstRequestWithinTheReadTimeoutNotTheIdleTimeout() throws {
        let listener = Self.listener(idle: .seconds(60), read: .seconds(10))
        let silent = try Self.httpChannel(listener)
        let served = try Self.httpChannel(listener)
        try served.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
        silent.embeddedEventLoop.advanceTime(by: .milliseconds(9_999))
        served.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(silent.isActive)
        silent.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!silent.isActive)
        // A request that arrived whole is the server's to answer: the connection is not timed meanwhile.
        served.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(served.isActive)
        #expect(listener.counters.snapshot.timedOut == 1)
    }

    @Test func closingTheOutputOfAnHTTPConnectionClosesItInFull() throws {
        let listener = Self.listener(idle: nil, read: .seconds(10))
        let channel = try Self.httpChannel(listener)
        try channel.writeInbound(ByteBuffer(string: "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{"))
        try channel.close(mode: .output).wait()
        #expect(!channel.isActive)
    }

    @Test func aTLSConnectionsDeadlineCoversItsHandshakeAndThenFollowsTheNegotiatedProtocol() throws {
        let listener = Self.listener(idle: nil, read: .seconds(10))
        // Before the handshake: no HTTP handler yet, and a handshake that stalls is cut at the read timeout.
        let stalled = EmbeddedChannel()
        try listener.addTLSReadDeadline(to: stalled)
        try stalled.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        stalled.read()
        try stalled.writeInbound(ByteBuffer(bytes: [0x16, 0x03, 0x01]))
        stalled.read()
        stalled.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(!stalled.isActive)

        // HTTP/2 idles out in its own handler: the deadline leaves.
        let h2 = EmbeddedChannel()
        try listener.addTLSReadDeadline(to: h2)
        listener.settleTLSReadDeadline(in: h2.pipeline.syncOperations)
        #expect((try? h2.pipeline.syncOperations.handler(type: ReadDeadlineHandler.self)) == nil)

        // HTTP/1.1: its requests end the deadline, as on a plain connection.
        let h1 = EmbeddedChannel()
        try listener.addTLSReadDeadline(to: h1)
        try h1.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        listener.settleTLSReadDeadline(in: h1.pipeline.syncOperations)
        try h1.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        h1.read()
        try h1.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
        h1.read()
        h1.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(h1.isActive)
        #expect(listener.counters.snapshot.timedOut == 1)
    }
}

/// The cap on a listening channel: past it a connection is closed at once and counted, never handed on.
@Suite struct ConnectionCapHandlerTests {
    @Test func connectionsPastTheCapAreClosedAtOnceAndCounted() throws {
        let listener = ListenerGuard(name: "test", limits: ListenerLimits(maxConnections: 2), logger: Logger(label: "test"))
        let server = EmbeddedChannel()
        try server.pipeline.syncOperations.addHandlers(listener.serverHandlers())
        let children = (0..<5).map { _ in EmbeddedChannel(loop: server.embeddedEventLoop) }
        for child in children {
            try child.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            try server.writeInbound(child as any Channel)
        }
        var handedOn = 0
        while try server.readInbound(as: (any Channel).self) != nil { handedOn += 1 }
        #expect(handedOn == 2)
        #expect(children.filter(\.isActive).count == 2)
        #expect(listener.counters.snapshot == .init(cap: 2, open: 2, accepted: 2, refused: 3, timedOut: 0))
        // A held connection closes: room for one more.
        _ = try children[0].finish()
        #expect(listener.counters.snapshot.open == 1)
        let next = EmbeddedChannel(loop: server.embeddedEventLoop)
        try next.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try server.writeInbound(next as any Channel)
        #expect(next.isActive)
        #expect(listener.counters.snapshot.open == 2)
    }

    @Test func acceptErrorsDoNotEndTheAcceptSequence() throws {
        let listener = ListenerGuard(name: "test", limits: ListenerLimits(maxConnections: 2), logger: Logger(label: "test"))
        let server = EmbeddedChannel()
        try server.pipeline.syncOperations.addHandlers(listener.serverHandlers())
        for _ in 0..<1_000 {
            server.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept"))
        }
        // Nothing reached the end of the pipeline (where the async accept sequence would have ended on it).
        #expect(throws: Never.self) { try server.throwIfErrorCaught() }
    }
}
