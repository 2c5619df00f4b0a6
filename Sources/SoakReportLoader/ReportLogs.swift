import SoakReport

/// What `report` reads from one or more state databases (one per shard), ready for ``SoakReport``.
package struct ReportLogs: Sendable {
    package var polls: [PollRecord] = []
    package var events: [StatusEventRecord] = []
    /// nil when a database has no request log (schema version 1): the report then leaves request
    /// figures out for every shard rather than counting some.
    package var requests: [RequestRecord]? = []
    package var devices: [DeviceRecord] = []
    /// nil when a database has no login log (schema version before 5): logins are then left out.
    package var logins: [LoginRecord]? = []
    /// The databases each device was read from.
    private var sources: [String: [String]] = [:]

    package init() {}

    package init(polls: [PollRecord], events: [StatusEventRecord], requests: [RequestRecord]?, devices: [DeviceRecord], logins: [LoginRecord]? = []) {
        self.polls = polls
        self.events = events
        self.requests = requests
        self.devices = devices
        self.logins = logins
    }

    /// Adds one database's logs: the union, since shards run disjoint devices.
    package mutating func append(_ other: ReportLogs, from path: String) {
        polls += other.polls
        events += other.events
        if let theirs = other.requests { requests? += theirs } else { requests = nil }
        devices += other.devices
        if let theirs = other.logins { logins? += theirs } else { logins = nil }
        var names = Set(other.devices.map(\.device))
        names.formUnion(other.polls.lazy.map(\.device))
        for name in names { sources[name, default: []].append(path) }
    }

    /// Devices found in more than one database (a shard started twice on copies, say), by name.
    package var devicesInSeveralDatabases: [(String, [String])] {
        sources.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension SoakReport {
    /// The report over `logs`, made at `nowMs`.
    package init(logs: ReportLogs, generatedAtMs nowMs: Int64, sinceMs: Int64?) {
        self.init(
            polls: logs.polls,
            statusEvents: logs.events,
            requests: logs.requests,
            devices: logs.devices,
            logins: logs.logins,
            generatedAtMs: nowMs,
            sinceMs: sinceMs
        )
    }
}
