import Crypto
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Issues short media tokens: Base64 of `<signatureInfo>…</signatureInfo><authToken>…</authToken>`, the shape of
/// Adobe's tokens (reference §4.12, §7.7), signed with HMAC-SHA256 under a key private to this simulator instance.
struct MediaTokenIssuer: Sendable {
    // Raw bytes rather than `SymmetricKey`, which is not `Sendable`.
    private let keyBytes: [UInt8]

    init() {
        var generator = SystemRandomNumberGenerator()
        self.keyBytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    private var key: SymmetricKey { SymmetricKey(data: self.keyBytes) }

    /// A token for `resource`, valid from `now` for `ttl`.
    func issue(
        requestor: String,
        resource: String,
        mvpd: String,
        userId: String,
        sessionId: String,
        now: Int64,
        ttl: Duration
    )
        -> (serializedToken: String, notBefore: Int64, notAfter: Int64)
    {
        let notAfter = now + ttl.milliseconds
        let authToken =
            "<authToken><sessionGUID>\(HTML.escape(sessionId))</sessionGUID>"
            + "<requestorID>\(HTML.escape(requestor))</requestorID>"
            + "<resourceID>\(HTML.escape(resource))</resourceID>"
            + "<ttl>\(ttl.milliseconds)</ttl><issueTime>\(now)</issueTime><expires>\(notAfter)</expires>"
            + "<mvpdId>\(HTML.escape(mvpd))</mvpdId><userId>\(HTML.escape(userId))</userId></authToken>"
        let signature = HMAC<SHA256>.authenticationCode(for: Data(authToken.utf8), using: self.key)
        let document = "<signatureInfo>\(Data(signature).base64EncodedString())</signatureInfo>" + authToken
        return (Data(document.utf8).base64EncodedString(), now, notAfter)
    }

    /// Whether `serializedToken` was issued by this instance (signature intact).
    func verify(_ serializedToken: String) -> Bool {
        guard let data = Data(base64Encoded: serializedToken) else { return false }
        let document = String(decoding: data, as: UTF8.self)
        guard document.hasPrefix("<signatureInfo>"), let end = document.range(of: "</signatureInfo>"),
            let signature = Data(base64Encoded: String(document[document.index(document.startIndex, offsetBy: 15)..<end.lowerBound]))
        else { return false }
        let authToken = document[end.upperBound...]
        return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(authToken.utf8), using: self.key)
    }
}
