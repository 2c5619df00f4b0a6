import Logging
import RegcodeSupport
import Synchronization
import Testing

@Suite struct DeferredMetadataLogHandlerTests {
    /// Lines a stream handler writes, kept in memory.
    final class Lines: Sendable {
        let text = Mutex("")
        var all: [String] {
            // Without the timestamp, which may differ between two handlers by a second.
            text.withLock { $0 }.split(separator: "\n").map { String($0.drop { $0 != " " }) }
        }
    }

    struct Output: TextOutputStream, Sendable {
        let lines: Lines
        mutating func write(_ string: String) { lines.text.withLock { $0 += string } }
    }

    private func logger(_ lines: Lines, deferred: Bool) -> Logger {
        Logger(label: "test") { label in
            let stream = StreamLogHandler(label: label, stream: Output(lines: lines), metadataProvider: nil)
            return deferred ? DeferredMetadataLogHandler(stream: stream) : stream
        }
    }

    @Test func writesTheSameLinesAsTheStreamHandler() {
        let plain = Lines()
        let deferred = Lines()
        for (lines, isDeferred) in [(plain, false), (deferred, true)] {
            var logger = logger(lines, deferred: isDeferred)
            logger.logLevel = .info
            logger.info("no metadata")
            logger[metadataKey: "request"] = "r-1"
            logger[metadataKey: "device"] = "stb-2"
            logger.info("attached")
            logger.warning("explicit wins", metadata: ["device": "stb-9", "status": "429"])
            logger.debug("below the level")
            logger[metadataKey: "request"] = nil
            logger.error("one key removed")
        }
        #expect(deferred.all == plain.all)
        #expect(deferred.all.count == 4)
        #expect(deferred.all[2].contains("device=stb-9 request=r-1 status=429"))
    }

    @Test func keepsItsLevelAndMetadata() {
        var handler = DeferredMetadataLogHandler.standardError(label: "test")
        handler.logLevel = .error
        handler[metadataKey: "a"] = "1"
        #expect(handler.logLevel == .error)
        #expect(handler.metadata == ["a": "1"])
        #expect(handler[metadataKey: "a"] == "1")
    }
}
