import AdobePassClient
import Foundation
import Hummingbird
import RegcodeEngine
import Testing

/// Every REST v2 and DCR request the client builds, checked against Adobe's OpenAPI files (`OpenAPI/`, Apache-2.0,
/// `AdobeDocs/adobe-pass` at `3dd8ab2`): the path and method are an operation of the OAS, every header, query and
/// form (or JSON body) parameter sent is one the OAS lists for that operation, and the required ones are present.
/// The requests go over the real transport to a capture server, with every optional input set (access token,
/// visitor id, partner framework status, platform identity and service tokens), so nothing the client adds escapes.
@Suite("AdobePassClient requests conform to Adobe's OpenAPI files")
struct OpenAPIConformanceTests {
    /// One operation of an OAS file.
    struct Operation {
        var method: String
        /// The full path template, server path included (`/api/v2/{serviceProvider}/sessions`).
        var template: String
        var headers: [String: Bool]
        var query: [String: Bool]
        /// Form or JSON body properties, and the media types the body may have.
        var body: [String: Bool]
        var bodyTypes: [String]

        func matches(method: String, path: String) -> Bool {
            guard method == self.method else { return false }
            let templateParts = template.split(separator: "/", omittingEmptySubsequences: false)
            let pathParts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard templateParts.count == pathParts.count else { return false }
            return zip(templateParts, pathParts).allSatisfy { template, actual in
                (template.hasPrefix("{") && template.hasSuffix("}") && !actual.isEmpty) || template == actual
            }
        }
    }

    /// Headers of HTTP/1.1 framing, which the transport adds and no OAS lists as a parameter.
    static let framingHeaders: Set<String> = ["host", "content-length", "connection", "transfer-encoding"]

    /// `dcrApi.json` lists no header for `POST /client/token`; Adobe's API page for it ("Retrieve access token",
    /// `rest-api-dcr/apis/dynamic-client-registration-apis-retrieve-access-token.md`) lists these.
    static let documentedHeaders: [String: [String: Bool]] = [
        "POST /o/client/token": ["content-type": true, "x-device-info": true, "accept": false, "user-agent": false]
    ]

    static func operations(file: String, serverPath: String) throws -> [Operation] {
        let url = try #require(Bundle.module.url(forResource: file, withExtension: "json", subdirectory: "OpenAPI"))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let schemas = (root["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        var operations: [Operation] = []
        for (path, methods) in try #require(root["paths"] as? [String: [String: Any]]) {
            for (method, value) in methods {
                guard let operation = value as? [String: Any] else { continue }
                var headers: [String: Bool] = [:]
                var query: [String: Bool] = [:]
                for parameter in operation["parameters"] as? [[String: Any]] ?? [] {
                    guard let name = parameter["name"] as? String else { continue }
                    let required = parameter["required"] as? Bool ?? false
                    switch parameter["in"] as? String {
                    case "header": headers[name.lowercased()] = required
                    case "query": query[name] = required
                    default: break
                    }
                }
                var body: [String: Bool] = [:]
                var bodyTypes: [String] = []
                if let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any] {
                    for (type, media) in content {
                        bodyTypes.append(type)
                        var schema = (media as? [String: Any])?["schema"] as? [String: Any] ?? [:]
                        if let reference = schema["$ref"] as? String {
                            schema = schemas[String(reference.split(separator: "/").last ?? "")] as? [String: Any] ?? [:]
                        }
                        let required = Set(schema["required"] as? [String] ?? [])
                        for name in (schema["properties"] as? [String: Any] ?? [:]).keys { body[name] = required.contains(name) }
                    }
                }
                operations.append(
                    Operation(
                        method: method.uppercased(),
                        template: serverPath + path,
                        headers: headers,
                        query: query,
                        body: body,
                        bodyTypes: bodyTypes
                    )
                )
            }
        }
        return operations
    }

    /// What the capture server answers: identity tokens for the emulated identity services, `{}` to the rest.
    static func answer(_ request: CapturedRequest) -> Response {
        guard request.path.hasPrefix("/_sim/identity/") else { return CaptureServer.json(.ok, "{}") }
        func part(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
        }
        let token = part(#"{"alg":"HS256"}"#) + "." + part(#"{"sub":"alice","exp":4102444800}"#) + ".c2ln"
        return CaptureServer.json(.ok, #"{"token":"\#(token)"}"#)
    }

    /// Every v2 and DCR request the engine can ask for.
    static let requests: [BackendRequest] = [
        .registerClient(softwareStatement: Fixtures.softwareStatement),
        .obtainAccessToken(ClientCredentials(clientID: "cid", clientSecret: "secret")),
        .configuration,
        .createSession(mvpd: "Cablevision"),
        .createSession(mvpd: nil),
        .pollProfile(code: "8ER640M", mvpd: "Cablevision"),
        .checkAuthentication,
        .launchProfiles(mvpd: nil),
        .launchProfiles(mvpd: "Cablevision"),
        .fetchProfile(mvpd: "Cablevision"),
        .authorize(mvpd: "Cablevision", resource: "Live"),
        .mediaToken(mvpd: "Cablevision", resource: "Live"),
        .preauthorize(mvpd: "Cablevision", resources: ["Live", "VOD"]),
        .userMetadata(mvpd: "Cablevision"),
        .logout(mvpd: "Cablevision"),
        .partnerSession(mvpd: "Comcast_SSO"),
        .partnerProfile(samlResponse: "PHNhbWxwOlJlc3BvbnNlLz4=", mvpd: "Comcast_SSO"),
    ]

    /// The device headers the REST v2 checklist (section 7, marked mandatory) puts on every call, where the OAS lists
    /// them on some: allowed everywhere under the `every-call` policy, never required by it.
    static let checklistHeaders = ["ap-device-identifier", "x-device-info"]

    /// Under both device-header policies, with the charset a native app names.
    @Test(arguments: DeviceHeaderPolicy.allCases)
    func everyRequestIsAnOperationOfTheOAS(policy: DeviceHeaderPolicy) async throws {
        let operations = try Self.operations(file: "restApiV2", serverPath: "/api/v2") + Self.operations(file: "dcrApi", serverPath: "/o")
        let server = CaptureServer { Self.answer($0) }
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            var context = Fixtures.context(accessToken: "at", visitorID: "ecid-1")
            context.partnerFrameworkStatus =
                PartnerFrameworkStatus(
                    accessStatus: .granted,
                    providerID: "Comcast",
                    expirationDateMs: 4_102_444_800_000
                ).headerValue
            context.ssoIdentity = SSOIdentitySettings(platformUser: "alice", serviceUser: "alice")
            context.deviceHeaders = policy
            context.jsonCharset = policy == .everyCall
            for request in Self.requests { _ = await client.execute(request, context: context) }
        }
        // The identity tokens come from the emulated identity services, not from Adobe's API.
        let sent = server.requests.filter { !$0.path.hasPrefix("/_sim/") }
        #expect(sent.count == Self.requests.count)
        for request in sent {
            let label = "\(request.method) \(request.target)"
            guard let operation = operations.first(where: { $0.matches(method: request.method, path: request.path) }) else {
                Issue.record("\(label): no operation of the OAS")
                continue
            }
            let key = "\(operation.method) \(operation.template)"
            var allowedHeaders = operation.headers
            if let documented = Self.documentedHeaders[key], operation.headers.isEmpty { allowedHeaders = documented }
            if policy == .everyCall, request.path.hasPrefix("/api/v2/") {
                for name in Self.checklistHeaders where allowedHeaders[name] == nil { allowedHeaders[name] = false }
                #expect(!request.values("AP-Device-Identifier").isEmpty && !request.values("X-Device-Info").isEmpty, "\(label): device headers")
                #expect(request.header("Accept") == "application/json;charset=utf-8", "\(label): Accept")
            }
            let contentType = request.header("Content-Type").map { String($0.prefix { $0 != ";" }) }
            if allowedHeaders["content-type"] == nil, !operation.bodyTypes.isEmpty { allowedHeaders["content-type"] = true }
            for (name, _) in request.headers where !Self.framingHeaders.contains(name.lowercased()) {
                #expect(allowedHeaders[name.lowercased()] != nil, "\(label): header \(name) is not in the OAS for \(key)")
            }
            for (name, required) in allowedHeaders where required {
                #expect(!request.values(name).isEmpty, "\(label): required header \(name) missing")
            }
            if let contentType, !operation.bodyTypes.isEmpty {
                #expect(operation.bodyTypes.contains(contentType), "\(label): Content-Type \(contentType) not in \(operation.bodyTypes)")
            }

            // Query and body parameters. An operation with query parameters and no request body takes them as a
            // form body too (`POST /client/token`: Spring's request parameters).
            let query = Self.fields(request.query ?? "")
            var bodyFields: [String] = []
            if contentType == "application/x-www-form-urlencoded" {
                bodyFields = Self.fields(request.body)
            } else if contentType?.hasPrefix("application/json") == true {
                let json = try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any]
                bodyFields = Array((json ?? [:]).keys)
            }
            let bodyAllowed = operation.bodyTypes.isEmpty ? operation.query : operation.body
            for name in query {
                #expect(operation.query[name] != nil, "\(label): query parameter \(name) is not in the OAS")
            }
            for name in bodyFields {
                #expect(bodyAllowed[name] != nil, "\(label): body parameter \(name) is not in the OAS")
            }
            let sentNames = Set(query + bodyFields)
            for (name, required) in operation.query.merging(operation.body, uniquingKeysWith: { $0 || $1 }) where required {
                #expect(sentNames.contains(name), "\(label): required parameter \(name) missing")
            }
        }
    }

    /// The partner calls carry no `mvpd`: Adobe takes it from the partner framework status.
    @Test func partnerCallsSendNoMVPD() async throws {
        let server = CaptureServer { Self.answer($0) }
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let context = Fixtures.context(accessToken: "at")
            _ = await client.execute(.partnerSession(mvpd: "Comcast_SSO"), context: context)
            _ = await client.execute(.partnerProfile(samlResponse: "PHNhbWwv Pg==", mvpd: "Comcast_SSO"), context: context)
        }
        let bodies = server.requests.map(\.body)
        #expect(bodies == ["domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com", "SAMLResponse=PHNhbWwvPg%3D%3D"])
    }

    /// The names of an `a=b&c=d` text.
    static func fields(_ text: String) -> [String] {
        text.split(separator: "&").compactMap { pair in
            pair.split(separator: "=", maxSplits: 1).first.flatMap { String($0).removingPercentEncoding }
        }
    }
}
