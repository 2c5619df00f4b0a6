import Crypto
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SAML messages of partner SSO: the request pass-sim hands to the partner, and the MVPD identity provider's
/// answer the app brings back (written by regcoded's TV Provider, `TVProviderIdentityProvider`).
///
/// Not XML-DSig: no package this project depends on canonicalises or signs XML, so the messages are written and read
/// by hand. The identity provider signs the exact bytes of the `<saml:Assertion>` element with ECDSA P-256/SHA-256
/// and carries the DER signature in a `<tvp:Signature>` sibling; pass-sim verifies it with the key it trusts for the
/// MVPD (``SAMLTrust``). Any change inside the assertion fails verification. Parsing is by exact element names, enough
/// for the messages of this pair.
enum SAMLMessages {
    /// The claims of a verified answer.
    struct Assertion: Sendable, Equatable {
        let inResponseTo: String
        let issuer: String
        let audience: String
        let nameId: String
        let notOnOrAfter: Int64
        let attributes: [String: String]
    }

    /// Base64 of a SAML 2.0 `AuthnRequest` with id `id`.
    static func authnRequest(id: String, serviceProvider: String, mvpd: String, attributesNames: [String], now: Int64) -> String {
        let names = attributesNames.map { #"<saml:Attribute Name="\#(HTML.escape($0))"/>"# }.joined()
        let xml =
            #"<?xml version="1.0" encoding="UTF-8"?>"#
            + #"<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion""#
            + #" ID="\#(id)" Version="2.0" IssueInstant="\#(Self.instant(now))" ProviderName="\#(HTML.escape(mvpd))">"#
            + "<saml:Issuer>\(HTML.escape(serviceProvider))</saml:Issuer>"
            + "<saml:AttributeQuery>\(names)</saml:AttributeQuery>"
            + "</samlp:AuthnRequest>"
        return Data(xml.utf8).base64EncodedString()
    }

    /// The `ID` of a request made by ``authnRequest(id:serviceProvider:mvpd:attributesNames:now:)``.
    static func requestId(base64 request: String) -> String? {
        guard let data = Base64.decodeLenient(request) else { return nil }
        let xml = String(decoding: data, as: UTF8.self)
        guard let tag = Self.startTag("samlp:AuthnRequest", in: xml) else { return nil }
        return Self.attribute("ID", inTag: tag)
    }

    /// An answer read but not yet verified: its claims, the signed bytes and the signature (if any).
    struct Parsed: Sendable {
        let assertion: Assertion
        let signedBytes: [UInt8]
        let signature: [UInt8]?

        /// Whether the signature verifies under `key`.
        func isSigned(by key: P256.Signing.PublicKey) -> Bool {
            guard let signature, let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(ecdsa, for: signedBytes)
        }
    }

    /// The assertion of a Base64 `SAMLResponse` with its signature, unverified; `nil` when it is not such a message.
    /// Expiry, the request it answers and the signature are for the caller to check.
    static func parse(base64 response: String) -> Parsed? {
        guard let data = Base64.decodeLenient(response) else { return nil }
        let xml = String(decoding: data, as: UTF8.self)
        guard let start = xml.range(of: "<saml:Assertion "),
            let end = xml.range(of: "</saml:Assertion>", range: start.upperBound..<xml.endIndex)
        else { return nil }
        let signature = Self.elementText("tvp:Signature", in: String(xml[end.upperBound...])).flatMap { Data(base64Encoded: $0) }
        let assertion = String(xml[start.lowerBound..<end.upperBound])
        guard let issuer = Self.elementText("saml:Issuer", in: assertion),
            let nameId = Self.elementText("saml:NameID", in: assertion),
            let audience = Self.elementText("saml:Audience", in: assertion),
            let confirmation = Self.startTag("saml:SubjectConfirmationData", in: assertion),
            let inResponseTo = Self.attribute("InResponseTo", inTag: confirmation),
            let expiryText = Self.attribute("NotOnOrAfter", inTag: confirmation),
            let notOnOrAfter = Self.millis(expiryText)
        else { return nil }
        var attributes: [String: String] = [:]
        var rest = assertion[...]
        while let open = rest.range(of: "<saml:Attribute Name=\"") {
            let afterName = rest[open.upperBound...]
            guard let quote = afterName.firstIndex(of: "\"") else { break }
            let name = HTML.unescape(String(afterName[..<quote]))
            let remainder = String(afterName[quote...])
            if let value = Self.elementText("saml:AttributeValue", in: remainder) { attributes[name] = value }
            rest = afterName[quote...]
        }
        return Parsed(
            assertion: Assertion(
                inResponseTo: inResponseTo,
                issuer: issuer,
                audience: audience,
                nameId: nameId,
                notOnOrAfter: notOnOrAfter,
                attributes: attributes
            ),
            signedBytes: Array(assertion.utf8),
            signature: signature.map(Array.init)
        )
    }

    // MARK: Minimal XML reading

    private static func startTag(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name) "), let close = xml[open.upperBound...].firstIndex(of: ">") else { return nil }
        return String(xml[open.lowerBound...close])
    }

    private static func attribute(_ name: String, inTag tag: String) -> String? {
        guard let start = tag.range(of: " \(name)=\""), let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return HTML.unescape(String(tag[start.upperBound..<end]))
    }

    /// The text of the first `name` element (`<name>` or `<name …>`, not `<nameLonger>`).
    private static func elementText(_ name: String, in xml: String) -> String? {
        var searchStart = xml.startIndex
        var found: Range<String.Index>?
        while let candidate = xml.range(of: "<\(name)", range: searchStart..<xml.endIndex) {
            if candidate.upperBound < xml.endIndex, [">", " "].contains(xml[candidate.upperBound]) {
                found = candidate
                break
            }
            searchStart = candidate.upperBound
        }
        guard let open = found, let tagEnd = xml[open.upperBound...].firstIndex(of: ">") else { return nil }
        let contentStart = xml.index(after: tagEnd)
        guard let close = xml.range(of: "</\(name)>", range: contentStart..<xml.endIndex) else { return nil }
        return HTML.unescape(String(xml[contentStart..<close.lowerBound]))
    }

    /// `xs:dateTime` in UTC with milliseconds.
    static func instant(_ millis: Int64) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    private static func millis(_ text: String) -> Int64? {
        guard let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
