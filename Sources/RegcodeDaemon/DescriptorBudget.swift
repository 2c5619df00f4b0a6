/// How the open-file limit is shared, so that no flood on any listener can take the descriptors the fleet's
/// connections and the database need.
///
/// The reserve (a quarter of the limit, at most 1024) keeps the database and its log, the listening sockets, the
/// runtime's own reads of `/proc`, and the control socket's and metrics listener's connections (each capped within
/// it, with most of it left for the rest). The HTTP listener, which carries event streams, gets its own share beside
/// the reserve. The fleet's connections get what remains; against the embedded simulator each of them is two of the
/// process's descriptors, and the simulator's listener holds them plus a few page visitors from the reserve.
struct DescriptorBudget: Sendable, Equatable {
    let limit: Int
    let reserve: Int
    /// The control socket's cap.
    let control: Int
    /// The `--http` listener's cap; 0 without it.
    let http: Int
    /// The event streams (`GET /events`) the HTTP listener serves at once unless `http_max_event_streams` says
    /// otherwise: its share less an eighth (at least 4) kept for `POST /rpc` and the console's pages; 0 without it.
    var eventStreams: Int { self.http == 0 ? 0 : max(1, self.http - max(4, self.http / 8)) }
    /// The `--metrics` listener's cap; 0 without it.
    let metrics: Int
    /// Connections the embedded simulator holds besides the fleet's (people on its activation page); 0 without it.
    let simulatorVisitors: Int
    /// The fleet's backend connections (``ConnectionBudget``).
    let fleet: Int

    init(limit: Int, http: Bool = false, metrics: Bool = false, embeddedSimulator: Bool = false) {
        let reserve = OpenFileLimit.reserve(forLimit: limit)
        self.limit = limit
        self.reserve = reserve
        self.control = max(2, reserve / 4)
        self.metrics = metrics ? max(1, reserve / 64) : 0
        self.simulatorVisitors = embeddedSimulator ? max(2, reserve / 16) : 0
        self.http = http ? min(4096, max(8, limit / 8)) : 0
        self.fleet = max(1, (limit - reserve - self.http) / (embeddedSimulator ? 2 : 1))
    }

    init(limit: Int, configuration: DaemonConfiguration) {
        self.init(
            limit: limit,
            http: configuration.http != nil,
            metrics: configuration.metrics != nil,
            embeddedSimulator: configuration.usesEmbeddedSimulator
        )
    }

    /// The embedded simulator's cap: every fleet connection and the visitors.
    var simulator: Int { self.fleet + self.simulatorVisitors }
}
