import Foundation
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import PassSimulator
import RegcodeTestSupport
import Synchronization
import Testing

/// A simulator on a manual clock, exercised through Hummingbird's in-process router client.
struct Harness {
    let clock: ManualClock
    let simulator: PassSimulator
    /// The clock the simulator runs on (a test may give it another than ``clock``).
    let simulatorClock: SimulatorClock

    /// - Parameter startMillis: the clock's starting time, in epoch milliseconds.
    init(logger: Logger? = nil, startMillis: Int64 = 1_750_000_000_000, _ configure: (inout SimulatorConfiguration) -> Void = { _ in }) {
        let clock = ManualClock(originEpochMs: startMillis)
        var configuration = SimulatorConfiguration()
        configuration.clock = .manual(clock)
        // Every in-process request comes from the same (unknown) address, so tests throttle per device unless they
        // test address keying.
        configuration.throttleKey = .device
        // Partner SAML answers come from the TV Provider's identity provider, which the backend trusts.
        configuration.samlTrust.defaultKeyPEM = Client.identityProvider.publicKeyPEM
        configuration.statementKey = Client.statementKey
        configure(&configuration)
        self.clock = clock
        self.simulatorClock = configuration.clock
        var quiet = Logger(label: "pass-sim-test")
        quiet.logLevel = .warning
        self.simulator = PassSimulator(configuration: configuration, logger: logger ?? quiet)
    }

    func run(_ test: @Sendable (Client) async throws -> Void) async throws {
        let app = self.simulator.makeApplication(host: "127.0.0.1", port: 0)
        try await app.test(.router) { client in
            try await test(Client(client: client, clock: self.simulatorClock))
        }
    }
}

extension SimulatorClock {
    /// The simulator's view of `clock`; an injected latency moves it forward instead of sleeping, so tests stay instant.
    static func manual(_ clock: ManualClock) -> SimulatorClock {
        SimulatorClock(nowMillis: { clock.epochMillisecondsNow }, sleep: { clock.advance(by: $0) })
    }
}

/// A decoded HTTP answer.
struct Reply: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let text: String

    /// The body as a JSON object (fails the test when it is not one).
    func json() throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(self.text.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(self.text)")
    }

    var contentType: String { self.headers[.contentType] ?? "" }
}

/// Credentials of a registered client with a fresh access token.
struct Credentials: Sendable {
    let clientId: String
    let clientSecret: String
    let accessToken: String
}

struct Client: Sendable {
    let client: any TestClientProtocol
    /// The simulator's clock, for what the test signs (SAML answers); nil: the wall clock.
    var clock: SimulatorClock? = nil

    var nowMillis: Int64 { clock?.nowMillis ?? Int64(Date().timeIntervalSince1970 * 1000) }

    static let deviceInfo = Data(
        #"{"primaryHardwareType":"SetTopBox","model":"AppleTV","manufacturer":"Apple","osName":"tvOS","osVendor":"Apple","osVersion":"17.2"}"#
            .utf8
    ).base64EncodedString()

    static func fingerprint(_ device: String) -> String {
        "fingerprint " + Data(device.utf8).base64EncodedString()
    }

    static func jwt(payload: String) -> String {
        func part(_ text: String) -> String {
            Data(text.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"RS256","typ":"JWT"}"#) + "." + part(payload) + "." + part("signature")
    }

    static let allSessionFields = "mvpd=Cablevision&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"

    /// The key the tests' simulators sign and check software statements with.
    static let statementKey = SoftwareStatementKey.ephemeral()

    /// A statement signed with ``statementKey``, for the `redirect_uri` ``register(statement:headers:)`` sends.
    static let softwareStatement =
        (try? statementKey.issue(softwareId: "4NRB1-0XZABZI9E6-5SM3R", redirectURIs: ["adobepass://com.example"], clientName: "Example"))
        ?? "unsigned"

    /// The same claims unsigned (`jwt(payload:)` signs nothing): what only `acceptUnsignedStatements` takes.
    static let unsignedStatement = jwt(payload: #"{"software_id":"4NRB1-0XZABZI9E6-5SM3R","client_name":"Example"}"#)

    /// A configuration whose statements are checked with ``statementKey``.
    static func configuration() -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration()
        configuration.statementKey = statementKey
        return configuration
    }

    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        headers: HTTPFields = [:],
        body: String? = nil
    ) async throws -> Reply {
        let response = try await self.client.execute(
            uri: uri,
            method: method,
            headers: headers,
            body: body.map { ByteBuffer(string: $0) }
        )
        return Reply(status: response.status, headers: response.headers, text: String(buffer: response.body))
    }

    func form(_ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = [:], fields: String = "") async throws -> Reply {
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await self.send(method, uri, headers: headers, body: fields)
    }

    func jsonPost(_ uri: String, _ body: String, headers: HTTPFields = [:]) async throws -> Reply {
        var headers = headers
        headers[.contentType] = "application/json"
        return try await self.send(.post, uri, headers: headers, body: body)
    }

    /// The `X-Device-Info` header DCR calls need.
    static let dcrHeaders: HTTPFields = [Client.name("X-Device-Info"): Client.deviceInfo]

    func register(statement: String = Client.softwareStatement, headers: HTTPFields = Client.dcrHeaders) async throws -> Reply {
        try await self.jsonPost(
            "/o/client/register",
            #"{"software_statement":"\#(statement)","redirect_uri":"adobepass://com.example"}"#,
            headers: headers
        )
    }

    /// `POST /o/client/token` as a form with `X-Device-Info`.
    func token(_ fields: String, headers: HTTPFields = Client.dcrHeaders) async throws -> Reply {
        try await self.form(.post, "/o/client/token", headers: headers, fields: fields)
    }

    /// Registers a client and obtains an access token, checking both succeed.
    func credentials() async throws -> Credentials {
        let registration = try await self.register().json()
        let clientId = try #require(registration["client_id"] as? String)
        let clientSecret = try #require(registration["client_secret"] as? String)
        let token = try await self.token("client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=client_credentials")
        #expect(token.status == .created)
        let accessToken = try #require(try token.json()["access_token"] as? String)
        return Credentials(clientId: clientId, clientSecret: clientSecret, accessToken: accessToken)
    }

    static func authorized(_ credentials: Credentials, device: String? = "device-1", deviceInfo: String? = Client.deviceInfo) -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Bearer \(credentials.accessToken)"]
        if let device { headers[Self.name("AP-Device-Identifier")] = self.fingerprint(device) }
        if let deviceInfo { headers[Self.name("X-Device-Info")] = deviceInfo }
        return headers
    }

    static func name(_ text: String) -> HTTPFields.Element.Name {
        HTTPFields.Element.Name(text)!
    }

    func createSession(
        _ credentials: Credentials,
        sp: String = "REF30",
        device: String = "device-1",
        fields: String = Client.allSessionFields
    ) async throws -> Reply {
        try await self.form(.post, "/api/v2/\(sp)/sessions", headers: Self.authorized(credentials, device: device), fields: fields)
    }

    /// Creates a session and returns its code, checking the request succeeded.
    func newCode(
        _ credentials: Credentials,
        sp: String = "REF30",
        device: String = "device-1",
        fields: String = Client.allSessionFields
    ) async throws -> String {
        let reply = try await self.createSession(credentials, sp: sp, device: device, fields: fields)
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(try reply.json()["code"] as? String)
    }

    func poll(_ credentials: Credentials, code: String, sp: String = "REF30") async throws -> Reply {
        try await self.send(.get, "/api/v2/\(sp)/profiles/code/\(code)", headers: Self.authorized(credentials, deviceInfo: nil))
    }

    func approve(_ body: String) async throws -> Reply {
        try await self.jsonPost("/_sim/approve", body)
    }
}

/// Checks a REST v2 enhanced error body and HTTP status.
func expectEnhancedError(
    _ reply: Reply,
    status: HTTPResponse.Status,
    code: String,
    action: String = "none",
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(reply.status == status, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(reply.contentType.hasPrefix("application/json"), sourceLocation: sourceLocation)
    let body = try reply.json()
    #expect(body["code"] as? String == code, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(body["action"] as? String == action, sourceLocation: sourceLocation)
    #expect(body["status"] as? Int == Int(status.code), sourceLocation: sourceLocation)
    #expect((body["message"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    #expect((body["helpUrl"] as? String)?.hasPrefix("https://") == true, sourceLocation: sourceLocation)
    #expect((body["trace"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
}

/// Checks a DCR error: HTTP 400 with `{"error": code}`.
func expectDCRError(_ reply: Reply, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(reply.status == .badRequest, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(try reply.json()["error"] as? String == code, "body: \(reply.text)", sourceLocation: sourceLocation)
}

/// Keeps every log line the simulator writes, with its metadata (swift-log's in-memory handler), to
/// check what reaches the logs.
final class LogCapture: Sendable {
    private let handler = InMemoryLogHandler()

    var logger: Logger {
        let handler = self.handler
        var logger = Logger(label: "capture") { _ in handler }
        logger.logLevel = .trace
        return logger
    }

    var all: [String] { handler.entries.map { "\($0.level) \($0.message) \($0.metadata)" } }
}

extension HTTPFields {
    /// These fields with `other`'s values added, replacing same-named ones.
    func merging(_ other: HTTPFields) -> HTTPFields {
        var merged = self
        for field in other { merged[field.name] = field.value }
        return merged
    }
}
