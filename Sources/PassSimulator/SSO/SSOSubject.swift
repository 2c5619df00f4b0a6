/// Who a valid SSO header identifies: the key of the subject links (INFERRED, sso.md §2.7 gap 1).
///
/// `did` of a platform token is not part of the key, so a platform user spans that platform's devices, as Roku
/// describes.
package struct SSOSubject: Sendable, Hashable, Codable {
    /// Which header identified the subject.
    package let method: SSOMethod
    /// The token's `iss`.
    package let issuer: String
    /// The token's `sub`.
    package let subject: String
}
