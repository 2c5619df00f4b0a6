import AccessEnablerAPI
import Logging
import RegcodeStore
import SoakReport

/// Reads what a soak report needs from one state database, read-only: polls, status events, requests,
/// devices and logins, of `devices` only when some are named.
package struct ReportLoader: Sendable {
    /// The devices to read; empty for all.
    package var devices: [String]

    package init(devices: [String] = []) {
        self.devices = devices
    }

    /// The logs of one database.
    package func load(_ path: String, sinceMs: Int64?) async throws -> ReportLogs {
        let store = try RegcodeStore(readingOnly: path, logger: Logger(label: "regcodectl.report", factory: { _ in SwiftLogNoOpLogHandler() }))
        return ReportLogs(
            polls: try await loadPolls(store, sinceMs: sinceMs),
            events: try await loadStatusEvents(store, sinceMs: sinceMs),
            // A read-only store of schema version 1 has no request log: the report then leaves the
            // request figures out rather than showing zeros.
            requests: store.fileSchemaVersion >= 2 ? try await loadRequests(store, sinceMs: sinceMs) : nil,
            devices: try await loadDevices(store),
            logins: try await loadLogins(store, sinceMs: sinceMs)
        )
    }

    /// The logins of the window (nil for a database without a login log).
    func loadLogins(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [LoginRecord]? {
        let wanted = devices.isEmpty ? nil : Set(devices)
        guard let logins = try await store.logins(device: nil, sinceEpochMs: sinceMs) else { return nil }
        return logins.filter { wanted?.contains($0.device) ?? true }
            .map { LoginRecord(device: $0.device, timeMs: $0.epochMs, mvpd: $0.mvpd, kind: $0.kind) }
    }

    func loadPolls(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [PollRecord] {
        let attempts: [StoredPollAttempt]
        if devices.isEmpty {
            attempts = try await store.pollAttempts(device: nil, sinceEpochMs: sinceMs)
        } else {
            var all: [StoredPollAttempt] = []
            for name in Set(devices).sorted() { all += try await store.pollAttempts(device: name, sinceEpochMs: sinceMs) }
            attempts = all
        }
        return attempts
    }

    func loadRequests(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [RequestRecord] {
        let attempts: [StoredRequestAttempt]
        if devices.isEmpty {
            attempts = try await store.requestAttempts(device: nil, sinceEpochMs: sinceMs)
        } else {
            var all: [StoredRequestAttempt] = []
            for name in Set(devices).sorted() { all += try await store.requestAttempts(device: name, sinceEpochMs: sinceMs) }
            attempts = all
        }
        return attempts
    }

    /// The stored devices (all of them: a device without activity in the window is still reported).
    func loadDevices(_ store: RegcodeStore) async throws -> [DeviceRecord] {
        let wanted = devices.isEmpty ? nil : Set(devices)
        return try await store.deviceRecordSummaries()
            .filter { wanted?.contains($0.name) ?? true }
            .map { DeviceRecord(device: $0.name, state: $0.state.rawValue, codesIssued: $0.codesIssued, fleet: $0.fleet) }
    }

    /// The `status` events of the window, read page by page.
    func loadStatusEvents(_ store: RegcodeStore, sinceMs: Int64?) async throws -> [StatusEventRecord] {
        let pageSize = 10_000
        let devices = devices.isEmpty ? nil : Set(devices)
        var records: [StatusEventRecord] = []
        var after: Int64 = 0
        while true {
            let page = try await store.events(after: after, devices: devices, names: [Callback.status.rawValue], limit: pageSize)
            for event in page {
                if let sinceMs, event.time < sinceMs { continue }
                let dictionary = event.args["statusDictionary"]
                guard let errorId = dictionary?["errorId"]?.stringValue else { continue }
                records.append(
                    StatusEventRecord(
                        device: event.device,
                        timeMs: event.time,
                        errorId: errorId,
                        code: dictionary?["code"]?.stringValue,
                        message: dictionary?["message"]?.stringValue,
                        level: dictionary?["level"]?.stringValue
                    )
                )
            }
            guard page.count == pageSize, let last = page.last else { return records }
            after = last.seq
        }
    }

    /// Prints `message` and gives the exit code to throw.
}
