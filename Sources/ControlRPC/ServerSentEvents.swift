import NIOCore
import RegcodeSupport

/// The `text/event-stream` framing (WHATWG HTML §9.2): what the browser's `EventSource` and SSE clients read.
///
/// Here rather than beside the HTTP listener because a published ``EventNotification`` carries its frame, encoded
/// once for every stream.
package enum ServerSentEvents {
    /// One event: `id:` makes a reconnecting `EventSource` send `Last-Event-ID`, so it resumes without a gap.
    package static func event(name: String, data: JSONValue, id: Int64?) -> ByteBuffer {
        Self.event(name: name, json: JSONWriter.text(data), id: id)
    }

    /// One event whose data is already JSON text on one line (the shared writer escapes newlines inside strings).
    static func event(name: String, json: String, id: Int64?) -> ByteBuffer {
        var text = ""
        text.reserveCapacity(json.utf8.count + 40)
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\n"
        text += "data: "
        text += json
        text += "\n\n"
        return ByteBuffer(string: text)
    }

    /// A comment line: keeps proxies from timing the stream out and finds a client that went away.
    package static let keepAlive = ByteBuffer(string: ": keep-alive\n\n")

    /// Sent first: how long a client waits before reconnecting after the stream drops.
    package static func retry(milliseconds: Int) -> ByteBuffer {
        ByteBuffer(string: "retry: \(milliseconds)\n\n")
    }
}
