import Foundation
import Hummingbird
import HummingbirdTesting
import PassSimulator
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// An independent HMAC-SHA1 implementation (FIPS 180-4, RFC 2104) for signing test requests, so the simulator's
/// verifier is checked against code it does not share.
enum TestSigner {
    static func sha1(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var data = message
        let bitLength = UInt64(message.count) * 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        for chunk in stride(from: 0, to: data.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for i in 0..<16 {
                let b = data[(chunk + i * 4)..<(chunk + i * 4 + 4)].map(UInt32.init)
                w[i] = b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
            }
            h[0] &+= a
            h[1] &+= b
            h[2] &+= c
            h[3] &+= d
            h[4] &+= e
        }
        return h.flatMap { value in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) } }
    }

    static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? self.sha1(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = self.sha1(block.map { $0 ^ 0x36 } + message)
        return self.sha1(block.map { $0 ^ 0x5C } + inner)
    }

    /// The reference §3.1 header.
    static func header(
        method: String = "GET",
        requestor: String = "REF30",
        requestURI: String = "/api/v1/tokens/authn",
        requestTime: Int64,
        publicKey: String = "samplePublicKey",
        secret: String = "sampleSecretKey",
        nonce: String = "6b2a2e06-6a4b-4a7e-9d6a-0f6f2b1f3c11"
    ) -> String {
        let input =
            "\(method) requestor_id=\(requestor), nonce=\(nonce), signature_method=HMAC-SHA1, request_time=\(requestTime), request_uri=\(requestURI)"
        let signature = Data(self.hmacSHA1(key: Array(secret.utf8), message: Array(input.utf8))).base64EncodedString()
        return "\(input), public_key=\(publicKey), signature=\(signature)"
    }
}

/// Leaf elements of an XML document, read with a real XML parser (so the document must be well-formed).
struct XMLLeaves {
    /// The root element's name.
    let root: String
    /// Text of every leaf element, by name, in document order.
    let values: [String: [String]]

    init(_ text: String) throws {
        let delegate = Delegate()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = delegate
        #expect(parser.parse(), "not well-formed XML: \(text)")
        self.root = try #require(delegate.root)
        self.values = delegate.values
    }

    subscript(_ name: String) -> String? { self.values[name]?.first }

    private final class Delegate: NSObject, XMLParserDelegate {
        var root: String?
        var values: [String: [String]] = [:]
        private var stack: [(name: String, text: String, hasChildren: Bool)] = []

        func parser(
            _ parser: XMLParser,
            didStartElement name: String,
            namespaceURI: String?,
            qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if self.root == nil { self.root = qualifiedName ?? name }
            if !self.stack.isEmpty { self.stack[self.stack.count - 1].hasChildren = true }
            self.stack.append((name, "", false))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if !self.stack.isEmpty { self.stack[self.stack.count - 1].text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            let element = self.stack.removeLast()
            if !element.hasChildren { self.values[element.name, default: []].append(element.text) }
        }
    }
}

extension Harness {
    /// Like ``run(_:)`` but over a real TCP connection, for behaviour only a socket shows (dropped connections).
    func runLive(_ test: @Sendable (Client) async throws -> Void) async throws {
        let app = self.simulator.makeApplication(host: "127.0.0.1", port: 0)
        try await app.test(.live) { client in
            try await test(Client(client: client))
        }
    }
}

extension Client {
    static let json: HTTPFields = [.accept: "application/json"]

    static func bearer(_ credentials: Credentials, json: Bool = true) -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Bearer \(credentials.accessToken)"]
        if json { headers[.accept] = "application/json" }
        return headers
    }

    /// `POST /reggie/v1/{requestor}/regcode` as a form, in JSON.
    func regcode(
        _ headers: HTTPFields,
        requestor: String = "REF30",
        fields: String = "deviceId=dGVzdC1kZXZpY2U"
    ) async throws -> Reply {
        try await self.form(.post, "/reggie/v1/\(requestor)/regcode", headers: headers, fields: fields)
    }

    /// Issues a v1 code for `deviceId` and returns it, checking the answer is 201.
    func newRegcode(_ headers: HTTPFields, deviceId: String = "dGVzdC1kZXZpY2U", extra: String = "") async throws -> String {
        var headers = headers
        headers[.accept] = "application/json"
        let reply = try await self.regcode(headers, fields: "deviceId=\(deviceId)" + extra)
        #expect(reply.status == .created, "\(reply.text)")
        return try #require(try reply.json()["code"] as? String)
    }

    /// A v1 device GET with `requestor=REF30&deviceId=…` plus `query`.
    func v1(
        _ method: HTTPRequest.Method = .get,
        _ path: String,
        _ headers: HTTPFields,
        deviceId: String = "dGVzdC1kZXZpY2U",
        query: String = ""
    ) async throws -> Reply {
        let separator = path.contains("?") ? "&" : "?"
        return try await self.send(method, "\(path)\(separator)requestor=REF30&deviceId=\(deviceId)\(query)", headers: headers)
    }
}

/// Checks a v1 classic error body (JSON): status, message and optionally details.
func expectClassicError(
    _ reply: Reply,
    status: HTTPResponse.Status,
    message: String,
    details: String?? = .none,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(reply.status == status, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(reply.contentType.hasPrefix("application/json"), "type \(reply.contentType)", sourceLocation: sourceLocation)
    let body = try reply.json()
    #expect(body["status"] as? Int == Int(status.code), sourceLocation: sourceLocation)
    #expect(body["message"] as? String == message, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(body.keys.contains("details"), sourceLocation: sourceLocation)
    if case .some(let expected) = details {
        #expect(body["details"] as? String == expected, "body: \(reply.text)", sourceLocation: sourceLocation)
    }
}
