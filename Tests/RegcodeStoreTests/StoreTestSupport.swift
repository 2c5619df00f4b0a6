import Foundation
import Logging
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import Testing

/// A temporary directory holding one test's database files, removed when the test ends.
final class TempDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("regcode-store-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}

let quietLogger: Logger = {
    var logger = Logger(label: "regcode-store-test")
    logger.logLevel = .error
    return logger
}()

func openStore(_ path: String) throws -> RegcodeStore {
    try RegcodeStore(path: path, logger: quietLogger)
}

/// `schema.sql` at the package root, found from this file's location.
let schemaFileURL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .appendingPathComponent("schema.sql")

/// File permission bits of `path`.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

let t0: Int64 = 1_763_720_000_000

func makeSettings(_ name: String, statement: String? = nil, keys: SigningKeys? = nil) -> DeviceSettings {
    var settings = DeviceSettings(name: name, requestor: "REF30")
    settings.softwareStatement = statement
    settings.signingKeys = keys
    settings.presetMVPD = "Cablevision"
    settings.polling.interval = .seconds(4)
    settings.polling.onExpiry = .renew(times: 2)
    settings.deviceInfo.applicationId = "com.example.tv"
    return settings
}

func makeDevice(_ name: String, deviceID: String? = nil, seed: UInt64 = 7) -> StoredDevice {
    StoredDevice(
        name: name,
        deviceID: deviceID ?? "id-\(name)",
        settings: makeSettings(name),
        scenario: .login,
        seed: seed
    )
}

func poll(_ code: String, at time: Int64, status: Int? = 200, outcome: PollOutcome = .pending) -> PollAttempt {
    PollAttempt(
        code: code,
        plannedEpochMs: time - 3,
        sentEpochMs: time,
        latencyMs: 12.5,
        httpStatus: status,
        outcome: outcome,
        nextDelayMs: outcome == .pending ? 5_000 : nil
    )
}

/// A snapshot of a device polling `code`.
func pollingSnapshot(code: String, expires: Int64, base: DeviceSnapshot = DeviceSnapshot()) -> DeviceSnapshot {
    var snapshot = base
    snapshot.phase = .polling
    snapshot.mvpds = [MVPD(id: "Cablevision", displayName: "Optimum", logoURL: "https://logo.example/o.png")]
    snapshot.selectedMVPD = "Cablevision"
    snapshot.code = IssuedCode(code: code, expiresEpochMs: expires, mvpd: "Cablevision")
    return snapshot
}

func request(
    _ stage: RequestStage,
    at time: Int64,
    status: Int? = 200,
    outcome: RequestOutcome = .ok,
    errorCode: String? = nil,
    retryDelayMs: Int64? = nil
) -> RequestAttempt {
    RequestAttempt(
        stage: stage,
        endpoint: "\(stage.rawValue)-endpoint",
        sentEpochMs: time,
        latencyMs: 7.25,
        httpStatus: status,
        outcome: outcome,
        errorCode: errorCode,
        retryDelayMs: retryDelayMs
    )
}
