#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The client-information fields of an `X-Device-Info` header (reference §2.3).
///
/// Decoding is deliberately lenient: Adobe's own sample header is Base64 of *invalid* JSON (a missing
/// comma), so scalar `"key": value` pairs are collected even when the JSON as a whole does not parse.
struct DeviceInfo: Sendable, Equatable {
    var fields: [String: String]

    /// Decodes the header value, or `nil` when it is not Base64 (standard or URL-safe, optionally URL-encoded).
    init?(headerValue: String) {
        let text = headerValue.contains("%") ? FormData.decodeComponent(headerValue) : headerValue
        guard let data = Base64.decodeLenient(text) else { return nil }
        self.fields = Self.scalarPairs(in: Array(data))
    }

    init(fields: [String: String]) {
        self.fields = fields
    }

    subscript(_ key: String) -> String? { self.fields[key] }

    /// Collects `"key" : scalar` pairs at any depth; later duplicates do not override earlier ones.
    static func scalarPairs(in bytes: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        var index = 0
        var pendingKey: String?
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let (string, next) = self.readString(bytes, from: index) else { return result }
                index = next
                self.skipSpaces(bytes, &index)
                if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                    pendingKey = string
                    index += 1
                } else if let key = pendingKey {
                    if result[key] == nil { result[key] = string }
                    pendingKey = nil
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                let start = index
                while index < bytes.count, !Self.isDelimiter(bytes[index]) { index += 1 }
                let literal = String(decoding: bytes[start..<index], as: UTF8.self)
                if let key = pendingKey, literal != "null", result[key] == nil { result[key] = literal }
                pendingKey = nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                pendingKey = nil
                index += 1
            default:
                index += 1
            }
        }
        return result
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "), UInt8(ascii: "\n"),
            UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: "\""):
            true
        default:
            false
        }
    }

    private static func skipSpaces(_ bytes: [UInt8], _ index: inout Int) {
        while index < bytes.count,
            bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\n") || bytes[index] == UInt8(ascii: "\r")
                || bytes[index] == UInt8(ascii: "\t")
        {
            index += 1
        }
    }

    /// Reads a JSON string starting at the opening quote; returns the text and the index after the closing quote.
    private static func readString(_ bytes: [UInt8], from start: Int) -> (String, Int)? {
        var output: [UInt8] = []
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                return (String(decoding: output, as: UTF8.self), index + 1)
            }
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                let escaped = bytes[index + 1]
                switch escaped {
                case UInt8(ascii: "n"): output.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "t"): output.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "r"): output.append(UInt8(ascii: "\r"))
                case UInt8(ascii: "u"):
                    // \uXXXX is rare in device info; keep it verbatim rather than decode surrogates.
                    output.append(contentsOf: [UInt8(ascii: "\\"), escaped])
                default: output.append(escaped)
                }
                index += 2
                continue
            }
            output.append(byte)
            index += 1
        }
        return nil
    }
}

/// The server's normalized device model, as returned by `GET /api/v2/{sp}/sessions/{code}` (reference §7.4).
struct NormalizedDevice: Encodable, Sendable {
    struct Version: Encodable, Sendable {
        var major = 0
        var minor = 0
        var patch = 0
        var profile = ""

        init(_ text: String?) {
            let numbers = (text ?? "").split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
            if numbers.count > 0 { self.major = numbers[0] }
            if numbers.count > 1 { self.minor = numbers[1] }
            if numbers.count > 2 { self.patch = numbers[2] }
        }
    }

    struct Hardware: Encodable, Sendable {
        var name: String
        var vendor: String
        var version: Version
        var manufacturer: String
    }

    struct OperatingSystem: Encodable, Sendable {
        var name: String
        var family: String
        var vendor: String
        var version: Version
    }

    struct Browser: Encodable, Sendable {
        var name: String
        var vendor: String
        var version: Version
        var userAgent: String?
        var originalUserAgent: String?
    }

    struct Display: Encodable, Sendable {
        var width: Int
        var height: Int
        var ppi: Int
        var name: String
        var vendor: String?
        var version: String?
        var diagonalSize: String?
    }

    struct Connection: Encodable, Sendable {
        var ipAddress: String?
        var port: String?
        var secure: Bool
        var type: String?
    }

    var type: String
    var model: String
    var version: Version
    var hardware: Hardware
    var operatingSystem: OperatingSystem
    var browser: Browser
    var display: Display
    var applicationId: String?
    var connection: Connection

    init(info: DeviceInfo?, userAgent: String?, peerAddress: String?) {
        let info = info ?? DeviceInfo(fields: [:])
        let unknown = "Unknown"
        let model = info["model"] ?? unknown
        self.type = info["primaryHardwareType"] ?? unknown
        self.model = model
        self.version = Version(info["version"])
        self.hardware = Hardware(
            name: model,
            vendor: info["vendor"] ?? unknown,
            version: Version(info["version"]),
            manufacturer: info["manufacturer"] ?? unknown
        )
        self.operatingSystem = OperatingSystem(
            name: info["osName"] ?? unknown,
            family: info["osFamily"] ?? info["osName"] ?? unknown,
            vendor: info["osVendor"] ?? unknown,
            version: Version(info["osVersion"])
        )
        self.browser = Browser(
            name: info["browserName"] ?? unknown,
            vendor: info["browserVendor"] ?? unknown,
            version: Version(info["browserVersion"]),
            userAgent: info["userAgent"] ?? userAgent,
            originalUserAgent: userAgent
        )
        self.display = Display(
            width: info["displayWidth"].flatMap { Int($0) } ?? 0,
            height: info["displayHeight"].flatMap { Int($0) } ?? 0,
            ppi: info["displayPpi"].flatMap { Int($0) } ?? 0,
            name: "DISPLAY",
            vendor: nil,
            version: nil,
            diagonalSize: info["diagonalScreenSize"]
        )
        self.applicationId = info["applicationId"]
        self.connection = Connection(
            ipAddress: info["connectionIp"] ?? peerAddress,
            port: info["connectionPort"],
            secure: info["connectionSecure"] == "true",
            type: info["connectionType"]
        )
    }
}
