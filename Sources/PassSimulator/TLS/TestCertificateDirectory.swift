import Glibc
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A directory holding a lab CA and a server certificate it issued: `ca.pem`, `ca-key.pem`, `cert.pem`, `key.pem`
/// (keys with mode 0600), as `pass-sim --tls-self-signed DIR` uses it.
///
/// The CA is kept from run to run, so clients configured once with `ca.pem` keep trusting the simulator; only the
/// server certificate is re-issued when it no longer fits.
package struct TestCertificateDirectory: Sendable {
    /// The directory.
    package let path: String
    /// Whether ``prepare(_:serverNames:now:)`` made a new CA (none was there, or it was about to expire).
    package let createdAuthority: Bool
    /// Whether ``prepare(_:serverNames:now:)`` issued a new server certificate.
    package let issuedCertificate: Bool

    /// The CA certificate, for clients' trust stores.
    package var caCertificatePath: String { self.path + "/ca.pem" }
    /// The CA private key.
    package var caPrivateKeyPath: String { self.path + "/ca-key.pem" }
    /// The server certificate.
    package var certificatePath: String { self.path + "/cert.pem" }
    /// The server private key.
    package var privateKeyPath: String { self.path + "/key.pem" }

    /// How long before its end a certificate is replaced, so a server started now does not expire under its clients.
    static let renewalMargin: TimeInterval = 24 * 3600

    /// Makes sure `path` holds a CA and a server certificate it issued for every name of `serverNames` (DNS names
    /// or IP literals), valid for more than a day after `now`.
    ///
    /// Creates the directory (mode 0700) and a CA when missing; reuses the CA that is there, replacing it only when
    /// it expires within a day. Re-issues the server certificate when it is missing, does not cover a name, was not
    /// issued by that CA, does not match `key.pem`, or expires within a day.
    /// - Throws: ``TestCertificateDirectoryError``.
    package static func prepare(
        _ path: String,
        serverNames: [String],
        now: Date = Date()
    ) throws(TestCertificateDirectoryError) -> TestCertificateDirectory {
        var directory = TestCertificateDirectory(path: path, createdAuthority: false, issuedCertificate: false)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotWrite(path: path, reason: String(describing: error))
        }

        let authority: TestCertificateAuthority
        if let existing = try directory.existingAuthority(), existing.certificate.notValidAfter > now.addingTimeInterval(Self.renewalMargin) {
            authority = existing
        } else {
            do {
                authority = try TestCertificateAuthority(notValidBefore: now.addingTimeInterval(-3600))
                try Self.writeFile(authority.privateKeyPEM, to: directory.caPrivateKeyPath, mode: 0o600)
                try Self.writeFile(authority.certificatePEM, to: directory.caCertificatePath, mode: 0o644)
            } catch {
                throw Self.cannotWrite(directory.caCertificatePath, error)
            }
            directory = TestCertificateDirectory(path: path, createdAuthority: true, issuedCertificate: false)
        }

        if !directory.createdAuthority, directory.serverCertificateFits(authority: authority, serverNames: serverNames, now: now) {
            return directory
        }
        do {
            let server = try authority.issueServerCertificate(
                commonName: serverNames.first ?? "pass-sim",
                dnsNames: serverNames.filter { IPAddressBytes.parse($0) == nil },
                ipAddresses: serverNames.filter { IPAddressBytes.parse($0) != nil },
                notValidBefore: now.addingTimeInterval(-3600),
                notValidAfter: now.addingTimeInterval(365 * 24 * 3600)
            )
            try Self.writeFile(server.privateKeyPEM, to: directory.privateKeyPath, mode: 0o600)
            try Self.writeFile(server.certificatePEM, to: directory.certificatePath, mode: 0o644)
        } catch let error as TestCertificateDirectoryError {
            throw error
        } catch {
            throw Self.cannotWrite(directory.certificatePath, error)
        }
        return TestCertificateDirectory(path: path, createdAuthority: directory.createdAuthority, issuedCertificate: true)
    }

    /// The CA in the directory, `nil` when there is none; half a CA (one file of two) or an unreadable one is an
    /// error rather than a reason to replace what clients may trust.
    private func existingAuthority() throws(TestCertificateDirectoryError) -> TestCertificateAuthority? {
        let certificate = Self.read(self.caCertificatePath)
        let key = Self.read(self.caPrivateKeyPath)
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (let certificate?, let key?):
            do {
                return try TestCertificateAuthority(certificatePEM: certificate, privateKeyPEM: key)
            } catch {
                throw .unusableAuthority(path: self.path, reason: String(describing: error))
            }
        default:
            throw .unusableAuthority(path: self.path, reason: "ca.pem and ca-key.pem must both be present or both be missing")
        }
    }

    private func serverCertificateFits(authority: TestCertificateAuthority, serverNames: [String], now: Date) -> Bool {
        guard let certificatePEM = Self.read(self.certificatePath), let keyPEM = Self.read(self.privateKeyPath),
            let certificate = try? Certificate(pemEncoded: certificatePEM),
            let key = try? Certificate.PrivateKey(pemEncoded: keyPEM),
            certificate.publicKey == key.publicKey,
            certificate.issuer == authority.certificate.subject,
            authority.certificate.publicKey.isValidSignature(certificate.signature, for: certificate),
            certificate.notValidBefore <= now,
            certificate.notValidAfter > now.addingTimeInterval(Self.renewalMargin),
            let alternativeNames = try? certificate.extensions.subjectAlternativeNames
        else { return false }
        return serverNames.allSatisfy { name in
            if let address = IPAddressBytes.parse(name) {
                return alternativeNames.contains { if case .ipAddress(let bytes) = $0 { Array(bytes.bytes) == address } else { false } }
            }
            return alternativeNames.contains { if case .dnsName(let dns) = $0 { dns.lowercased() == name.lowercased() } else { false } }
        }
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func cannotWrite(_ path: String, _ error: any Error) -> TestCertificateDirectoryError {
        (error as? TestCertificateDirectoryError) ?? .cannotWrite(path: path, reason: String(describing: error))
    }

    /// Writes through a temporary file renamed into place, so a reader never sees half a PEM file; `mode` is set
    /// explicitly because the umask could otherwise widen or narrow it.
    private static func writeFile(_ text: String, to path: String, mode: mode_t) throws(TestCertificateDirectoryError) {
        let temporary = path + ".tmp"
        _ = unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        _ = fchmod(fd, mode)
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            guard written > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                _ = unlink(temporary)
                throw .cannotWrite(path: path, reason: reason)
            }
            offset += written
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = unlink(temporary)
            throw .cannotWrite(path: path, reason: reason)
        }
    }
}

/// Why a ``TestCertificateDirectory`` could not be prepared.
package enum TestCertificateDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory or a file in it could not be written.
    case cannotWrite(path: String, reason: String)
    /// The CA in the directory cannot be used (half missing, unreadable, or its key does not match).
    case unusableAuthority(path: String, reason: String)

    package var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .unusableAuthority(let path, let reason): "the CA in \(path) cannot be used: \(reason)"
        }
    }
}
