import Crypto
import Foundation

/// Builds the legacy REST API v1 signed `Authorization` header (public key + secret, HMAC-SHA1).
///
/// Format: `<METHOD> requestor_id=…, nonce=…, signature_method=HMAC-SHA1, request_time=<ms>, request_uri=…,
/// public_key=…, signature=<base64 HMAC-SHA1 of everything before ", public_key=">`. The header carries no scheme token.
package enum AdobeRequestSigner {
    /// The header for fully specified inputs; deterministic, so it can be checked against known vectors.
    /// - Parameters:
    ///   - method: The HTTP verb; upper-cased before signing.
    ///   - requestor: The requestor id.
    ///   - requestURI: The path (without host or query) being called.
    ///   - publicKey: The public key appended in clear text.
    ///   - secret: The HMAC key; never leaves this function.
    ///   - nonce: A per-request random value (a UUID string in real clients).
    ///   - requestTimeMs: Milliseconds since the Unix epoch (the backend rejects seconds).
    package static func authorizationHeader(
        method: String,
        requestor: String,
        requestURI: String,
        publicKey: String,
        secret: String,
        nonce: String,
        requestTimeMs: Int64
    ) -> String {
        let signingInput =
            "\(method.uppercased()) requestor_id=\(requestor), nonce=\(nonce), signature_method=HMAC-SHA1, "
            + "request_time=\(requestTimeMs), request_uri=\(requestURI)"
        let key = SymmetricKey(data: Data(secret.utf8))
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(signingInput.utf8), using: key)
        let signature = Data(mac).base64EncodedString()
        return "\(signingInput), public_key=\(publicKey), signature=\(signature)"
    }

    /// The header with a fresh lower-case UUID nonce and the current time in milliseconds.
    package static func authorizationHeader(
        method: String,
        requestor: String,
        requestURI: String,
        publicKey: String,
        secret: String
    ) -> String {
        authorizationHeader(
            method: method,
            requestor: requestor,
            requestURI: requestURI,
            publicKey: publicKey,
            secret: secret,
            nonce: UUID().uuidString.lowercased(),
            requestTimeMs: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        )
    }
}
