import AdobePassClient
import Foundation
import Hummingbird
import Logging
import PassSimulator
import RegcodeEngine
import Synchronization

enum Fixtures {
    static let requestor = "REF30"
    static let deviceID = "ba23d141-d715-561c-94f4-e9e4c966b1eb"

    /// Base64 of a tvOS device-info document (§2.3 keys).
    static let deviceInfo = Data(
        #"{"primaryHardwareType":"SetTopBox","model":"AppleTV11,1","manufacturer":"Apple","vendor":"Apple","osName":"tvOS","osVersion":"17.0"}"#
            .utf8
    ).base64EncodedString()

    /// The key the tests' simulators sign and check software statements with.
    static let statementKey = SoftwareStatementKey.ephemeral()

    /// A statement the tests' simulators accept, for the `redirect_uri` the client sends by default.
    static let softwareStatement: String =
        (try? statementKey.issue(softwareId: "4NRB1-0XZABZI9E6-5SM3R", redirectURIs: [ClientIdentity().clientRedirectURI])) ?? "unsigned"

    /// A simulator configuration that checks statements with ``statementKey``.
    static func simulatorConfiguration() -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration()
        configuration.statementKey = statementKey
        return configuration
    }

    static func context(
        profile: APIProfile = .v2,
        requestor: String = requestor,
        deviceID: String = deviceID,
        deviceInfo: String = deviceInfo,
        accessToken: String? = nil,
        visitorID: String? = nil,
        signingKeys: SigningKeys? = nil
    ) -> RegcodeEngine.RequestContext {
        RequestContext(
            profile: profile,
            requestor: requestor,
            deviceID: deviceID,
            deviceInfo: deviceInfo,
            accessToken: accessToken,
            visitorID: visitorID,
            signingKeys: signingKeys
        )
    }

    static func client(
        baseURL: String,
        requestTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "AdobePassClientTests")
    ) -> AdobePassClient {
        AdobePassClient(
            configuration: AdobePassClientConfiguration(baseURL: baseURL, requestTimeout: requestTimeout),
            logger: logger
        )
    }

    /// Keeps the simulator's own request and shutdown logs out of the test output.
    static var quietLogger: Logger {
        var logger = Logger(label: "AdobePassClientTests.quiet")
        logger.logLevel = .critical
        return logger
    }

    static var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// One request as a loopback test server saw it.
struct CapturedRequest: Sendable {
    var method: String
    /// The raw request target (path and query, still percent-encoded).
    var target: String
    var headers: [(name: String, value: String)]
    var body: String

    var path: String { String(target.prefix { $0 != "?" }) }
    var query: String? { target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } }

    /// All values of `name`, case-insensitively.
    func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    func header(_ name: String) -> String? { values(name).first }
}

/// A scripted HTTP server on 127.0.0.1 that records every request and answers with `respond`.
final class CaptureServer: Sendable {
    private let recorded = Mutex<[CapturedRequest]>([])
    private let respond: @Sendable (CapturedRequest) async throws -> Response

    init(respond: @escaping @Sendable (CapturedRequest) async throws -> Response) {
        self.respond = respond
    }

    var requests: [CapturedRequest] { recorded.withLock { $0 } }

    func run<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let responder = CallbackResponder<BasicRequestContext> { [self] request, _ in
            var request = request
            let buffer = try await request.collectBody(upTo: 1 << 20)
            let captured = CapturedRequest(
                method: request.method.rawValue,
                target: request.uri.description,
                headers: request.headers.map { ($0.name.rawName, $0.value) },
                body: String(buffer: buffer)
            )
            self.recorded.withLock { $0.append(captured) }
            return try await self.respond(captured)
        }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "capture-server")
        logger.logLevel = .critical
        let application = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: logger
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { portSink.finish() }
                try await application.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.next()
                throw CaptureServerError.didNotStart
            }
            defer { group.cancelAll() }
            return try await body("http://127.0.0.1:\(port)")
        }
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json;charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}

enum CaptureServerError: Error {
    case didNotStart
}
