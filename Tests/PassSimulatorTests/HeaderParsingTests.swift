import Foundation
import Testing

@testable import PassSimulator

/// The byte-level parsers of the hot request headers accept exactly what the straightforward versions they replaced
/// accept: each is compared with that version on the edge cases and on many generated values.
@Suite("Header parsing")
struct HeaderParsingTests {
    /// The decoder this replaced: normalise to the standard alphabet, pad, and let Foundation decide; except that
    /// padding must end the text and be at most two characters. Foundation accepts `=` anywhere and over-padding
    /// (`"=="` decodes to one byte), which the simulator refuses, as RFC 4648 §3.3 lets a decoder do.
    static func referenceDecode(_ text: String) -> Data? {
        var normalized = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "-": normalized.unicodeScalars.append("+")
            case "_": normalized.unicodeScalars.append("/")
            case " ", "\n", "\r", "\t": continue
            default: normalized.unicodeScalars.append(scalar)
            }
        }
        guard !normalized.isEmpty else { return nil }
        let remainder = normalized.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { normalized += String(repeating: "=", count: 4 - remainder) }
        let padding = normalized.reversed().prefix { $0 == "=" }.count
        guard padding <= 2, !normalized.dropLast(padding).contains("=") else { return nil }
        return Data(base64Encoded: normalized)
    }

    /// The bearer parser this replaced.
    static func referenceBearer(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        // The trimming this replaced, by characters.
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = parts[1].firstIndex(where: { !isBlank($0) }), let last = parts[1].lastIndex(where: { !isBlank($0) }) else {
            return nil
        }
        return String(parts[1][first...last])
    }

    /// The device identifier parser this replaced.
    static func referenceFingerprint(_ header: String) -> String? {
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "fingerprint", let decoded = referenceDecode(String(parts[1])), !decoded.isEmpty
        else { return nil }
        return String(parts[1])
    }

    static func fingerprint(_ header: String) -> String? { CredentialsHeader.fingerprint(header) }

    static func bearer(_ header: String) -> String? { CredentialsHeader.bearerToken(header) }

    /// Random text over an alphabet that favours Base64's edge cases.
    static func samples(count: Int, alphabet: [String], maxLength: Int) -> [String] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        return (0..<count).map { _ in (0..<next(maxLength + 1)).map { _ in alphabet[next(alphabet.count)] }.joined() }
    }

    static let base64Cases = [
        "", " ", "=", "==", "a", "ab", "abc", "abcd", "ab=", "ab==", "abc=", "abc==", "a===", "abcd=", "abcd==",
        "abcdef=", "abcde=", "ab==cd", "a=bc", "-_-_", "+/+/", "YQ", "YR", "YWI", "YWJ", "QUJD\nREVG", " YQ== ", "Y Q",
        "é", "YQ\u{0}", "AP-Device", "Zm9v\tYmFy",
    ]

    @Test("Base64: the edge cases decode as before", arguments: base64Cases)
    func base64EdgeCases(_ text: String) {
        #expect(Base64.decodeLenient(text) == Self.referenceDecode(text), "\(text.debugDescription)")
    }

    @Test("Base64: 20,000 generated texts decode as before")
    func base64Generated() {
        let alphabet = ["A", "Q", "z", "0", "9", "+", "/", "-", "_", "=", " ", "\n", "\t", "*", "é"]
        var differing: [String] = []
        for text in Self.samples(count: 20_000, alphabet: alphabet, maxLength: 10)
        where Base64.decodeLenient(text) != Self.referenceDecode(text) {
            differing.append(text)
        }
        #expect(differing.isEmpty, "\(differing.prefix(5).map(\.debugDescription))")
    }

    @Test("Base64: the check without decoding agrees with decoding, on the edge cases and 20,000 generated texts")
    func base64CheckAgreesWithDecoding() {
        let alphabet = ["A", "Q", "z", "0", "9", "+", "/", "-", "_", "=", " ", "\n", "\t", "*", "é"]
        var differing: [String] = []
        for text in Self.base64Cases + Self.samples(count: 20_000, alphabet: alphabet, maxLength: 10)
        where Base64.decodesToBytes(text) != (Base64.decodeLenient(text).map { !$0.isEmpty } ?? false)
            || Base64.decodesToBytes(text[...]) != Base64.decodesToBytes(text)
        {
            differing.append(text)
        }
        #expect(differing.isEmpty, "\(differing.prefix(5).map(\.debugDescription))")
    }

    @Test(
        "Bearer and fingerprint: the edge cases parse as before",
        arguments: [
            "Bearer abc", "bearer abc", "BEARER abc", "  Bearer   abc  ", "Bearer", "Bearer ", "Bearer\tabc", "Bearerabc",
            "Bearer a b", "Bearer \tabc\t", "Basic abc", "fingerprint YWJj", "Fingerprint YWJj  ", "fingerprint  YWJj",
            "fingerprint YWJj x", "fingerprint", "fingerprint ", "fingerprint @@", "fingerprintYWJj", "  FINGERPRINT YQ",
            "fingerprint\tYWJj", "fingerprint YW\tJj",
        ]
    )
    func credentialEdgeCases(_ header: String) {
        #expect(Self.bearer(header) == Self.referenceBearer(header), "\(header.debugDescription)")
        #expect(Self.fingerprint(header) == Self.referenceFingerprint(header), "\(header.debugDescription)")
    }

    @Test("Bearer and fingerprint: 20,000 generated fields parse as before")
    func credentialsGenerated() {
        let alphabet = ["bearer", "Bearer", "fingerprint", "FingerPrint", " ", "  ", "\t", "YWJj", "=", "-", "x", "é"]
        var differing: [String] = []
        for header in Self.samples(count: 20_000, alphabet: alphabet, maxLength: 5)
        where Self.bearer(header) != Self.referenceBearer(header) || Self.fingerprint(header) != Self.referenceFingerprint(header) {
            differing.append(header)
        }
        #expect(differing.isEmpty, "\(differing.prefix(5).map(\.debugDescription))")
    }
}
