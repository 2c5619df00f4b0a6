import Crypto
import Glibc
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A certificate authority for labs and tests: a self-signed P-256 root that issues server and client
/// certificates, so the simulator can serve HTTPS (and require client certificates) without a real PKI.
///
/// Not for production: keys are kept in memory and written as unencrypted PEM.
package struct TestCertificateAuthority: Sendable {
    /// The self-signed CA certificate clients trust.
    package let certificate: Certificate
    private let privateKey: Certificate.PrivateKey

    /// Creates a CA with a new P-256 key: basicConstraints CA (critical), keyUsage keyCertSign and cRLSign.
    /// - Parameters:
    ///   - commonName: The subject (and issuer) CN.
    ///   - notValidBefore: Start of validity; by default an hour ago, so clocks a little behind still accept it.
    ///   - notValidAfter: End of validity; by default in ten years.
    package init(
        commonName: String = "pass-sim test CA",
        notValidBefore: Date = Date().addingTimeInterval(-3600),
        notValidAfter: Date = Date().addingTimeInterval(10 * 365 * 24 * 3600)
    ) throws {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let name = try DistinguishedName { CommonName(commonName) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(keyIdentifier: Self.keyIdentifier(of: key.publicKey))
        }
        self.certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: key
        )
        self.privateKey = key
    }

    /// A CA read back from its PEM certificate and PEM (PKCS#8, SEC1 or PKCS#1) private key.
    /// - Throws: ``TestCertificateAuthorityError/keyDoesNotMatchCertificate`` when the key is not the certificate's,
    ///   ``TestCertificateAuthorityError/notACertificateAuthority`` when the certificate may not sign certificates,
    ///   or the PEM decoding error.
    package init(certificatePEM: String, privateKeyPEM: String) throws {
        let certificate = try Certificate(pemEncoded: certificatePEM)
        let key = try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
        guard certificate.publicKey == key.publicKey else {
            throw TestCertificateAuthorityError.keyDoesNotMatchCertificate
        }
        guard let constraints = try certificate.extensions.basicConstraints, case .isCertificateAuthority = constraints else {
            throw TestCertificateAuthorityError.notACertificateAuthority
        }
        self.certificate = certificate
        self.privateKey = key
    }

    /// The CA certificate as PEM, for clients' trust stores (`curl --cacert`, `tls.ca_file`).
    package var certificatePEM: String {
        get throws { try self.certificate.serializeAsPEM().pemString }
    }

    /// The CA private key as PEM.
    package var privateKeyPEM: String {
        get throws { try self.privateKey.serializeAsPEM().pemString }
    }

    /// Issues a server certificate (EKU serverAuth, keyUsage digitalSignature) for the given names.
    /// - Parameters:
    ///   - commonName: The subject CN (clients match the SANs, not this).
    ///   - dnsNames: DNS subject alternative names, e.g. `localhost`.
    ///   - ipAddresses: IPv4 or IPv6 literals, e.g. `127.0.0.1`, `::1`.
    ///   - notValidBefore: Start of validity; by default an hour ago.
    ///   - notValidAfter: End of validity; by default in a year. A date in the past makes an expired certificate.
    /// - Throws: ``TestCertificateAuthorityError/invalidIPAddress(_:)`` for an address that is not an IP literal.
    package func issueServerCertificate(
        commonName: String = "pass-sim",
        dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1", "::1"],
        notValidBefore: Date = Date().addingTimeInterval(-3600),
        notValidAfter: Date = Date().addingTimeInterval(365 * 24 * 3600)
    ) throws -> IssuedCertificate {
        var names = dnsNames.map { GeneralName.dnsName($0) }
        for address in ipAddresses {
            guard let bytes = IPAddressBytes.parse(address) else { throw TestCertificateAuthorityError.invalidIPAddress(address) }
            names.append(.ipAddress(ASN1OctetString(contentBytes: bytes[...])))
        }
        return try self.issue(
            commonName: commonName,
            usage: .serverAuth,
            alternativeNames: names,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter
        )
    }

    /// Issues a client certificate (EKU clientAuth, keyUsage digitalSignature) for mutual TLS.
    /// - Parameters:
    ///   - commonName: The subject CN, e.g. a device or lab name.
    ///   - notValidBefore: Start of validity; by default an hour ago.
    ///   - notValidAfter: End of validity; by default in a year. A date in the past makes an expired certificate.
    package func issueClientCertificate(
        commonName: String = "pass-sim client",
        notValidBefore: Date = Date().addingTimeInterval(-3600),
        notValidAfter: Date = Date().addingTimeInterval(365 * 24 * 3600)
    ) throws -> IssuedCertificate {
        try self.issue(
            commonName: commonName,
            usage: .clientAuth,
            alternativeNames: [],
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter
        )
    }

    private func issue(
        commonName: String,
        usage: ExtendedKeyUsage.Usage,
        alternativeNames: [GeneralName],
        notValidBefore: Date,
        notValidAfter: Date
    ) throws -> IssuedCertificate {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        // A CA read from files may identify its key another way; the leaf must name it as the CA does.
        let authorityKeyIdentifier =
            try self.certificate.extensions.subjectKeyIdentifier?.keyIdentifier ?? Self.keyIdentifier(of: self.certificate.publicKey)
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([usage])
            SubjectKeyIdentifier(keyIdentifier: Self.keyIdentifier(of: key.publicKey))
            AuthorityKeyIdentifier(keyIdentifier: authorityKeyIdentifier)
            if !alternativeNames.isEmpty {
                SubjectAlternativeNames(alternativeNames)
            }
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter,
            issuer: self.certificate.subject,
            subject: try DistinguishedName { CommonName(commonName) },
            extensions: extensions,
            issuerPrivateKey: self.privateKey
        )
        return IssuedCertificate(certificate: certificate, privateKey: key)
    }

    /// SHA-1 of the public key info (RFC 5280 §4.2.1.2 allows any unique value); lets verifiers pick the issuer by key.
    private static func keyIdentifier(of key: Certificate.PublicKey) -> ArraySlice<UInt8> {
        ArraySlice(Insecure.SHA1.hash(data: key.subjectPublicKeyInfoBytes))
    }
}

/// A certificate issued by a ``TestCertificateAuthority`` and its (P-256) private key.
package struct IssuedCertificate: Sendable {
    /// The certificate.
    package let certificate: Certificate
    /// The certificate's private key.
    package let privateKey: Certificate.PrivateKey

    /// The certificate as PEM.
    package var certificatePEM: String {
        get throws { try self.certificate.serializeAsPEM().pemString }
    }

    /// The private key as PEM.
    package var privateKeyPEM: String {
        get throws { try self.privateKey.serializeAsPEM().pemString }
    }
}

/// Why a ``TestCertificateAuthority`` could not be read or could not issue.
package enum TestCertificateAuthorityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The private key is not the one of the CA certificate.
    case keyDoesNotMatchCertificate
    /// The certificate has no basicConstraints CA flag.
    case notACertificateAuthority
    /// A subject alternative name meant as an IP address is not an IPv4 or IPv6 literal.
    case invalidIPAddress(String)

    package var description: String {
        switch self {
        case .keyDoesNotMatchCertificate: "the private key does not belong to the CA certificate"
        case .notACertificateAuthority: "the certificate is not a certificate authority (no basicConstraints CA)"
        case .invalidIPAddress(let address): "\(address) is not an IP address"
        }
    }
}

/// The network-order bytes of an IP literal, as an iPAddress subject alternative name holds them.
enum IPAddressBytes {
    /// 4 bytes for IPv4, 16 for IPv6 (brackets allowed), `nil` for anything else.
    static func parse(_ text: String) -> [UInt8]? {
        var literal = Substring(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
