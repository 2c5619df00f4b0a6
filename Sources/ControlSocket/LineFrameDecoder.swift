import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the line decoder produces.
enum LineFrame: Sendable, Equatable {
    /// One line without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// A line longer than the limit, already thrown away; `byteCount` counts what was discarded.
    case tooLong(byteCount: Int)
}

/// Splits a byte stream at `\n` into lines of at most `maxLineLength` bytes, tolerating `\r\n`.
///
/// Written here rather than taken from NIOExtras: its `LineBasedFrameDecoder` fails the whole channel on an
/// over-long line, while the control socket must answer such a line with an error, skip to the next newline and
/// keep the connection, without ever holding more than the limit (plus one read) of the line in memory.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = LineFrame

    let maxLineLength: Int
    /// How many bytes of the pending, unterminated line were already searched, so each byte is scanned once.
    private var scannedBytes = 0
    /// Set while skipping the rest of an over-long line; counts what was skipped.
    private var discardedBytes: Int?
    /// Bytes searched for a newline since the decoder was made: each received byte once, however the bytes are split
    /// into reads (what the framing tests check).
    private(set) var searchedBytes = 0

    init(maxLineLength: Int) {
        precondition(maxLineLength > 0, "the line limit must be positive")
        self.maxLineLength = maxLineLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = self.nextFrame(&buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while let frame = self.nextFrame(&buffer) {
            context.fireChannelRead(Self.wrapInboundOut(frame))
        }
        // An unterminated last line still counts, so `printf '{…}' | socat - UNIX:…` gets its answer.
        if let discarded = self.discardedBytes {
            self.discardedBytes = nil
            context.fireChannelRead(Self.wrapInboundOut(.tooLong(byteCount: discarded)))
        } else if buffer.readableBytes > 0 {
            let length = buffer.readableBytes
            var line = buffer.readSlice(length: length)!
            self.scannedBytes = 0
            Self.dropCarriageReturn(&line)
            let frame: LineFrame = line.readableBytes <= self.maxLineLength ? .line(line) : .tooLong(byteCount: length)
            context.fireChannelRead(Self.wrapInboundOut(frame))
        }
        return .needMoreData
    }

    /// The next complete frame in `buffer`, consuming it; nil when more bytes are needed.
    mutating func nextFrame(_ buffer: inout ByteBuffer) -> LineFrame? {
        let available = buffer.readableBytes
        if let discarded = self.discardedBytes {
            guard let end = Self.firstNewline(in: buffer, from: 0) else {
                self.searchedBytes += available
                self.discardedBytes = discarded + available
                buffer.moveReaderIndex(forwardBy: available)
                return nil
            }
            let skipped = end + 1
            self.searchedBytes += skipped
            buffer.moveReaderIndex(forwardBy: skipped)
            self.discardedBytes = nil
            return .tooLong(byteCount: discarded + skipped)
        }

        let searchFrom = self.scannedBytes
        guard let end = Self.firstNewline(in: buffer, from: searchFrom) else {
            self.searchedBytes += available - searchFrom
            self.scannedBytes = available
            // `+ 1` leaves room for a `\r` that the next read may show to precede the newline.
            if available > self.maxLineLength + 1 {
                self.discardedBytes = available
                self.scannedBytes = 0
                buffer.moveReaderIndex(forwardBy: available)
            }
            return nil
        }
        self.searchedBytes += end - searchFrom + 1
        self.scannedBytes = 0
        let length = end
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        Self.dropCarriageReturn(&line)
        guard line.readableBytes <= self.maxLineLength else {
            return .tooLong(byteCount: length + 1)
        }
        return .line(line)
    }

    /// The offset from the reader index of the first `\n` at or after `offset` readable bytes.
    ///
    /// `memchr` rather than `firstIndex(of:)`: the generic search costs tens of nanoseconds a byte where it is not
    /// specialised (debug builds), which made framing the most expensive part of a refused line; `memchr` costs a
    /// fraction of a nanosecond a byte in every build.
    static func firstNewline(in buffer: ByteBuffer, from offset: Int) -> Int? {
        buffer.withUnsafeReadableBytes { bytes in
            guard offset < bytes.count, let base = bytes.baseAddress else { return nil }
            guard let found = memchr(base + offset, Int32(UInt8(ascii: "\n")), bytes.count - offset) else { return nil }
            return UnsafeRawPointer(found) - base
        }
    }

    private static func dropCarriageReturn(_ line: inout ByteBuffer) {
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
    }
}
