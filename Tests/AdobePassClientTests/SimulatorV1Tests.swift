import AdobePassClient
import Foundation
import PassSimulator
import RegcodeEngine
import Testing

/// The legacy v1 profile against the real simulator: reggie regcode, `tokens/authn` polling, `config`.
@Suite("AdobePassClient v1 against PassSimulator")
struct SimulatorV1Tests {
    static let keys = SigningKeys(publicKey: "testPublicKey", secret: "testSecretKey")

    static func simulator() -> PassSimulator {
        var configuration = Fixtures.simulatorConfiguration()
        configuration.signingKeys = [keys.publicKey: keys.secret]
        return PassSimulator(configuration: configuration, logger: Fixtures.quietLogger)
    }

    static func client(_ baseURL: String) -> AdobePassClient {
        AdobePassClient(
            configuration: AdobePassClientConfiguration(baseURL: baseURL, registrationCodeTTL: .seconds(900)),
            logger: Fixtures.quietLogger
        )
    }

    /// Regcode → pending → second-screen approval → AuthN token, for one way of authenticating the device.
    static func regcodeFlow(baseURL: String, context: RegcodeEngine.RequestContext) async throws {
        let client = Self.client(baseURL)

        let config = await client.execute(.configuration, context: context)
        guard case .success(.configuration(let mvpds)) = config else {
            Issue.record("configuration failed: \(config)")
            return
        }
        #expect(mvpds.map(\.id) == SimulatedMVPD.defaults.map(\.id))

        let before = Fixtures.nowMs
        let created = await client.execute(.createSession(mvpd: "DTV"), context: context)
        guard case .success(.session(let issued)) = created else {
            Issue.record("regcode failed: \(created)")
            return
        }
        #expect(issued.code.count == 7)
        #expect(issued.mvpd == "DTV")
        #expect(issued.expiresEpochMs >= before + 900_000 - 1_000)
        #expect(issued.expiresEpochMs <= Fixtures.nowMs + 900_000 + 1_000)

        #expect(await client.execute(.pollProfile(code: issued.code), context: context) == .success(.profile(nil)))
        #expect(try await SimulatorFlowTests.approve(baseURL: baseURL, code: issued.code, userID: "v1-user") == 200)

        let polled = await client.execute(.pollProfile(code: issued.code), context: context)
        guard case .success(.profile(let profile?)) = polled else {
            Issue.record("poll after approval: \(polled)")
            return
        }
        #expect(profile.mvpd == "DTV")
        #expect(profile.userID == "v1-user")
        #expect(profile.expiresEpochMs > Fixtures.nowMs)
    }

    @Test func signedHeaderFlow() async throws {
        try await Self.simulator().withRunningServer { baseURL in
            try await Self.regcodeFlow(baseURL: baseURL, context: Fixtures.context(profile: .v1, signingKeys: Self.keys))
        }
    }

    @Test func bearerTokenFlow() async throws {
        try await Self.simulator().withRunningServer { baseURL in
            let device = try await SimulatorFlowTests.register(Self.client(baseURL))
            try await Self.regcodeFlow(baseURL: baseURL, context: Fixtures.context(profile: .v1, accessToken: device.accessToken))
        }
    }

    @Test func wrongSecretIsRefused() async throws {
        try await Self.simulator().withRunningServer { baseURL in
            let context = Fixtures.context(profile: .v1, signingKeys: SigningKeys(publicKey: Self.keys.publicKey, secret: "wrong"))
            let result = await Self.client(baseURL).execute(.createSession(mvpd: nil), context: context)
            guard case .failure(.http(401, _, _)) = result else {
                Issue.record("expected .http(401), got \(result)")
                return
            }
        }
    }

    @Test func unauthenticatedDeviceIsRefused() async throws {
        try await Self.simulator().withRunningServer { baseURL in
            let result = await Self.client(baseURL).execute(.pollProfile(code: "ABCDEFG"), context: Fixtures.context(profile: .v1))
            guard case .failure(.http(401, _, _)) = result else {
                Issue.record("expected .http(401), got \(result)")
                return
            }
        }
    }
}
