import Crypto
import Foundation
import RegcodeSupport

/// The MVPD identity provider behind the emulated TV Provider: what VideoSubscriberAccount returns as
/// `samlAttributeQueryResponse` when the app hands it Adobe's `authenticationRequest` as `verificationToken`
/// (cookbook phase C, `[ACB2]`). The app only forwards the answer to `profiles/sso/Apple`; no other endpoint is
/// involved, so Apple single sign-on needs nothing but Adobe's own endpoints.
///
/// The assertion is signed with an ECDSA P-256 key (swift-crypto). The backend trusts the matching public key for
/// the MVPD (pass-sim: `--tv-provider-idp-key`, or the daemon wires its embedded simulator itself).
///
/// Not XML-DSig: no package this project depends on writes or canonicalises signed XML, so the SAML is written by
/// hand, and the signature covers the exact bytes of the `<saml:Assertion>` element, carried as Base64 DER in a
/// `<tvp:Signature>` sibling. Any change inside the assertion fails verification.
package struct TVProviderIdentityProvider: Sendable {
    /// The private key's raw scalar (swift-crypto's key type is not `Sendable`).
    private let rawKey: Data
    private var key: P256.Signing.PrivateKey {
        // The bytes came from a valid key.
        try! P256.Signing.PrivateKey(rawRepresentation: rawKey)
    }

    /// The namespace of the signature element.
    package static let signatureNamespace = "urn:regcoded:tv-provider-idp"
    /// How long an assertion stays acceptable.
    package static let assertionLifetimeMs: Int64 = 5 * 60_000

    /// A new key.
    package init() {
        rawKey = P256.Signing.PrivateKey().rawRepresentation
    }

    /// The key of a PEM `PRIVATE KEY` (PKCS #8) or `EC PRIVATE KEY` (SEC 1) file.
    package init(privateKeyPEM: String) throws {
        rawKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM).rawRepresentation
    }

    package var privateKeyPEM: String { key.pemRepresentation }
    /// The `PUBLIC KEY` PEM a backend trusts for this identity provider.
    package var publicKeyPEM: String { key.publicKey.pemRepresentation }

    /// Base64 of a signed SAML `Response` answering the Base64 SAML request `request` for `user`, issued by
    /// `provider` (the MVPD's `platformMappingId`); `nil` when the request names no `ID`.
    ///
    /// The audience is the request's `Issuer`; the attributes are the user's plus every attribute the request
    /// names (valued with the user id, as an MVPD would fill `uid`, `NameID`, `uniqueId`).
    package func response(toRequest request: String, provider: String, user: TVProviderUser, nowMillis: Int64) -> String? {
        guard let data = Data(base64Encoded: request.filter { !$0.isWhitespace }) else { return nil }
        let xml = String(decoding: data, as: UTF8.self)
        guard let requestID = SAMLText.rootAttribute("ID", in: xml) else { return nil }
        let audience = SAMLText.elementText(localName: "Issuer", in: xml) ?? ""
        var attributes: [(String, String)] = [("userID", user.userID), ("householdID", user.householdID ?? "household-\(user.userID)")]
        if let zip = user.zip { attributes.append(("zip", zip)) }
        for name in SAMLText.attributeNames(in: xml) where !attributes.contains(where: { $0.0 == name }) {
            attributes.append((name, user.userID))
        }
        let expiry = nowMillis + Self.assertionLifetimeMs
        let values = attributes.map { name, value in
            #"<saml:Attribute Name="\#(HTML.escape(name))"><saml:AttributeValue>\#(HTML.escape(value))</saml:AttributeValue></saml:Attribute>"#
        }.joined()
        let assertion =
            #"<saml:Assertion ID="_\#(UUID().uuidString.lowercased())" Version="2.0" IssueInstant="\#(SAMLText.instant(nowMillis))">"#
            + "<saml:Issuer>\(HTML.escape(provider))</saml:Issuer>"
            + "<saml:Subject><saml:NameID>\(HTML.escape(user.userID))</saml:NameID>"
            + #"<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">"#
            + #"<saml:SubjectConfirmationData InResponseTo="\#(HTML.escape(requestID))" NotOnOrAfter="\#(SAMLText.instant(expiry))"/>"#
            + "</saml:SubjectConfirmation></saml:Subject>"
            + #"<saml:Conditions NotBefore="\#(SAMLText.instant(nowMillis))" NotOnOrAfter="\#(SAMLText.instant(expiry))">"#
            + "<saml:AudienceRestriction><saml:Audience>\(HTML.escape(audience))</saml:Audience></saml:AudienceRestriction>"
            + "</saml:Conditions>"
            + "<saml:AttributeStatement>\(values)</saml:AttributeStatement>"
            + "</saml:Assertion>"
        // Signing a short message with a valid P-256 key does not fail.
        guard let signature = try? key.signature(for: Data(assertion.utf8)) else { return nil }
        let response =
            #"<?xml version="1.0" encoding="UTF-8"?>"#
            + #"<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion""#
            + #" xmlns:tvp="\#(Self.signatureNamespace)" ID="_\#(UUID().uuidString.lowercased())" Version="2.0""#
            + #" InResponseTo="\#(HTML.escape(requestID))" IssueInstant="\#(SAMLText.instant(nowMillis))">"#
            + "<saml:Issuer>\(HTML.escape(provider))</saml:Issuer>"
            + #"<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>"#
            + assertion
            + #"<tvp:Signature Algorithm="ECDSA-P256-SHA256">\#(signature.derRepresentation.base64EncodedString())</tvp:Signature>"#
            + "</samlp:Response>"
        return Data(response.utf8).base64EncodedString()
    }
}

extension TVProviderIdentityProvider: Hashable {
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.rawKey == rhs.rawKey
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(rawKey)
    }
}

/// Just enough SAML reading for the identity provider: the request's root `ID`, its `Issuer`, the attribute names
/// it asks for. Any namespace prefix is accepted.
enum SAMLText {
    /// An attribute of the first element that is not the XML declaration, a comment or a processing instruction.
    static func rootAttribute(_ name: String, in xml: String) -> String? {
        var rest = xml[...]
        while let open = rest.firstIndex(of: "<") {
            let after = rest.index(after: open)
            guard after < rest.endIndex else { return nil }
            if rest[after] == "?" || rest[after] == "!" {
                guard let close = rest[after...].firstIndex(of: ">") else { return nil }
                rest = rest[rest.index(after: close)...]
                continue
            }
            guard let close = rest[after...].firstIndex(of: ">") else { return nil }
            return attribute(name, inTag: rest[open...close])
        }
        return nil
    }

    /// The text of the first element named `localName` under any prefix (or none).
    static func elementText(localName: String, in xml: String) -> String? {
        var rest = xml[...]
        while let open = rest.firstIndex(of: "<") {
            let nameStart = rest.index(after: open)
            guard let nameEnd = rest[nameStart...].firstIndex(where: { $0 == ">" || $0 == " " || $0 == "/" }) else { return nil }
            let name = rest[nameStart..<nameEnd]
            rest = rest[nameEnd...]
            guard name.split(separator: ":").last.map(String.init) == localName, let close = rest.firstIndex(of: ">") else { continue }
            let content = rest[rest.index(after: close)...]
            guard let end = content.range(of: "</") else { return nil }
            return HTML.unescape(String(content[..<end.lowerBound]))
        }
        return nil
    }

    /// The `Name` of every `Attribute` element.
    static func attributeNames(in xml: String) -> [String] {
        var names: [String] = []
        var rest = xml[...]
        while let match = rest.range(of: "Attribute Name=\"") {
            let value = rest[match.upperBound...]
            guard let quote = value.firstIndex(of: "\"") else { break }
            let name = HTML.unescape(String(value[..<quote]))
            if !names.contains(name) { names.append(name) }
            rest = value[quote...]
        }
        return names
    }

    static func attribute(_ name: String, inTag tag: Substring) -> String? {
        guard let start = tag.range(of: " \(name)=\""), let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return HTML.unescape(String(tag[start.upperBound..<end]))
    }

    /// `xs:dateTime` in UTC with milliseconds.
    static func instant(_ millis: Int64) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date(timeIntervalSince1970: Double(millis) / 1000))
    }
}
