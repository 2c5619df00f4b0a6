import Dispatch
import EventLoopExecutor
import Logging
import NIOCore
import NIOPosix
import RegcodeSupport
import Synchronization
import Testing

@testable import ControlRPC
@testable import ControlSocket

/// Legal but heavy input: read beside the event loops, a bounded number at once, at a cost linear in its size.
@Suite("Heavy input: off the event loops, bounded, linear")
struct HeavyInputTests {
    private static func echo(id: Int, params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"echo","params":\#(params)}"# + "\n"
    }

    private static func deepWide(groups: Int, chains: Int, depth: Int = 26) -> String {
        let chain = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let group = "[" + Array(repeating: chain, count: chains).joined(separator: ",") + "]"
        return "[" + Array(repeating: group, count: groups).joined(separator: ",") + "]"
    }

    // MARK: Framing

    @Test func aLineInOneByteReadsIsSearchedOnceForItsNewline() {
        var decoder = LineFrameDecoder(maxLineLength: 1 << 20)
        var buffer = ByteBuffer()
        let line = Self.echo(id: 1, params: Self.deepWide(groups: 2, chains: 100))
        var frames: [LineFrame] = []
        for byte in line.utf8 {
            buffer.writeInteger(byte)
            while let frame = decoder.nextFrame(&buffer) { frames.append(frame) }
        }
        #expect(frames == [.line(ByteBuffer(string: String(line.dropLast())))])
        #expect(decoder.searchedBytes == line.utf8.count)
    }

    // MARK: Over the socket

    @Test func theIssuesHeavyLineIsRefusedAtTheValueLimitAndALegalDeepWideLineIsAnswered() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                // 17,000 arrays 28 deep: 969 KB, within the depth and per-container limits.
                let heavy = Self.echo(id: 1, params: Self.deepWide(groups: 17, chains: 1000))
                #expect(heavy.utf8.count > 900_000)
                try await connection.send(heavy)
                let refusal = try #require(try await connection.readJSON())
                #expect(refusal["error"]?["code"] == -32600)
                #expect(refusal["error"]?["data"] == ["limit": 16_384, "inputLimit": "maxValues"])
                #expect(refusal["error"]?["message"]?.stringValue?.contains("more than 16384 values") == true)

                // 15,600 arrays 28 deep: within every limit, answered in full.
                let legal = Self.deepWide(groups: 6, chains: 100)
                try await connection.send(Self.echo(id: 2, params: legal))
                let reply = try #require(try await connection.readJSON())
                #expect(reply["id"] == 2)
                #expect(reply["result"] == (try JSONValueParser.parse(Array(legal.utf8))))
            }
        }
    }

    @Test func aLineSentOneByteAtATimeIsAnswered() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                let params = #"{"s":"\u00e9\ud83d\ude00","n":[1,2.5,-3e2],"a":"# + Self.deepWide(groups: 2, chains: 3) + "}"
                for byte in Self.echo(id: 7, params: params).utf8 {
                    try await connection.send(String(decoding: [byte], as: UTF8.self))
                }
                let reply = try #require(try await connection.readJSON())
                #expect(reply["id"] == 7)
                #expect(reply["result"] == (try JSONValueParser.parse(Array(params.utf8), numbers: .integralAsInt)))
            }
        }
    }

    // MARK: Where requests are read

    /// A handler that, inside its call, needs a job to run on `loop`: it waits for one (blocking its thread, as a
    /// long parse does) and records whether it ran. Bounded: after 10 s it gives up and records that it did not.
    final class LoopProbeHandler: ControlHandler {
        let loop: any EventLoop
        let loopRan = Mutex<Bool?>(nil)

        init(loop: any EventLoop) {
            self.loop = loop
        }

        func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
            let ran = DispatchSemaphore(value: 0)
            self.loop.execute { ran.signal() }
            let result = ran.wait(timeout: .now() + .seconds(10)) == .success
            self.loopRan.withLock { $0 = result }
            return .bool(result)
        }

        func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
            throw .methodNotFound("subscribe")
        }
    }

    @Test func aRequestIsReadAndAnsweredOffTheEventLoopItArrivedOn() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let workers = InputWorkers(threads: 1, maxRunning: 2, maxWaiting: 2)
        let loop = group.next()
        let handler = LoopProbeHandler(loop: loop)
        let dispatcher = RPCDispatcher(handler: handler, workers: workers, logger: Logger(label: "test"))
        // As in the daemon, where Swift concurrency runs on the event loops: the caller is on the loop.
        let answer = await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
            await dispatcher.answer(ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"method":"probe"}"#), peer: .http(remoteAddress: "test"))
        }
        guard case .reply(let reply) = answer else {
            Issue.record("no reply: \(answer)")
            return
        }
        #expect(reply["result"] == true)
        #expect(handler.loopRan.withLock { $0 } == true)
        try await workers.shutdown()
        try await group.shutdownGracefully()
    }

    /// A handler whose calls wait until released, to hold the workers' turns.
    final class GateHandler: ControlHandler {
        let entered = Mutex(0)
        let release = Mutex<[CheckedContinuation<Void, Never>]>([])

        func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
            await withCheckedContinuation { continuation in
                self.release.withLock { $0.append(continuation) }
                self.entered.withLock { $0 += 1 }
            }
            return params ?? .null
        }

        func releaseAll() {
            let waiting = self.release.withLock { list in
                let taken = list
                list = []
                return taken
            }
            for continuation in waiting { continuation.resume() }
        }

        func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
            throw .methodNotFound("subscribe")
        }
    }

    /// Holds the workers' turns for as long as the test likes.
    final class Gate: Sendable {
        let entered = Mutex(0)
        let release = Mutex<[CheckedContinuation<Void, Never>]>([])

        func pass() async {
            await withCheckedContinuation { continuation in
                self.release.withLock { $0.append(continuation) }
                self.entered.withLock { $0 += 1 }
            }
        }

        func open() {
            let waiting = self.release.withLock { list in
                let taken = list
                list = []
                return taken
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    @Test func aFloodQueuesUpToItsBoundAndIsThenRefusedNotGrown() async throws {
        let workers = InputWorkers(threads: 1, maxRunning: 1, maxWaiting: 1)
        let gate = Gate()
        // Reading a request is what takes a turn; a gate stands in for a long read.
        async let first = workers.run {
            await gate.pass()
            return 1
        }
        // The first holds the one turn...
        #expect(try await eventually { gate.entered.withLock { $0 } == 1 })
        async let second = workers.run {
            await gate.pass()
            return 2
        }
        // ...the second waits for it...
        #expect(try await eventually { workers.counts.waiting == 1 })
        // ...and the third finds the queue full: refused at once, without running.
        let third = await workers.run { 3 }
        #expect(third == nil)
        #expect(workers.counts.refused == 1)
        gate.open()
        // The waiter gets the turn the first leaves.
        #expect(try await eventually { gate.entered.withLock { $0 } == 2 })
        gate.open()
        #expect(await first == 1)
        #expect(await second == 2)
        #expect(workers.counts.admitted == 2)
        try await workers.shutdown()
    }

    @Test func aFullQueueIsAnsweredBusyAndRetryable() async throws {
        let workers = InputWorkers(threads: 1, maxRunning: 1, maxWaiting: 0)
        let gate = Gate()
        let dispatcher = RPCDispatcher(handler: GateHandler(), workers: workers, logger: Logger(label: "test"))
        async let holder = workers.run { await gate.pass() }
        #expect(try await eventually { gate.entered.withLock { $0 } == 1 })
        let line = ByteBuffer(string: #"{"jsonrpc":"2.0","id":3,"method":"hold","params":[3]}"#)
        guard case .reply(let reply) = await dispatcher.answer(line, peer: .http(remoteAddress: "test")) else {
            Issue.record("no reply")
            return
        }
        #expect(reply["error"]?["code"] == 1004)
        #expect(reply["error"]?["data"]?["retryable"] == true)
        gate.open()
        _ = await holder
        try await workers.shutdown()
    }

    /// A method that waits (a reset on a locked database) holds no turn: calls behind it are read and answered.
    @Test func aCallWaitingInItsHandlerHoldsNoTurn() async throws {
        let workers = InputWorkers(threads: 1, maxRunning: 1, maxWaiting: 0)
        let handler = GateHandler()
        let dispatcher = RPCDispatcher(handler: handler, workers: workers, logger: Logger(label: "test"))
        func call(_ id: Int) async -> JSONValue? {
            let line = ByteBuffer(string: #"{"jsonrpc":"2.0","id":\#(id),"method":"hold","params":[\#(id)]}"#)
            guard case .reply(let reply) = await dispatcher.answer(line, peer: .http(remoteAddress: "test")) else { return nil }
            return reply
        }
        // The waits are long because a loaded machine (the whole suite in parallel) may take seconds to run a task.
        async let first = call(1)
        #expect(try await eventually(timeout: .seconds(120)) { handler.entered.withLock { $0 } == 1 })
        // With one turn and no room to wait, the second would be refused if the first still held its turn.
        async let second = call(2)
        #expect(try await eventually(timeout: .seconds(120)) { handler.entered.withLock { $0 } == 2 })
        #expect(workers.counts.refused == 0)
        handler.releaseAll()
        #expect(await first?["result"] == [1])
        #expect(await second?["result"] == [2])
        #expect(workers.counts.admitted == 2)
        try await workers.shutdown()
    }
}
