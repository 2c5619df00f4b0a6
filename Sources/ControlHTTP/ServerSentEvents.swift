import NIOCore
import RegcodeSupport

/// The `text/event-stream` framing (WHATWG HTML §9.2): what the browser's `EventSource` and SSE clients read.
enum ServerSentEvents {
    /// One event: `id:` makes a reconnecting `EventSource` send `Last-Event-ID`, so it resumes without a gap.
    static func event(name: String, data: JSONValue, id: Int64?) -> ByteBuffer {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\n"
        // The shared writer emits one line (newlines inside strings are escaped), so one `data:` field holds it.
        text += "data: \(JSONWriter.text(data))\n\n"
        return ByteBuffer(string: text)
    }

    /// A comment line: keeps proxies from timing the stream out and finds a client that went away.
    static let keepAlive = ByteBuffer(string: ": keep-alive\n\n")

    /// Sent first: how long a client waits before reconnecting after the stream drops.
    static func retry(milliseconds: Int) -> ByteBuffer {
        ByteBuffer(string: "retry: \(milliseconds)\n\n")
    }
}
