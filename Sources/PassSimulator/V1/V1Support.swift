import Crypto
import Hummingbird
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The body format of a REST API v1 answer (reference §2.1).
enum V1Format: Sendable, Equatable {
    case json
    case xml

    /// The format asked for by the path suffix (`.json`/`.xml`), the `format` parameter or `Accept`. XML is the
    /// default; JSON wins when the three disagree.
    init(_ request: Request, fields: [String: String]? = nil) {
        let fields = fields ?? request.uri.query.map { FormData.parse($0) } ?? [:]
        var votes: Set<V1Format> = []
        let path = request.uri.path
        if path.hasSuffix(".json") { votes.insert(.json) }
        if path.hasSuffix(".xml") { votes.insert(.xml) }
        switch fields["format"]?.lowercased() {
        case "json": votes.insert(.json)
        case "xml": votes.insert(.xml)
        default: break
        }
        if let accept = request.headers[.accept]?.lowercased() {
            if accept.contains("json") { votes.insert(.json) }
            if accept.contains("xml") { votes.insert(.xml) }
        }
        self = votes.contains(.json) ? .json : .xml
    }

    var contentType: String {
        switch self {
        case .json: "application/json;charset=utf-8"
        case .xml: "application/xml;charset=utf-8"
        }
    }
}

/// A v1 answer body that renders as JSON or XML with the same field order.
indirect enum V1Value: Sendable {
    /// Ordered fields; in XML, one element per field (`null` fields are left out).
    case object([(String, V1Value)])
    /// A JSON array; in XML, one `<item>` element per entry.
    case list(item: String, [V1Value])
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case null

    init(_ metadata: MetadataValue) {
        switch metadata {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .integer(value)
        case .number(let value): self = .string(String(value))
        case .string(let value): self = .string(value)
        case .list(let values): self = .list(item: "value", values.map(V1Value.init))
        case .object(let fields): self = .object(fields.sorted { $0.key < $1.key }.map { ($0.key, V1Value($0.value)) })
        }
    }

    func json() -> String {
        var json = JSONWriter()
        self.write(to: &json)
        return json.text
    }

    /// Written with the shared writer, fields in their order.
    private func write(to json: inout JSONWriter) {
        switch self {
        case .object(let fields):
            json.object { json in
                for (key, value) in fields {
                    json.key(key)
                    value.write(to: &json)
                }
            }
        case .list(_, let values):
            json.array { json in
                for value in values { value.write(to: &json) }
            }
        case .string(let text): json.string(text)
        case .integer(let value): json.int(value)
        case .bool(let value): json.bool(value)
        case .null: json.null()
        }
    }

    /// The value as an XML document whose root element is `root` (with optional namespace attributes).
    func xml(root: String, attributes: String = "") -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#
        out += "<\(root)\(attributes.isEmpty ? "" : " " + attributes)>"
        self.writeXMLContent(into: &out)
        out += "</\(root)>"
        return out
    }

    private func writeXMLContent(into out: inout String) {
        switch self {
        case .object(let fields):
            for (name, value) in fields {
                if case .null = value { continue }
                out += "<\(name)>"
                value.writeXMLContent(into: &out)
                out += "</\(name)>"
            }
        case .list(let item, let values):
            for value in values {
                out += "<\(item)>"
                value.writeXMLContent(into: &out)
                out += "</\(item)>"
            }
        case .string(let text): out += HTML.escape(text)
        case .integer(let value): out += String(value)
        case .bool(let value): out += value ? "true" : "false"
        case .null: break
        }
    }

    /// The HTTP answer carrying this value in `format`.
    func response(
        _ status: HTTPResponse.Status,
        format: V1Format,
        root: String,
        xmlAttributes: String = ""
    ) -> Response {
        let text = format == .json ? self.json() : self.xml(root: root, attributes: xmlAttributes)
        return Response(
            status: status,
            headers: [.contentType: format.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}

/// A REST API v1 classic error (reference §2.2): `{"status": 404, "message": "Not Found", "details": null}` or
/// `<error><status>404</status><message>Not Found</message></error>`, in the request's format.
struct V1Error: Error, HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    let message: String
    let details: String?
    /// The format decided by the handler (it may come from a form body); `nil` re-negotiates from the request.
    var format: V1Format?

    init(_ status: HTTPResponse.Status, _ message: String, details: String? = nil, format: V1Format? = nil) {
        self.status = status
        self.message = message
        self.details = details
        self.format = format
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = V1Value.object([
            ("status", .integer(Int64(self.status.code))),
            ("message", .string(self.message)),
            ("details", self.details.map(V1Value.string) ?? .null),
        ])
        return body.response(self.status, format: self.format ?? V1Format(request), root: "error")
    }

    func with(_ format: V1Format) -> V1Error {
        var copy = self
        copy.format = format
        return copy
    }

    static func missing(_ parameter: String) -> V1Error {
        V1Error(.badRequest, "Required '\(parameter)' is not present")
    }

    static func badRequest(_ details: String) -> V1Error {
        V1Error(.badRequest, "Bad Request", details: details)
    }

    static func notAuthorized(_ why: String) -> V1Error {
        V1Error(.unauthorized, "Not Authorized", details: why)
    }

    static let notFound = V1Error(.notFound, "Not Found")
}

/// The legacy signed `Authorization` header of reference §3.1:
/// `<METHOD> requestor_id=…, nonce=…, signature_method=HMAC-SHA1, request_time=<ms>, request_uri=…, public_key=…, signature=…`.
struct SignedAuthorization: Sendable, Equatable {
    let method: String
    let requestorId: String
    let nonce: String
    let signatureMethod: String
    let requestTime: String
    let requestURI: String
    let publicKey: String
    let signature: String
    /// The exact text the signature covers: everything before `, public_key=`.
    let signingInput: String

    private static let signedFields: Set<String> = ["requestor_id", "nonce", "signature_method", "request_time", "request_uri"]

    /// Parses the header; `nil` when it does not have the §3.1 shape.
    init?(header: String) {
        guard let publicKeyMarker = header.range(of: ", public_key=") else { return nil }
        let signingInput = String(header[..<publicKeyMarker.lowerBound])
        let tail = header[publicKeyMarker.upperBound...]
        guard let signatureMarker = tail.range(of: ", signature=") else { return nil }
        let publicKey = String(tail[..<signatureMarker.lowerBound])
        let signature = String(tail[signatureMarker.upperBound...]).trimmed
        guard let space = signingInput.firstIndex(of: " ") else { return nil }
        let method = String(signingInput[..<space])
        var fields: [String: String] = [:]
        var lastKey: String?
        for piece in signingInput[signingInput.index(after: space)...].components(separatedBy: ", ") {
            if let equals = piece.firstIndex(of: "="), Self.signedFields.contains(String(piece[..<equals])) {
                let key = String(piece[..<equals])
                guard fields[key] == nil else { return nil }
                fields[key] = String(piece[piece.index(after: equals)...])
                lastKey = key
            } else if let key = lastKey {
                // A value containing ", " (a full URL with a query, say) was split; glue it back together.
                fields[key]! += ", " + piece
            } else {
                return nil
            }
        }
        guard !method.isEmpty, method.allSatisfy({ $0.isLetter }),
            let requestorId = fields["requestor_id"], let nonce = fields["nonce"],
            let signatureMethod = fields["signature_method"], let requestTime = fields["request_time"],
            let requestURI = fields["request_uri"], !publicKey.isEmpty, !signature.isEmpty
        else { return nil }
        self.method = method
        self.requestorId = requestorId
        self.nonce = nonce
        self.signatureMethod = signatureMethod
        self.requestTime = requestTime
        self.requestURI = requestURI
        self.publicKey = publicKey
        self.signature = signature
        self.signingInput = signingInput
    }

    /// Why a signed header is refused; the text is the `details` of the 401 answer.
    enum Refusal: String, Error, Sendable {
        case malformed = "malformed Authorization header"
        case unsupportedMethod = "unsupported signature_method"
        case unknownPublicKey = "unknown public key"
        case badSignature = "bad signature"
        case requestorMismatch = "requestor mismatch"
        case notMilliseconds = "request_time not in milliseconds"
        case stale = "stale request_time"
    }

    /// Checks the header as Adobe's gateway is believed to (reference §3.1): signature method, known public key, HMAC
    /// over the exact prefix, requestor, and a fresh millisecond `request_time`. Method and URI are not bound.
    func verify(requestor: String, keys: [String: String], nowMillis: Int64, window: Duration) -> Refusal? {
        guard self.signatureMethod == "HMAC-SHA1" else { return .unsupportedMethod }
        guard let secret = keys[self.publicKey] else { return .unknownPublicKey }
        guard let signature = Data(base64Encoded: self.signature),
            HMAC<Insecure.SHA1>.isValidAuthenticationCode(
                signature,
                authenticating: Data(self.signingInput.utf8),
                using: SymmetricKey(data: Data(secret.utf8))
            )
        else { return .badSignature }
        guard self.requestorId == requestor else { return .requestorMismatch }
        guard let time = Int64(self.requestTime) else { return .notMilliseconds }
        // Epoch seconds are below 10^11 until the year 5138; epoch milliseconds passed 10^11 in 1973.
        guard time >= 100_000_000_000 else { return .notMilliseconds }
        guard abs(nowMillis - time) <= window.milliseconds else { return .stale }
        return nil
    }

    /// Whether the signed method and URI describe the request actually made. Clients disagree on the URI form (full
    /// path, short suffix, whole URL), so any of those counts as a match.
    func matches(method: HTTPRequest.Method, path: String) -> (method: Bool, uri: Bool) {
        var signedPath = self.requestURI
        if let query = signedPath.firstIndex(of: "?") { signedPath = String(signedPath[..<query]) }
        if let scheme = signedPath.range(of: "://") {
            let afterHost = signedPath[scheme.upperBound...].firstIndex(of: "/") ?? signedPath.endIndex
            signedPath = String(signedPath[afterHost...])
        }
        let uriMatches = !signedPath.isEmpty && (signedPath == path || path.hasSuffix(signedPath))
        return (self.method.uppercased() == method.rawValue, uriMatches)
    }
}
