import NIOCore
import RegcodeSupport
import Synchronization

/// An `event` notification on its way to subscribers.
///
/// ``init(params:)`` encodes `params` once, where it is published, into both wire forms: the socket's JSON-RPC line
/// and the event stream's `text/event-stream` frame. Every socket subscriber and every HTTP event stream then writes
/// the same bytes. Encoding per subscriber made the cost of an event grow with the number of subscribers (with ten
/// socket subscribers, a fifth of the daemon's CPU; with 250 event streams, 16 ms of CPU per event).
package struct EventNotification: Sendable {
    /// The notification's `params`: what filters look at.
    package let params: JSONValue
    /// `params.seq`, read once: the event's gap-free sequence number, nil for an event outside the numbering.
    package let seq: Int64?
    /// Both wire forms, when the publisher encoded them; nil when each consumer encodes `params`.
    private let encoded: Encoded?

    private struct Encoded: Sendable {
        /// `{"jsonrpc":"2.0","method":"event","params":…}` and a newline.
        var line: ByteBuffer
        /// `id: seq`, `event: event` and `data: …` lines and the blank line that ends the event.
        var frame: ByteBuffer
    }

    /// Encodes the notification's line and frame now.
    package init(params: JSONValue) {
        self.params = params
        self.seq = params["seq"]?.intValue
        EventEncodingTally.current?.countEncoding()
        let json = JSONWriter.text(params)
        var line = ByteBuffer()
        line.reserveCapacity(json.utf8.count + Self.linePrefix.utf8.count + 2)
        // The shared writer sorts keys ("jsonrpc" < "method" < "params"), so this is byte for byte the line
        // `JSONLine.encode` writes for the whole notification.
        line.writeString(Self.linePrefix)
        line.writeString(json)
        line.writeString("}\n")
        self.encoded = Encoded(line: line, frame: ServerSentEvents.event(name: "event", json: json, id: self.seq))
    }

    /// Leaves the encoding to the transport: for a notification with one consumer (a replay).
    package init(unencoded params: JSONValue) {
        self.params = params
        self.seq = params["seq"]?.intValue
        self.encoded = nil
    }

    private static let linePrefix = #"{"jsonrpc":"2.0","method":"event","params":"#

    /// The JSON-RPC line and a newline: the publisher's bytes, or encoded now.
    package func line(allocator: ByteBufferAllocator) -> ByteBuffer {
        if let encoded { return encoded.line }
        EventEncodingTally.current?.countEncoding()
        return JSONLine.encode(RPCMessage.notification(method: "event", params: self.params), allocator: allocator)
    }

    /// The server-sent event numbered `id`: the publisher's bytes when they carry that number, or encoded now.
    func eventStreamFrame(id: Int64?) -> ByteBuffer {
        if let encoded, id == self.seq { return encoded.frame }
        EventEncodingTally.current?.countEncoding()
        return ServerSentEvents.event(name: "event", data: self.params, id: id)
    }
}

/// Counts the event encodings made by the tasks it is bound to (with `EventEncodingTally.$current.withValue`): what
/// shows that fan-out encodes an event once, whatever the number of subscribers.
final class EventEncodingTally: Sendable {
    @TaskLocal static var current: EventEncodingTally?

    private let count = Atomic<Int>(0)

    init() {}

    /// Encodings counted so far.
    var encodings: Int { self.count.load(ordering: .relaxed) }

    func countEncoding() {
        self.count.add(1, ordering: .relaxed)
    }
}
