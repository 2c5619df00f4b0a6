import Foundation
import RegcodeEngine
import RegcodeRecords

/// A device as stored: configuration, identity and durable state.
package struct StoredDevice: Sendable, Equatable {
    package var name: String
    /// The stable id sent to the backend; fixed when the row is first created.
    package var deviceID: String
    /// Loaded settings never carry `softwareStatement` or `signingKeys`: they are not stored,
    /// and the daemon supplies them again from its configuration.
    package var settings: DeviceSettings
    package var scenario: Scenario
    /// Jitter generator seed.
    package var seed: UInt64
    package var snapshot: DeviceSnapshot
    /// The configured fleet the device belongs to or was modelled on, if any.
    package var fleet: String?
    /// Whether the device was added over the control socket rather than by the configuration
    /// file (such devices survive a restart although the file does not list them).
    package var addedAtRuntime: Bool
    /// The device's stable client address (its bound source address or `X-Forwarded-For`), unique among the
    /// stored devices; `nil` until the daemon assigns one (see ``RegcodeStore/assignClientAddresses(_:)``).
    package var clientAddress: String?
    /// The apps the device hosts, first app first; empty for a plain one-app device.
    package var apps: [StoredApp] = []
    /// The device's shared token storage (devices that host apps).
    package var tokens: [SharedToken] = []
    /// The device's TV Provider (Apple single sign-on) as last stored; nil: not emulated.
    package var tvProvider: TVProviderDevice?

    package init(
        name: String,
        deviceID: String,
        settings: DeviceSettings,
        scenario: Scenario,
        seed: UInt64,
        snapshot: DeviceSnapshot = DeviceSnapshot(),
        fleet: String? = nil,
        addedAtRuntime: Bool = false,
        clientAddress: String? = nil
    ) {
        self.name = name
        self.deviceID = deviceID
        self.settings = settings
        self.scenario = scenario
        self.seed = seed
        self.snapshot = snapshot
        self.fleet = fleet
        self.addedAtRuntime = addedAtRuntime
        self.clientAddress = clientAddress
    }
}

/// An app of a device as stored: who it is and, for apps other than the first, its own state.
package struct StoredApp: Sendable, Equatable {
    package var app: HostedApp
    /// nil for the first app, whose state is the device's.
    package var snapshot: DeviceSnapshot?
    package init(app: HostedApp, snapshot: DeviceSnapshot? = nil) {
        self.app = app
        self.snapshot = snapshot
    }
}

/// One row of the poll log.
package typealias StoredPollAttempt = PollLogEntry

/// One row of the request log.
package typealias StoredRequestAttempt = RequestLogEntry

/// A stored device as reports see it: its state and how many codes it was ever issued, without
/// settings or secrets.
package struct DeviceRecordSummary: Sendable, Equatable {
    package var name: String
    package var state: DevicePhase
    package var fleet: String?
    /// When the row was created, milliseconds since the Unix epoch.
    package var createdEpochMs: Int64
    /// Rows in `codes` for the device: every code it was issued (pending or ended) while stored.
    package var codesIssued: Int
    package var clientAddress: String?

    package init(name: String, state: DevicePhase, fleet: String?, createdEpochMs: Int64, codesIssued: Int, clientAddress: String?) {
        self.name = name
        self.state = state
        self.fleet = fleet
        self.createdEpochMs = createdEpochMs
        self.codesIssued = codesIssued
        self.clientAddress = clientAddress
    }
}

/// One line of the device overview.
package struct DeviceSummary: Sendable, Equatable {
    package var name: String
    package var state: DevicePhase
    /// The code being polled, if a login is pending.
    package var pendingCode: String?
    /// When the pending code expires, milliseconds since the Unix epoch.
    package var codeExpiresEpochMs: Int64?
    /// Polls logged for the pending code (0 without one).
    package var pollsForCode: Int
    /// HTTP status of the device's latest logged poll (`nil` without one or on transport errors).
    package var lastHTTPStatus: Int?
    /// When the device's latest logged poll was sent, milliseconds since the Unix epoch.
    package var lastPollEpochMs: Int64?
    /// The configured fleet the device belongs to (or was modelled on, for a device added over the socket).
    package var fleet: String?

    package init(
        name: String,
        state: DevicePhase,
        pendingCode: String?,
        codeExpiresEpochMs: Int64?,
        pollsForCode: Int,
        lastHTTPStatus: Int?,
        lastPollEpochMs: Int64?,
        fleet: String? = nil
    ) {
        self.fleet = fleet
        self.name = name
        self.state = state
        self.pendingCode = pendingCode
        self.codeExpiresEpochMs = codeExpiresEpochMs
        self.pollsForCode = pollsForCode
        self.lastHTTPStatus = lastHTTPStatus
        self.lastPollEpochMs = lastPollEpochMs
    }
}

/// Why the store could not open a database or read a row.
package enum RegcodeStoreError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The file could not be created, opened or read as SQLite.
    case cannotOpen(path: String, reason: String)
    /// The file is an SQLite database, but not one this daemon created.
    case notARegcodeDatabase(path: String, reason: String)
    /// The database uses a schema version this build does not know.
    case unsupportedSchemaVersion(path: String, found: Int32, supported: Int32)
    /// A stored row holds a value this build cannot decode.
    case corruptRow(table: String, key: String, reason: String)
    /// The client address is already another stored device's.
    case clientAddressInUse(address: String, device: String)

    package var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open state database \(path): \(reason)"
        case .notARegcodeDatabase(let path, let reason):
            "\(path) is not a regcoded state database: \(reason)"
        case .unsupportedSchemaVersion(let path, let found, let supported) where found > supported:
            "state database \(path) has schema version \(found), newer than this build supports (\(supported)); use a newer regcoded"
        case .unsupportedSchemaVersion(let path, let found, let supported):
            "state database \(path) has schema version \(found), which this build (schema \(supported)) cannot migrate"
        case .corruptRow(let table, let key, let reason):
            "unreadable \(table) row \(key): \(reason)"
        case .clientAddressInUse(let address, let device):
            "client address \(address) is already used by device \(device)"
        }
    }

    package var errorDescription: String? { description }
}
