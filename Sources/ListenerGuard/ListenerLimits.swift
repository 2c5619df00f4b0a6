/// How one listener bounds its clients: how many connections it holds, how long one may idle, and how long a request
/// (an HTTP head and body, or a control line) may take to arrive once it has begun.
package struct ListenerLimits: Sendable, Hashable {
    /// Connections held open at once; one more is accepted and closed at once, and counted.
    package var maxConnections: Int
    /// A connection with nothing in progress is closed after this long without traffic; nil never.
    package var idleTimeout: Duration?
    /// A request (or line) that has begun must arrive whole within this long; nil never.
    package var readTimeout: Duration?
    /// The `listen()` backlog.
    package var backlog: Int32

    package init(
        maxConnections: Int,
        idleTimeout: Duration? = ListenerLimits.defaultIdleTimeout,
        readTimeout: Duration? = ListenerLimits.defaultReadTimeout,
        backlog: Int32 = ListenBacklog.system
    ) {
        self.maxConnections = max(1, maxConnections)
        self.idleTimeout = idleTimeout
        self.readTimeout = readTimeout
        self.backlog = backlog
    }

    package static let defaultIdleTimeout: Duration = .seconds(60)
    package static let defaultReadTimeout: Duration = .seconds(10)
}
