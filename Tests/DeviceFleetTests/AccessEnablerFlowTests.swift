import AccessEnablerAPI
import AdobePassClient
import Foundation
import InMemoryLogging
import Logging
import NIOCore
import PassSimulator
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Synchronization
import Testing

@testable import DeviceFleet

/// Every flow of access-enabler-api.md §7 against the real simulator over loopback HTTP, on REST v2,
/// on v1 with DCR and on v1 with the HMAC keys of the legacy `setRequestor`: the exact callbacks, in order.
@Suite struct AccessEnablerFlowTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case v2, v1DCR, v1HMAC
        var testDescription: String { rawValue }
        var profile: APIProfile { self == .v2 ? .v2 : .v1 }
    }

    static let keys = SigningKeys(publicKey: "fleetPublicKey", secret: "fleetSecretKey")
    static let deniedDetails = #"Your subscription package does not include the "Denied" channel"#

    static func simulatorConfiguration() -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration()
        configuration.statementKey = FleetEndToEndTests.statementKey
        // These tests make a dozen calls in a few seconds; the throttle has its own tests.
        configuration.throttleEnabled = false
        configuration.denyResources = ["Denied": deniedDetails]
        configuration.signingKeys = [keys.publicKey: keys.secret]
        return configuration
    }

    /// An idle device (the test plays the app) of the given kind. The HMAC device gets its keys from the
    /// legacy `setRequestor(…secret:publicKey:)`, not from its settings.
    static func settings(_ kind: Kind, name: String = "stb-1") -> DeviceSettings {
        var settings = DeviceSettings(name: name, requestor: "REF30")
        settings.profile = kind.profile
        settings.softwareStatement = kind == .v1HMAC ? nil : FleetEndToEndTests.statement
        settings.polling.interval = .seconds(3)
        return settings
    }

    @Test(arguments: Kind.allCases)
    func everyFlowInOrder(kind: Kind) async throws {
        try await FleetHarness.run(simulator: Self.simulatorConfiguration()) { h in
            let deviceID = "5d1c0f00-0000-4000-8000-00000000000\(Kind.allCases.firstIndex(of: kind)!)"
            try await h.fleet.add(.init(settings: Self.settings(kind), deviceID: deviceID, scenario: .idle, seed: 7))
            let none = "None"
            let device = ["unknown", "ios", "tvOS"]

            // 1. Startup.
            let startup = try await h.call(.setRequestor(signingKeys: kind == .v1HMAC ? Self.keys : nil), through: "setRequestorComplete")
            #expect(startup == [.setRequestorComplete(1)])

            // 2. checkAuthentication, and 12. the selected provider before any login.
            #expect(
                try await h.call(.checkAuthentication, through: "sendTrackingData") == [
                    .setAuthenticationStatus(0, "User Not Authenticated Error"),
                    .sendTrackingData(.authenticationDetection, ["NO", none, none, none] + device),
                ]
            )
            #expect(try await h.call(.getSelectedProvider, through: "selectedProvider") == [.selectedProvider(nil)])

            // 3. Login with the picker and a second-screen code.
            let mvpds = SimulatedMVPD.defaults.map {
                MVPD(
                    id: $0.id,
                    displayName: $0.displayName,
                    logoURL: "\(h.baseURL)/_sim/logos/\($0.id).svg",
                    platformMappingId: $0.platformMappingId,
                    boardingStatus: $0.boardingStatus.flatMap { MVPD.BoardingStatus(rawValue: $0.rawValue) },
                    enablePlatformServices: $0.enablePlatformServices,
                    displayInPlatformPicker: $0.displayInPlatformPicker,
                    enforcePlatformPermissions: $0.enforcePlatformPermissions
                )
            }
            #expect(try await h.call(.getAuthentication(mvpd: nil), through: "displayProviderDialog") == [.displayProviderDialog(mvpds)])
            let shown = try await h.call(.setSelectedProvider("Cablevision"), through: "status")
            let code = try #require(shown.last?.args["statusDictionary"]?["message"]?.stringValue)
            let expires = try #require(shown.last?.args["statusDictionary"]?["expires"]?.intValue)
            #expect(
                shown == [
                    .sendTrackingData(.mvpdSelection, ["Cablevision"] + device),
                    .status(StatusID(rawValue: "REGCODE"), level: .success, message: code, extra: ["expires": .int(expires)]),
                ]
            )
            let beforeApproval = h.sink.events.count
            let approval = try await h.approve(code, userID: "flow-user-\(kind.rawValue)")
            let login = try await h.wait(through: "sendTrackingData", after: beforeApproval)
            let guid = try #require(login.last?.args["data"]?.arrayValue?[2].stringValue)
            #expect(guid.count == 32 && guid.allSatisfy(\.isHexDigit))
            #expect(
                login == [
                    .setAuthenticationStatus(1, ""),
                    .sendTrackingData(.authenticationDetection, ["YES", "Cablevision", guid, "NO"] + device),
                ]
            )
            #expect(try await h.call(.getSelectedProvider, through: "selectedProvider") == [.selectedProvider(mvpds[0])])

            // 9. Authorization, granted and denied.
            let granted = try await h.call(.checkAuthorization(resource: "Live"), through: "sendTrackingData")
            let token = try #require(granted.first?.args["token"]?.stringValue)
            #expect(Data(base64Encoded: token) != nil)
            #expect(
                granted == [
                    .setToken(token, resource: "Live"),
                    .sendTrackingData(.authorizationDetection, ["YES", "Cablevision", guid, "NO", none, none] + device),
                ]
            )
            #expect(
                try await h.call(.checkAuthorization(resource: "Denied"), through: "sendTrackingData") == [
                    .status(
                        StatusID(rawValue: "Z100"),
                        level: .error,
                        message: Self.deniedDetails,
                        extra: ["resource": "Denied", "details": "authorization_denied_by_mvpd"]
                    ),
                    .tokenRequestFailed("Denied", errorCode: "User Not Authorized Error", errorDescription: Self.deniedDetails),
                    .sendTrackingData(
                        .authorizationDetection,
                        ["NO", "Cablevision", guid, "NO", "User Not Authorized Error", Self.deniedDetails] + device
                    ),
                ]
            )

            // 10. Preauthorization.
            // The denied item's item-level error rides along.
            let preauthorized = try await h.call(.checkPreauthorizedResources(["Denied", "Live", "News"]), through: "preauthorizedResources")
            #expect(preauthorized.count == 1)
            if case .preauthorizedResources(let granted, let errors)? = preauthorized.first {
                #expect(granted == ["Live", "News"])
                #expect(errors.map(\.resource) == ["Denied"])
                // v2 names the preauthorization's own denial; the v1 simulator answers as the v1 MVPD denial.
                #expect(errors.map(\.error.code).allSatisfy { ["preauthorization_denied_by_mvpd", "authorization_denied_by_mvpd"].contains($0) })
            } else {
                Issue.record("expected preauthorizedResources, got \(preauthorized)")
            }

            // 11. Metadata, opcodes 0 to 3, arguments echoed.
            let notAfter = try #require(approval["notAfter"]?.intValue)
            #expect(
                try await h.call(.getMetadata(["opCode": 0]), through: "setMetadataStatus") == [
                    .setMetadataStatus(.string(String(notAfter)), encrypted: false, key: 0, arguments: ["opCode": 0])
                ]
            )
            let ttl = try await h.call(.getMetadata(["opCode": 1, "resource_id": "Live"]), through: "setMetadataStatus")
            let authorizationExpiry = try #require(ttl.first?.args["metadata"]?.stringValue.flatMap { Int64($0) })
            let expected = Int64(Date().timeIntervalSince1970 * 1000) + 24 * 3_600_000
            #expect(abs(authorizationExpiry - expected) < 120_000)
            #expect(
                ttl == [
                    .setMetadataStatus(
                        .string(String(authorizationExpiry)),
                        encrypted: false,
                        key: 1,
                        arguments: ["opCode": 1, "resource_id": "Live"]
                    )
                ]
            )
            #expect(
                try await h.call(.getMetadata(["opCode": 2]), through: "setMetadataStatus") == [
                    .setMetadataStatus(.string(deviceID), encrypted: false, key: 2, arguments: ["opCode": 2])
                ]
            )
            let attributes = try #require(approval["attributes"])
            for (name, encrypted) in [("zip", false), ("encryptedZip", true), ("maxRating", false)] {
                let key: JSONValue = ["opCode": 3, "user_metadata_name": .string(name)]
                let value = try #require(attributes[name]?["value"])
                #expect(attributes[name]?["state"] == (encrypted ? "enc" : "plain"))
                #expect(
                    try await h.call(.getMetadata(key), through: "setMetadataStatus") == [
                        .setMetadataStatus(value, encrypted: encrypted, key: 3, arguments: key)
                    ]
                )
            }

            // 8. Logout: local state gone, backend told, then the provider is unknown and authorization fails.
            #expect(try await h.call(.logout, through: "setAuthenticationStatus") == [.setAuthenticationStatus(0, "User Not Authenticated Error")])
            #expect(try await h.call(.getSelectedProvider, through: "selectedProvider") == [.selectedProvider(nil)])
            #expect(
                try await h.call(.checkAuthorization(resource: "Live"), through: "tokenRequestFailed") == [
                    .setAuthenticationStatus(0, "User Not Authenticated Error"),
                    .tokenRequestFailed("Live", errorCode: "User Not Authenticated Error", errorDescription: ""),
                ]
            )
            // The backend forgot the login too: logging in again needs a new code.
            let again = try await h.call(.getAuthentication(mvpd: "Cablevision"), through: "status")
            #expect(again.map(\.name) == ["sendTrackingData", "status"])
            #expect(again.last?.statusErrorID == "REGCODE")
            #expect(again.last?.args["statusDictionary"]?["message"]?.stringValue != code)

            let snapshot = await h.fleet.snapshot(of: "stb-1")
            #expect(snapshot?.credentials != nil || kind == .v1HMAC)
            await h.stop()
            // Secrets never reach an event.
            let everything = h.sink.events.map { JSONWriter.text(.object($0.args)) }.joined()
            for secret in [Self.keys.secret, FleetEndToEndTests.statement]
                + [snapshot?.credentials?.clientSecret, snapshot?.accessToken?.token].compactMap({ $0 })
            {
                #expect(!everything.contains(secret))
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func cancelThenLoginTheBackendAlreadyCompleted(kind: Kind) async throws {
        try await FleetHarness.run(simulator: Self.simulatorConfiguration()) { h in
            try await h.fleet.add(.init(settings: Self.settings(kind), deviceID: "6e2d1f00-0000-4000-8000-000000000001", scenario: .idle, seed: 9))
            _ = try await h.call(.setRequestor(signingKeys: kind == .v1HMAC ? Self.keys : nil), through: "setRequestorComplete")
            let shown = try await h.call(.getAuthentication(mvpd: "Cablevision"), through: "status")
            let code = try #require(shown.last?.args["statusDictionary"]?["message"]?.stringValue)

            // 7. Cancel: polling stops.
            #expect(
                try await h.call(.setSelectedProvider(nil), through: "setAuthenticationStatus") == [
                    .status(.providerSelectionCancelled, level: .info, message: "authentication cancelled"),
                    .setAuthenticationStatus(0, "Provider Not Selected Error"),
                ]
            )
            let polls = h.sink.polls.count
            // The user finishes on the second screen anyway.
            _ = try await h.approve(code, userID: "late-user")
            try await Task.sleep(for: .seconds(4))
            // A poll already out when the user cancelled is answered and logged as abandoned; none follows.
            let later = h.sink.polls.dropFirst(polls)
            #expect(later.count <= 1 && later.allSatisfy { $0.outcome == .abandoned }, "a cancelled code is not polled: \(later.map(\.outcome))")
            #expect(await h.fleet.snapshot(of: "stb-1")?.profile == nil)

            // Asking again finds the login the backend already has: no new code is shown.
            let login = try await h.call(.getAuthentication(mvpd: "Cablevision"), through: "setAuthenticationStatus")
            #expect(login.map(\.name) == ["sendTrackingData", "setAuthenticationStatus", "sendTrackingData"])
            #expect(login[1] == .setAuthenticationStatus(1, ""))
            #expect(login.last?.args["eventName"] == "authenticationDetection")
            #expect(await h.fleet.snapshot(of: "stb-1")?.profile?.userID == "late-user")
            await h.stop()
        }
    }

    @Test func getAuthorizationLogsInAndAuthorizes() async throws {
        try await FleetHarness.run(simulator: Self.simulatorConfiguration()) { h in
            try await h.fleet.add(.init(settings: Self.settings(.v2), deviceID: "7f3e2000-0000-4000-8000-000000000001", scenario: .idle, seed: 3))
            _ = try await h.call(.setRequestor(signingKeys: nil), through: "setRequestorComplete")
            #expect(try await h.call(.getAuthorization(resource: "Live"), through: "displayProviderDialog").map(\.name) == ["displayProviderDialog"])
            let shown = try await h.call(.setSelectedProvider("DTV"), through: "status")
            let code = try #require(shown.last?.args["statusDictionary"]?["message"]?.stringValue)
            let mark = h.sink.events.count
            _ = try await h.approve(code, userID: "viewer")
            let events = try await h.wait(through: "setToken", after: mark)
            #expect(events.map(\.name) == ["setAuthenticationStatus", "sendTrackingData", "setToken", "sendTrackingData"])
            #expect(events[2].args["resource"] == "Live")
            await h.stop()
        }
    }

    // MARK: Refused signatures

    enum SignatureFault: String, CaseIterable, CustomTestStringConvertible {
        case wrongSecret, staleRequestTime, secondsInsteadOfMilliseconds
        var testDescription: String { rawValue }

        /// What the simulator logs as its reason for refusing.
        var refusal: String {
            switch self {
            case .wrongSecret: "bad signature"
            case .staleRequestTime: "stale request_time"
            case .secondsInsteadOfMilliseconds: "request_time not in milliseconds"
            }
        }
    }

    @Test(arguments: SignatureFault.allCases)
    func refusedSignatureIsReportedAsSEC403(fault: SignatureFault) async throws {
        let logs = LogRecords()
        let fakeSignature: @Sendable (inout AdobePassClientConfiguration) -> Void = { configuration in
            switch fault {
            case .wrongSecret: break
            case .staleRequestTime: configuration.signatureFault = .requestTimeOffset(.seconds(-3600))
            case .secondsInsteadOfMilliseconds: configuration.signatureFault = .requestTimeInSeconds
            }
        }
        try await FleetHarness.run(simulator: Self.simulatorConfiguration(), simulatorLogger: logs.logger(), client: fakeSignature) { h in
            var settings = Self.settings(.v1HMAC)
            settings.signingKeys = fault == .wrongSecret ? SigningKeys(publicKey: Self.keys.publicKey, secret: "not-the-secret") : Self.keys
            try await h.fleet.add(.init(settings: settings, deviceID: "8a4f3000-0000-4000-8000-000000000001", scenario: .idle, seed: 5))
            // Every v1 call is signed, the MVPD list first, so the refusal shows at setRequestor, as with Adobe.
            #expect(
                try await h.call(.setRequestor(signingKeys: nil), through: "setRequestorComplete") == [
                    .status(StatusID(rawValue: "SEC403"), level: .error, message: "HTTP 401"),
                    .setRequestorComplete(0),
                ]
            )
            await h.stop()
        }
        let reasons = logs.values(of: "v1.auth.reason")
        #expect(!reasons.isEmpty)
        #expect(reasons.allSatisfy { $0 == fault.refusal }, "simulator refusals: \(reasons)")
    }
}

/// A simulator, a client and a fleet on the system clock, torn down at the end.
struct FleetHarness: Sendable {
    let baseURL: String
    let sink: RecordingSink
    let fleet: Fleet

    static var quietLogger: Logger {
        var logger = Logger(label: "AccessEnablerFlowTests")
        logger.logLevel = .critical
        return logger
    }

    static func run(
        simulator configuration: SimulatorConfiguration,
        simulatorLogger: Logger = quietLogger,
        client adjust: @Sendable (inout AdobePassClientConfiguration) -> Void = { _ in },
        _ body: @Sendable (FleetHarness) async throws -> Void
    ) async throws {
        let simulator = PassSimulator(configuration: configuration, logger: simulatorLogger)
        try await simulator.withRunningServer { baseURL in
            var clientConfiguration = AdobePassClientConfiguration(baseURL: baseURL, requestTimeout: .seconds(5))
            adjust(&clientConfiguration)
            let client = AdobePassClient(configuration: clientConfiguration, logger: quietLogger)
            let sink = RecordingSink()
            let fleet = Fleet(clock: SystemDeviceClock(), executor: client, sink: sink, logger: quietLogger)
            let harness = FleetHarness(baseURL: baseURL, sink: sink, fleet: fleet)
            try await withRunningFleet(fleet) { try await body(harness) }
        }
    }

    func stop() async {
        await fleet.stop()
    }

    /// Sends `command` to `stb-1` and returns every event it caused, once one named `name` arrived.
    func call(_ command: DeviceCommand, through name: String, timeout: Duration = .seconds(15)) async throws -> [DeviceEvent] {
        let mark = sink.events.count
        try await fleet.send(command, to: "stb-1")
        return try await wait(through: name, after: mark, timeout: timeout)
    }

    /// The events after `mark` (default: from now on), once one named `name` is among them. The callbacks of
    /// one engine step are recorded together, so a flow's last callback brings its companions with it.
    func wait(through name: String, after mark: Int? = nil, timeout: Duration = .seconds(15)) async throws -> [DeviceEvent] {
        let start = mark ?? sink.events.count
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let events = Array(sink.events.dropFirst(start))
            if events.contains(where: { $0.name == name }) { return events }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no \(name) within \(timeout); got \(sink.events.dropFirst(start).map(\.name))")
        throw WaitTimedOut()
    }

    struct WaitTimedOut: Error {}

    /// `POST /_sim/approve`: the user completes the code on the second screen. Returns the simulator's answer
    /// (profile `notAfter`, `attributes`, …).
    func approve(_ code: String, userID: String) async throws -> JSONValue {
        let answer = try await SimulatorAdmin.call(baseURL, "/_sim/approve", json: #"{"code":"\#(code)","userId":"\#(userID)"}"#)
        #expect(answer.status == 200)
        return try JSONValueParser.parse(Array(answer.body.utf8))
    }
}

/// Keeps every log record (swift-log's in-memory handler), to read what the simulator decided and why.
final class LogRecords: Sendable {
    private let handler = InMemoryLogHandler()

    func logger() -> Logger {
        let handler = self.handler
        var logger = Logger(label: "simulator") { _ in handler }
        logger.logLevel = .info
        return logger
    }

    func values(of key: String) -> [String] {
        handler.entries.compactMap { $0.metadata[key].map { "\($0)" } }
    }
}
