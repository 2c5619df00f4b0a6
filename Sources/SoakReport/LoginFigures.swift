import RegcodeSupport

/// A login as the report reads it from the login log (`logins`): a profile the device newly held.
package struct LoginRecord: Sendable, Equatable {
    package var device: String
    /// Milliseconds since the Unix epoch.
    package var timeMs: Int64
    package var mvpd: String
    /// `regular`, `temppass`, `degraded` or `sso` (another version's kind is counted as it is spelled).
    package var kind: String

    package init(device: String, timeMs: Int64, mvpd: String, kind: String) {
        self.device = device
        self.timeMs = timeMs
        self.mvpd = mvpd
        self.kind = kind
    }
}

/// Logins counted by kind: the user's own MVPD login, TempPass, degradation, single sign-on.
package struct LoginFigures: Sendable, Equatable {
    package var total: Int
    /// Every kind of ``kinds`` (zero when none happened), then other kinds alphabetically.
    package var byKind: [(kind: String, count: Int)]
    /// Devices with at least one login.
    package var devices: Int

    /// The kinds always listed, in this order.
    package static let kinds = ["regular", "temppass", "degraded", "sso"]

    package init(_ logins: [LoginRecord]) {
        var counts: [String: Int] = [:]
        for login in logins { counts[login.kind, default: 0] += 1 }
        let others = counts.keys.filter { !Self.kinds.contains($0) }.sorted()
        total = logins.count
        byKind = (Self.kinds + others).map { ($0, counts[$0] ?? 0) }
        devices = Set(logins.map(\.device)).count
    }

    package func count(_ kind: String) -> Int {
        byKind.first { $0.kind == kind }?.count ?? 0
    }

    /// `12 logins (regular 8, temppass 2, degraded 1, sso 1) on 10 devices`.
    package var summary: String {
        let kinds = byKind.map { "\($0.kind) \($0.count)" }.joined(separator: ", ")
        return "\(total) login\(total == 1 ? "" : "s") (\(kinds)) on \(devices) device\(devices == 1 ? "" : "s")"
    }

    package static func == (lhs: LoginFigures, rhs: LoginFigures) -> Bool {
        lhs.total == rhs.total && lhs.devices == rhs.devices && lhs.byKind.map(\.kind) == rhs.byKind.map(\.kind)
            && lhs.byKind.map(\.count) == rhs.byKind.map(\.count)
    }

    /// `{"total": n, "devices": n, "by_kind": {"regular": n, …}}`.
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("total")
            json.int(Int64(total))
            json.key("devices")
            json.int(Int64(devices))
            json.key("by_kind")
            json.object { json in
                for (kind, count) in byKind {
                    json.key(kind)
                    json.int(Int64(count))
                }
            }
        }
    }
}
