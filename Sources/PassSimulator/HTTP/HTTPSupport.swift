import Hummingbird
import NIOCore
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The request context of every simulator route: Hummingbird's core storage, the peer address (which the throttle
/// falls back to when a request names no device), and a way to drop the connection (the `drop` fault).
struct SimulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    private let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The client's IP address. Worked out when asked: most requests never need it, and formatting it for each
    /// was ~1 % of the simulator's CPU per poll.
    var remoteAddress: String? {
        self.channel.remoteAddress?.ipAddress
    }

    /// Closes the client connection at once, without sending anything.
    func closeConnection() async {
        // Closing the channel itself (not answering) is what makes a client see a transport error: the server's
        // later attempt to write the response fails quietly on the closed channel.
        try? await self.channel.close(mode: .all).get()
    }
}

enum JSONBody {
    static func response(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) throws -> Response {
        // Foundation's coders stay: the simulator's answers and admin bodies are `Codable` models of Adobe's shapes.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = try encoder.encode(value)
        var headers = headers
        headers[.contentType] = "application/json;charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Decodes a JSON request body, or throws `invalid` when it is missing, too large or malformed.
    static func decode<T: Decodable>(
        _ type: T.Type,
        from request: Request,
        context: SimulatorRequestContext,
        orThrow invalid: any Error
    ) async throws -> T {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: context.maxUploadSize),
            // Foundation's decoder stays: the simulator's answers and admin bodies are `Codable` models of Adobe's shapes.
            let value = try? JSONDecoder().decode(T.self, from: Data(buffer: buffer))
        else { throw invalid }
        return value
    }
}

extension Data {
    init(buffer: ByteBuffer) {
        self = buffer.withUnsafeReadableBytes { Data($0) }
    }
}

enum HTMLPage {
    static func response(_ status: HTTPResponse.Status, _ html: String, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "text/html;charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func redirect(to location: String, status: HTTPResponse.Status = .found) -> Response {
        Response(status: status, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// A self-contained page: inline CSS only, so it works with no network beyond the simulator.
    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title))</title>
        <style>
        :root { color-scheme: light dark; --accent: #e4002b; --card: #ffffff; --bg: #f1f2f5; --fg: #1d1f24; --muted: #6b7079; }
        @media (prefers-color-scheme: dark) { :root { --card: #23262d; --bg: #14161a; --fg: #eceef2; --muted: #9aa0aa; } }
        * { box-sizing: border-box; }
        body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
               font: 16px/1.5 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; background: var(--bg); color: var(--fg); }
        main { width: min(440px, 92vw); background: var(--card); border-radius: 14px; padding: 32px 28px;
               box-shadow: 0 10px 30px rgba(0,0,0,.12); }
        h1 { margin: 0 0 8px; font-size: 1.5rem; }
        p { color: var(--muted); margin: 0 0 20px; }
        label { display: block; font-weight: 600; margin: 16px 0 6px; }
        input, select { width: 100%; padding: 12px 14px; font-size: 1rem; border: 1px solid #c7cad1; border-radius: 8px;
                        background: transparent; color: inherit; }
        input.code { font: 600 1.6rem/1 ui-monospace, Menlo, Consolas, monospace; letter-spacing: .35em; text-transform: uppercase; text-align: center; }
        button { margin-top: 24px; width: 100%; padding: 13px; font-size: 1rem; font-weight: 600; color: #fff;
                 background: var(--accent); border: 0; border-radius: 8px; cursor: pointer; }
        button:hover { filter: brightness(1.08); }
        .error { background: #fde8eb; color: #8a0018; border-radius: 8px; padding: 10px 14px; margin-bottom: 12px; }
        .ok { font-size: 3rem; text-align: center; margin: 0; }
        .brand { font-size: .8rem; text-transform: uppercase; letter-spacing: .12em; color: var(--muted); margin-bottom: 18px; }
        .providers { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; margin-top: 12px; }
        .providers button { margin: 0; background: transparent; color: inherit; border: 1px solid #c7cad1; }
        </style></head>
        <body><main>
        \(body)
        </main></body></html>
        """
    }
}

/// Parsing of `application/x-www-form-urlencoded` text (request bodies and query strings).
enum FormData {
    static func parse(_ text: some StringProtocol) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = self.decodeComponent(parts[0])
            guard !key.isEmpty else { continue }
            let value = parts.count > 1 ? self.decodeComponent(parts[1]) : ""
            // The first occurrence wins, so a repeated field cannot override an earlier one.
            if fields[key] == nil { fields[key] = value }
        }
        return fields
    }

    /// Form fields from the body merged over the query string, for endpoints that accept both.
    static func fields(of request: Request, context: SimulatorRequestContext) async throws -> [String: String] {
        var fields = request.uri.query.map { self.parse($0) } ?? [:]
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        if buffer.readableBytes > 0 {
            for (key, value) in self.parse(String(buffer: buffer)) {
                fields[key] = value
            }
        }
        return fields
    }

    static func decodeComponent(_ component: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var iterator = component.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                let high = iterator.next()
                let low = iterator.next()
                if let high, let low, let h = self.hexValue(high), let l = self.hexValue(low) {
                    bytes.append(h << 4 | l)
                } else {
                    // Malformed escapes are kept literally rather than rejected: these are lenient fields.
                    bytes.append(byte)
                    if let high { bytes.append(high) }
                    if let low { bytes.append(low) }
                }
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func encodeComponent(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                encoded += "%"
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return encoded
    }

    /// `key=value&…` with every component percent-encoded.
    static func query(_ items: KeyValuePairs<String, String>) -> String {
        items.map { "\(self.encodeComponent($0.key))=\(self.encodeComponent($0.value))" }.joined(separator: "&")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

enum Base64 {
    /// Decodes standard or URL-safe Base64, with or without padding, ignoring blanks and line breaks; `nil` when the
    /// text is not Base64.
    ///
    /// Written over the UTF-8 bytes by hand because Foundation's decoder takes only the standard alphabet with full
    /// padding, and normalising a copy of every device identifier first cost ~3 % of the simulator's CPU per poll.
    /// Padding may only end the text and be at most two characters (RFC 4648 §3.3), which Foundation does not
    /// check; otherwise it accepts what normalising and then `Data(base64Encoded:)` accepts (`HeaderParsingTests`).
    static func decodeLenient(_ text: some StringProtocol) -> Data? {
        var output = CollectedBytes()
        output.bytes.reserveCapacity(text.utf8.count / 4 * 3 + 3)
        guard decode(text, into: &output) else { return nil }
        return Data(output.bytes)
    }

    /// Whether ``decodeLenient(_:)`` decodes `text` to at least one byte, without building the bytes: every poll
    /// carries a device identifier that is checked this way and never decoded.
    static func decodesToBytes(_ text: some StringProtocol) -> Bool {
        var output = CountedBytes()
        return decode(text, into: &output) && output.count > 0
    }

    private static func decode(_ text: some StringProtocol, into output: inout some DecodedBytes) -> Bool {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(bytes: $0, into: &output) }) {
            return decoded
        }
        return decode(bytes: text.utf8, into: &output)
    }

    private static func decode(bytes: some Sequence<UInt8>, into output: inout some DecodedBytes) -> Bool {
        var group: UInt32 = 0
        var sextets = 0
        var padding = 0
        for byte in bytes {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: return false
            }
            // Padding only ends the text.
            guard padding == 0 else { return false }
            group = group << 6 | UInt32(value)
            sextets += 1
            if sextets == 4 {
                output.append(UInt8(truncatingIfNeeded: group >> 16))
                output.append(UInt8(truncatingIfNeeded: group >> 8))
                output.append(UInt8(truncatingIfNeeded: group))
                group = 0
                sextets = 0
            }
        }
        // The missing padding is added, so the quantum's length with its padding decides: a lone sextet or more
        // than two padding characters is not Base64.
        let total = sextets + padding
        guard total > 0 || !output.isEmpty, total % 4 != 1 else { return false }
        guard padding + (4 - total % 4) % 4 <= 2 else { return false }
        switch sextets {
        case 2: output.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            output.append(UInt8(truncatingIfNeeded: group >> 10))
            output.append(UInt8(truncatingIfNeeded: group >> 2))
        default: break
        }
        return true
    }

    static func urlSafeEncode(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}

/// Where ``Base64`` puts what it decodes: the bytes themselves, or only how many there are.
private protocol DecodedBytes {
    var isEmpty: Bool { get }
    mutating func append(_ byte: UInt8)
}

private struct CollectedBytes: DecodedBytes {
    var bytes: [UInt8] = []
    var isEmpty: Bool { bytes.isEmpty }
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

private struct CountedBytes: DecodedBytes {
    var count = 0
    var isEmpty: Bool { count == 0 }
    mutating func append(_ byte: UInt8) { count += 1 }
}

extension Request {
    /// The bearer token of `Authorization: Bearer <token>` (scheme case-insensitive), if any.
    var bearerToken: String? {
        self.headers[.authorization].flatMap(CredentialsHeader.bearerToken)
    }

    /// Whether the body is declared as JSON (`application/json`, any parameters).
    var hasJSONContentType: Bool {
        guard let value = self.headers[.contentType], let mediaType = MediaType(from: value) else { return false }
        return mediaType.isType(.applicationJson)
    }

    /// Whether the body is declared as a form (`application/x-www-form-urlencoded`, any parameters).
    var hasFormContentType: Bool {
        guard let value = self.headers[.contentType], let mediaType = MediaType(from: value) else { return false }
        return mediaType.isType(.applicationUrlEncoded)
    }

    /// The client's address: the first `X-Forwarded-For` address when the header is trusted (a proxy in front), else
    /// the TCP peer's.
    func clientAddress(context: SimulatorRequestContext, trustingForwardedFor: Bool) -> String? {
        if trustingForwardedFor, let forwarded = self.forwardedFor { return forwarded }
        return context.remoteAddress
    }

    /// The first address of `X-Forwarded-For`, if present.
    var forwardedFor: String? {
        guard let header = self.headers[.xForwardedFor] else { return nil }
        let first = header.split(separator: ",", maxSplits: 1).first?.trimmed
        return first?.isEmpty == false ? first : nil
    }
}

extension StringProtocol where SubSequence == Substring {
    /// The text without leading and trailing spaces and tabs.
    var trimmed: String {
        String(self.trimmingBlanks)
    }

    /// ``trimmed`` without the copy: a view of the text between its leading and trailing spaces and tabs, found
    /// over the UTF-8 bytes (it runs on every request's bearer token).
    var trimmingBlanks: Substring {
        let text = self[...]
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, Self.isBlank(bytes[start]) { bytes.formIndex(after: &start) }
        while start < end, Self.isBlank(bytes[bytes.index(before: end)]) { bytes.formIndex(before: &end) }
        return text[start..<end]
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}

extension HTTPFields.Element.Name {
    static let apDeviceIdentifier = Self("AP-Device-Identifier")!
    static let xDeviceInfo = Self("X-Device-Info")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let pragma = Self("Pragma")!
}

/// Registration of endpoints that answer 405 (with `Allow`) to methods they do not implement.
extension RouterMethods {
    typealias Handler = @Sendable (Request, Context) async throws -> Response

    /// Registers `handlers` on `path`; every other common method gets 405 Method Not Allowed.
    @discardableResult
    func endpoint(_ path: RouterPath, _ handlers: [HTTPRequest.Method: Handler]) -> Self {
        for (method, handler) in handlers {
            self.on(path, method: method, use: handler)
        }
        var allowedMethods = Set(handlers.keys.map(\.rawValue))
        if handlers[.get] != nil { allowedMethods.insert(HTTPRequest.Method.head.rawValue) }
        let allowed = allowedMethods.sorted().joined(separator: ", ")
        let others: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .options]
        if handlers[.head] == nil, let get = handlers[.get] {
            self.on(path, method: .head) { request, context -> Response in
                try await get(request, context).createHeadResponse()
            }
        }
        for method in others where handlers[method] == nil && !(method == .head && handlers[.get] != nil) {
            self.on(path, method: method) { _, _ -> Response in
                Response(
                    status: .methodNotAllowed,
                    headers: [.allow: allowed, .contentType: "text/plain;charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "405 Method Not Allowed\n"))
                )
            }
        }
        return self
    }
}
