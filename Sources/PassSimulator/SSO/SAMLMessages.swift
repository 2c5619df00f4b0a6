import Crypto
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SAML messages of partner SSO: the request pass-sim hands to the partner, and the answer its emulated MVPD IdP
/// gives back.
///
/// Not XML-DSig: the IdP signs the exact bytes of the `<saml:Assertion>` element with HMAC-SHA256 under a key only the
/// simulator holds (kept in its state) and puts the code in a `<sim:Signature>` sibling. Any change inside the
/// assertion, or an assertion pass-sim did not issue, fails verification. Parsing is by exact element names, enough
/// for the messages pass-sim itself writes.
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

    /// Base64 of a signed SAML `Response` to request `requestId`.
    static func response(
        requestId: String,
        issuer: String,
        audience: String,
        nameId: String,
        attributes: [(String, String)],
        now: Int64,
        notOnOrAfter: Int64,
        key: SymmetricKey
    ) -> String {
        let values = attributes.map { name, value in
            #"<saml:Attribute Name="\#(HTML.escape(name))"><saml:AttributeValue>\#(HTML.escape(value))</saml:AttributeValue></saml:Attribute>"#
        }.joined()
        let assertion =
            #"<saml:Assertion ID="_\#(UUID().uuidString.lowercased())" Version="2.0" IssueInstant="\#(Self.instant(now))">"#
            + "<saml:Issuer>\(HTML.escape(issuer))</saml:Issuer>"
            + "<saml:Subject><saml:NameID>\(HTML.escape(nameId))</saml:NameID>"
            + #"<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">"#
            + #"<saml:SubjectConfirmationData InResponseTo="\#(requestId)" NotOnOrAfter="\#(Self.instant(notOnOrAfter))"/>"#
            + "</saml:SubjectConfirmation></saml:Subject>"
            + #"<saml:Conditions NotBefore="\#(Self.instant(now))" NotOnOrAfter="\#(Self.instant(notOnOrAfter))">"#
            + "<saml:AudienceRestriction><saml:Audience>\(HTML.escape(audience))</saml:Audience></saml:AudienceRestriction>"
            + "</saml:Conditions>"
            + "<saml:AttributeStatement>\(values)</saml:AttributeStatement>"
            + "</saml:Assertion>"
        let signature = Data(HMAC<SHA256>.authenticationCode(for: Data(assertion.utf8), using: key)).base64EncodedString()
        let xml =
            #"<?xml version="1.0" encoding="UTF-8"?>"#
            + #"<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion""#
            + #" xmlns:sim="urn:pass-sim:idp" ID="_\#(UUID().uuidString.lowercased())" Version="2.0" InResponseTo="\#(requestId)""#
            + #" IssueInstant="\#(Self.instant(now))">"#
            + "<saml:Issuer>\(HTML.escape(issuer))</saml:Issuer>"
            + #"<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>"#
            + assertion
            + #"<sim:Signature Algorithm="HMAC-SHA256">\#(signature)</sim:Signature>"#
            + "</samlp:Response>"
        return Data(xml.utf8).base64EncodedString()
    }

    /// The assertion of a Base64 `SAMLResponse` whose signature verifies under `key`; `nil` otherwise. Expiry and the
    /// request it answers are for the caller to check.
    static func verify(base64 response: String, key: SymmetricKey) -> Assertion? {
        guard let data = Base64.decodeLenient(response) else { return nil }
        let xml = String(decoding: data, as: UTF8.self)
        guard let start = xml.range(of: "<saml:Assertion "),
            let end = xml.range(of: "</saml:Assertion>", range: start.upperBound..<xml.endIndex),
            let signatureText = Self.elementText("sim:Signature", in: String(xml[end.upperBound...])),
            let signature = Data(base64Encoded: signatureText)
        else { return nil }
        let assertion = String(xml[start.lowerBound..<end.upperBound])
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(assertion.utf8), using: key) else { return nil }
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
            let name = Self.unescape(String(afterName[..<quote]))
            let remainder = String(afterName[quote...])
            if let value = Self.elementText("saml:AttributeValue", in: remainder) { attributes[name] = value }
            rest = afterName[quote...]
        }
        return Assertion(
            inResponseTo: inResponseTo,
            issuer: issuer,
            audience: audience,
            nameId: nameId,
            notOnOrAfter: notOnOrAfter,
            attributes: attributes
        )
    }

    // MARK: Minimal XML reading

    private static func startTag(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name) "), let close = xml[open.upperBound...].firstIndex(of: ">") else { return nil }
        return String(xml[open.lowerBound...close])
    }

    private static func attribute(_ name: String, inTag tag: String) -> String? {
        guard let start = tag.range(of: " \(name)=\""), let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return Self.unescape(String(tag[start.upperBound..<end]))
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
        return Self.unescape(String(xml[contentStart..<close.lowerBound]))
    }

    private static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return
            text
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&#x27;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
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
