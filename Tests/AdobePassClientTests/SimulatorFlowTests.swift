import AdobePassClient
import Foundation
import NIOCore
import PassSimulator
import RegcodeEngine
import RegcodeTestSupport
import Testing

/// The client against the real simulator over loopback HTTP.
@Suite("AdobePassClient against PassSimulator")
struct SimulatorFlowTests {
    /// A registered device: credentials and a live access token.
    struct Device {
        var client: AdobePassClient
        var credentials: ClientCredentials
        var accessToken: String

        func context(deviceID: String = Fixtures.deviceID, deviceInfo: String = Fixtures.deviceInfo) -> RegcodeEngine.RequestContext {
            Fixtures.context(deviceID: deviceID, deviceInfo: deviceInfo, accessToken: accessToken)
        }

        func execute(_ request: BackendRequest, _ context: RegcodeEngine.RequestContext? = nil) async -> Result<BackendResponse, BackendFailure> {
            await client.execute(request, context: context ?? self.context())
        }
    }

    static func register(_ client: AdobePassClient) async throws -> Device {
        let anonymous = Fixtures.context()
        let registered = await client.execute(.registerClient(softwareStatement: Fixtures.softwareStatement), context: anonymous)
        guard case .success(.registered(let credentials)) = registered else {
            Issue.record("registration failed: \(registered)")
            throw TestFailure()
        }
        let token = await client.execute(.obtainAccessToken(credentials), context: anonymous)
        guard case .success(.accessToken(let accessToken, let expiresIn)) = token else {
            Issue.record("token failed: \(token)")
            throw TestFailure()
        }
        #expect(expiresIn == .seconds(21_600))
        return Device(client: client, credentials: credentials, accessToken: accessToken)
    }

    struct TestFailure: Error {}

    /// `POST /_sim/approve`, standing in for the user on the second screen.
    static func approve(baseURL: String, code: String, userID: String? = nil) async throws -> Int {
        var body = ["code": code]
        body["userId"] = userID
        let json = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
        return try await SimulatorAdmin.call(baseURL, "/_sim/approve", json: json).status
    }

    static func expire(baseURL: String, code: String) async throws -> Int {
        let json = String(decoding: try JSONEncoder().encode(["code": code]), as: UTF8.self)
        return try await SimulatorAdmin.call(baseURL, "/_sim/expire", json: json).status
    }

    static func enhancedError(_ result: Result<BackendResponse, BackendFailure>, status expected: Int) -> EnhancedError? {
        guard case .failure(.http(let status, _, let error)) = result else {
            Issue.record("expected .http(\(expected)), got \(result)")
            return nil
        }
        #expect(status == expected)
        return error
    }

    @Test func secondScreenLoginFromRegistrationToProfile() async throws {
        var configuration = Fixtures.simulatorConfiguration()
        configuration.codeTTL = .seconds(600)
        let simulator = PassSimulator(configuration: configuration, logger: Fixtures.quietLogger)
        try await simulator.withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))

            let config = await device.execute(.configuration)
            guard case .success(.configuration(let mvpds)) = config else {
                Issue.record("configuration failed: \(config)")
                return
            }
            #expect(mvpds.map(\.id) == SimulatedMVPD.defaults.map(\.id))
            #expect(mvpds.first?.displayName == "Optimum")
            #expect(mvpds.allSatisfy { $0.logoURL?.isEmpty == false })

            let before = Fixtures.nowMs
            let session = await device.execute(.createSession(mvpd: "Cablevision"))
            guard case .success(.session(let issued)) = session else {
                Issue.record("createSession failed: \(session)")
                return
            }
            #expect(issued.code.count == 7)
            #expect(issued.mvpd == "Cablevision")
            #expect(issued.expiresEpochMs >= before + 600_000 - 1_000)
            #expect(issued.expiresEpochMs <= Fixtures.nowMs + 600_000 + 1_000)

            #expect(await device.execute(.pollProfile(code: issued.code)) == .success(.profile(nil)))

            #expect(try await Self.approve(baseURL: baseURL, code: issued.code, userID: "user-42") == 200)

            let polled = await device.execute(.pollProfile(code: issued.code))
            guard case .success(.profile(let profile?)) = polled else {
                Issue.record("poll after approval: \(polled)")
                return
            }
            #expect(profile.mvpd == "Cablevision")
            #expect(profile.userID == "user-42")
            let thirtyDays: Int64 = 30 * 24 * 3600 * 1000
            #expect(abs(profile.expiresEpochMs - (Fixtures.nowMs + thirtyDays)) < 60_000)
        }
    }

    @Test func sessionWithoutPreselectedMVPD() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            let session = await device.execute(.createSession(mvpd: nil))
            guard case .success(.session(let issued)) = session else {
                Issue.record("createSession failed: \(session)")
                return
            }
            #expect(issued.code.count == 7)
            #expect(issued.mvpd == nil)
            #expect(await device.execute(.pollProfile(code: issued.code)) == .success(.profile(nil)))
        }
    }

    @Test func badBearerTokenIsRejectedWithTheApplicationRegistrationCode() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            for request in [BackendRequest.configuration, .createSession(mvpd: nil), .pollProfile(code: "ABCDEFG")] {
                let result = await client.execute(request, context: Fixtures.context(accessToken: "not-a-token"))
                let error = Self.enhancedError(result, status: 401)
                #expect(error?.code == "invalid_access_token_client_application")
                #expect(error?.action == "application-registration")
                #expect(error?.status == 401)
            }
            let anonymous = await client.execute(.configuration, context: Fixtures.context(accessToken: nil))
            #expect(Self.enhancedError(anonymous, status: 401)?.code == "invalid_access_token_client_application")
        }
    }

    @Test func missingDeviceInfoIsATypedError() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            let missing = await device.execute(.createSession(mvpd: nil), device.context(deviceInfo: ""))
            #expect(Self.enhancedError(missing, status: 400)?.code == "invalid_header_device_info")
            let garbage = await device.execute(.createSession(mvpd: nil), device.context(deviceInfo: "%%%not base64%%%"))
            #expect(Self.enhancedError(garbage, status: 400)?.code == "invalid_header_device_info")
        }
    }

    @Test func missingDeviceIdentifierIsATypedError() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            let result = await device.execute(.createSession(mvpd: nil), device.context(deviceID: ""))
            let error = Self.enhancedError(result, status: 400)
            #expect(error?.code == "invalid_header_device_identifier")
            #expect(error?.trace?.isEmpty == false)
        }
    }

    @Test func unknownMVPDIsATypedError() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            let result = await device.execute(.createSession(mvpd: "NoSuchMVPD"))
            #expect(Self.enhancedError(result, status: 400)?.code == "invalid_parameter_mvpd")
        }
    }

    @Test func unknownCodeIsInvalidParameterCode() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            let result = await device.execute(.pollProfile(code: "ZZZZZZZ"))
            #expect(Self.enhancedError(result, status: 400)?.code == "invalid_parameter_code")
        }
    }

    @Test func expiredCodeIsInvalidAuthenticationSession() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            guard case .success(.session(let issued)) = await device.execute(.createSession(mvpd: "DTV")) else {
                Issue.record("createSession failed")
                return
            }
            #expect(try await Self.expire(baseURL: baseURL, code: issued.code) == 200)
            let result = await device.execute(.pollProfile(code: issued.code))
            #expect(Self.enhancedError(result, status: 400)?.code == "invalid_authentication_session")
        }
    }

    @Test func invalidSoftwareStatementAndClientAreDCRErrors() async throws {
        try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let registration = await client.execute(.registerClient(softwareStatement: "not-a-jwt"), context: Fixtures.context())
            #expect(registration == .failure(.http(status: 400, retryAfter: nil, error: EnhancedError(code: "invalid_software_statement"))))
            let token = await client.execute(
                .obtainAccessToken(ClientCredentials(clientID: "unknown", clientSecret: "wrong")),
                context: Fixtures.context()
            )
            #expect(token == .failure(.http(status: 400, retryAfter: nil, error: EnhancedError(code: "invalid_client"))))
        }
    }

    @Test func throttlingAnswers429WithoutAnErrorBody() async throws {
        let clock = ManualClock()
        var configuration = Fixtures.simulatorConfiguration()
        configuration.throttleEnabled = true
        configuration.throttleBurst = 10
        configuration.throttleRatePerSecond = 1
        // Keyed by device id here, so one device's bucket is seen apart from the DCR calls and other devices.
        configuration.throttleKey = .device
        configuration.clock = SimulatorClock(nowMillis: { clock.epochMillisecondsNow }, sleep: { clock.advance(by: $0) })
        try await PassSimulator(configuration: configuration, logger: Fixtures.quietLogger).withRunningServer { baseURL in
            // DCR calls carry no device identifier, so they draw from the peer-address bucket, not the device's.
            let device = try await Self.register(Fixtures.client(baseURL: baseURL))
            var statuses: [Int] = []
            for _ in 0..<12 {
                // `GET profiles` carries the device identifier (the OAS gives `configuration` none).
                switch await device.execute(.checkAuthentication) {
                case .success: statuses.append(200)
                case .failure(let failure): statuses.append(failure.httpStatus ?? -1)
                }
            }
            // The rate's request plus a burst of 10 (Adobe's scenario table, see `Throttle`).
            #expect(statuses == Array(repeating: 200, count: 11) + [429])
            #expect(await device.execute(.checkAuthentication) == .failure(.http(status: 429, retryAfter: nil, error: nil)))

            // Another device has its own bucket.
            let other = await device.execute(.checkAuthentication, device.context(deviceID: "another-device"))
            guard case .success = other else {
                Issue.record("other device throttled: \(other)")
                return
            }

            clock.advance(by: .seconds(1))
            guard case .success = await device.execute(.checkAuthentication) else {
                Issue.record("still throttled after the refill")
                return
            }
        }
    }

    @Test func closedPortIsATransportFailure() async throws {
        // The port is free again once the simulator has shut down.
        let baseURL = try await PassSimulator(configuration: Fixtures.simulatorConfiguration(), logger: Fixtures.quietLogger).withRunningServer { $0 }
        let client = AdobePassClient(
            configuration: AdobePassClientConfiguration(baseURL: baseURL, requestTimeout: .seconds(5)),
            logger: Fixtures.quietLogger
        )
        let result = await client.execute(.configuration, context: Fixtures.context(accessToken: "t"))
        guard case .failure(.transport(let description, _)) = result else {
            Issue.record("expected .transport, got \(result)")
            return
        }
        // The connection failure itself, not the client's overall deadline.
        #expect(!description.contains("timeout after"))
    }
}
