import Logging

/// swift-log's `StreamLogHandler` that renders attached metadata only when a message is written.
///
/// `StreamLogHandler` turns its whole metadata into text every time a key is set. Hummingbird sets a request
/// id on the logger of every request, so a server logging at `warning` built that text for each request and
/// never printed it: about 5 % of `pass-sim`'s CPU under load. Here the attached metadata stays a dictionary
/// and goes to the stream handler with the message (explicit metadata of a message still wins), so the
/// lines written are the same.
package struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    package var metadata: Logger.Metadata = [:]

    /// Writes to standard error, as `StreamLogHandler.standardError(label:)`.
    package static func standardError(label: String) -> Self {
        Self(stream: StreamLogHandler.standardError(label: label))
    }

    /// Wraps `stream`; metadata set on the wrapper reaches it with each message.
    package init(stream: StreamLogHandler) {
        self.stream = stream
    }

    package var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        guard !metadata.isEmpty else { return stream.log(event: event) }
        var event = event
        event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        stream.log(event: event)
    }
}
