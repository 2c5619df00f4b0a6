import Crypto
import X509

/// Which identity providers pass-sim believes for partner (Apple) SSO: the public key (or certificate) of the MVPD
/// identity provider that signs the SAML assertion VideoSubscriberAccount hands the app (sso.md §3.3). regcoded's
/// TV Provider signs with its own key; the daemon wires its embedded simulator with it, and a lab hands a separately
/// started pass-sim the daemon's `x.tv-provider-idp.pem` (`--tv-provider-idp-key`, or per MVPD in `--sso-config`).
package struct SAMLTrust: Sendable {
    /// PEM (`PUBLIC KEY` or `CERTIFICATE`, P-256) trusted for every MVPD without its own.
    package var defaultKeyPEM: String?
    /// PEM trusted for one MVPD, by MVPD id.
    package var keyPEMByMVPD: [String: String] = [:]
    /// Accept an assertion whose signature is missing or does not verify (setups from before signed assertions);
    /// every such acceptance is logged.
    package var acceptUnsigned = false

    package init() {}

    /// The key trusted for `mvpd`; nil when none is configured or it does not parse (``problem`` says which).
    func publicKey(forMVPD mvpd: String) -> P256.Signing.PublicKey? {
        (keyPEMByMVPD[mvpd] ?? defaultKeyPEM).flatMap(Self.publicKey(pem:))
    }

    /// Why the configured keys cannot be used, for the start-up check; nil when they can.
    package var problem: String? {
        if let pem = defaultKeyPEM, Self.publicKey(pem: pem) == nil {
            return "the TV Provider identity provider key is not a P-256 public key or certificate in PEM"
        }
        for (mvpd, pem) in keyPEMByMVPD.sorted(by: { $0.key < $1.key }) where Self.publicKey(pem: pem) == nil {
            return "the identity provider key of MVPD \(mvpd) is not a P-256 public key or certificate in PEM"
        }
        return nil
    }

    static func publicKey(pem: String) -> P256.Signing.PublicKey? {
        if pem.contains("BEGIN CERTIFICATE") {
            guard let certificate = try? Certificate(pemEncoded: pem) else { return nil }
            return P256.Signing.PublicKey(certificate.publicKey)
        }
        return try? P256.Signing.PublicKey(pemRepresentation: pem)
    }
}
