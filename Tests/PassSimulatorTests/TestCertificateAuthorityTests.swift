import Crypto
import Foundation
import PassSimulator
import Testing
import X509

@Suite("Test certificate authority")
struct TestCertificateAuthorityTests {
    /// Verifies `leaf` against `authority` as a TLS client would, for `hostname` or `ip` (neither: the chain and
    /// validity only, as a server checks a client certificate).
    static func validate(
        _ leaf: Certificate,
        by authority: TestCertificateAuthority,
        hostname: String? = nil,
        ip: String? = nil
    ) async -> CertificateValidationResult {
        var verifier = Verifier(rootCertificates: CertificateStore([authority.certificate])) {
            RFC5280Policy()
            if hostname != nil || ip != nil {
                ServerIdentityPolicy(serverHostname: hostname, serverIP: ip)
            }
        }
        return await verifier.validate(leaf: leaf, intermediates: CertificateStore())
    }

    static func isValid(_ result: CertificateValidationResult) -> Bool {
        if case .validCertificate = result { true } else { false }
    }

    @Test func authorityIsASelfSignedP256CA() throws {
        let authority = try TestCertificateAuthority(commonName: "lab CA")
        let certificate = authority.certificate
        #expect(certificate.subject == certificate.issuer)
        #expect(certificate.subject.description == "CN=lab CA")
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(P256.Signing.PublicKey(certificate.publicKey) != nil)
        #expect(try certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(try certificate.extensions.keyUsage?.keyCertSign == true)
    }

    @Test func serverCertificateVerifiesForItsNamesOnly() async throws {
        let authority = try TestCertificateAuthority()
        let server = try authority.issueServerCertificate(commonName: "sim", dnsNames: ["localhost", "sim.lab.test"])
        #expect(server.certificate.subject.description == "CN=sim")
        #expect(try server.certificate.extensions.extendedKeyUsage?.contains(.serverAuth) == true)
        #expect(try server.certificate.extensions.basicConstraints == .notCertificateAuthority)
        #expect(Self.isValid(await Self.validate(server.certificate, by: authority, hostname: "localhost")))
        #expect(Self.isValid(await Self.validate(server.certificate, by: authority, hostname: "sim.lab.test")))
        #expect(Self.isValid(await Self.validate(server.certificate, by: authority, ip: "127.0.0.1")))
        #expect(Self.isValid(await Self.validate(server.certificate, by: authority, ip: "::1")))
        #expect(!Self.isValid(await Self.validate(server.certificate, by: authority, hostname: "elsewhere.test")))
        #expect(!Self.isValid(await Self.validate(server.certificate, by: authority, ip: "10.0.0.1")))
        // Another CA's root does not anchor it.
        #expect(!Self.isValid(await Self.validate(server.certificate, by: try TestCertificateAuthority(), hostname: "localhost")))
    }

    @Test func clientCertificateIsForClientAuthentication() async throws {
        let authority = try TestCertificateAuthority()
        let client = try authority.issueClientCertificate(commonName: "lab-device-7")
        #expect(client.certificate.subject.description == "CN=lab-device-7")
        let usages = try #require(try client.certificate.extensions.extendedKeyUsage)
        #expect(usages.contains(.clientAuth))
        #expect(!usages.contains(.serverAuth))
        #expect(Self.isValid(await Self.validate(client.certificate, by: authority)))
    }

    @Test func expiredCertificateIsExpired() async throws {
        let authority = try TestCertificateAuthority()
        let now = Date()
        let expired = try authority.issueServerCertificate(
            notValidBefore: now.addingTimeInterval(-2 * 86_400),
            notValidAfter: now.addingTimeInterval(-86_400)
        )
        #expect(expired.certificate.notValidAfter < now)
        #expect(!Self.isValid(await Self.validate(expired.certificate, by: authority, hostname: "localhost")))
    }

    @Test func pemRoundTrips() throws {
        let authority = try TestCertificateAuthority()
        let reread = try TestCertificateAuthority(certificatePEM: try authority.certificatePEM, privateKeyPEM: try authority.privateKeyPEM)
        #expect(reread.certificate == authority.certificate)
        let server = try reread.issueServerCertificate()
        #expect(try Certificate(pemEncoded: try server.certificatePEM) == server.certificate)
        let key = try Certificate.PrivateKey(pemEncoded: try server.privateKeyPEM)
        #expect(key.publicKey == server.certificate.publicKey)
        #expect(authority.certificate.publicKey.isValidSignature(server.certificate.signature, for: server.certificate))

        #expect(throws: TestCertificateAuthorityError.keyDoesNotMatchCertificate) {
            try TestCertificateAuthority(certificatePEM: try authority.certificatePEM, privateKeyPEM: try server.privateKeyPEM)
        }
        #expect(throws: TestCertificateAuthorityError.notACertificateAuthority) {
            try TestCertificateAuthority(certificatePEM: try server.certificatePEM, privateKeyPEM: try server.privateKeyPEM)
        }
        #expect(throws: TestCertificateAuthorityError.invalidIPAddress("localhost")) {
            try authority.issueServerCertificate(ipAddresses: ["localhost"])
        }
    }
}

@Suite("Test certificate directory")
struct TestCertificateDirectoryTests {
    static func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("tls-dir-\(UUID().uuidString)").path
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func writesTheFourFilesWithPrivateKeys() async throws {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = try TestCertificateDirectory.prepare(path, serverNames: ["localhost", "127.0.0.1", "::1", "sim.lab.test"])
        #expect(directory.createdAuthority)
        #expect(directory.issuedCertificate)
        #expect(try Self.mode(directory.caPrivateKeyPath) == 0o600)
        #expect(try Self.mode(directory.privateKeyPath) == 0o600)
        #expect(try Self.mode(directory.caCertificatePath) == 0o644)
        #expect(try Self.mode(directory.certificatePath) == 0o644)

        let authority = try TestCertificateAuthority(
            certificatePEM: try Self.text(directory.caCertificatePath),
            privateKeyPEM: try Self.text(directory.caPrivateKeyPath)
        )
        let server = try Certificate(pemEncoded: try Self.text(directory.certificatePath))
        for host in ["localhost", "sim.lab.test"] {
            #expect(TestCertificateAuthorityTests.isValid(await TestCertificateAuthorityTests.validate(server, by: authority, hostname: host)))
        }
        for ip in ["127.0.0.1", "::1"] {
            #expect(TestCertificateAuthorityTests.isValid(await TestCertificateAuthorityTests.validate(server, by: authority, ip: ip)))
        }
    }

    @Test func reusesTheCAAndReissuesOnlyWhatNoLongerFits() throws {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let names = ["localhost", "127.0.0.1"]
        let first = try TestCertificateDirectory.prepare(path, serverNames: names)
        let ca = try Self.text(first.caCertificatePath)
        let leaf = try Self.text(first.certificatePath)

        // Same names: nothing changes.
        let again = try TestCertificateDirectory.prepare(path, serverNames: names)
        #expect(!again.createdAuthority && !again.issuedCertificate)
        #expect(try Self.text(again.caCertificatePath) == ca)
        #expect(try Self.text(again.certificatePath) == leaf)

        // A name the certificate does not cover: same CA, new certificate.
        let widened = try TestCertificateDirectory.prepare(path, serverNames: names + ["10.1.2.3"])
        #expect(!widened.createdAuthority && widened.issuedCertificate)
        #expect(try Self.text(widened.caCertificatePath) == ca)
        let widenedLeaf = try Self.text(widened.certificatePath)
        #expect(widenedLeaf != leaf)

        // A certificate expiring within a day is replaced.
        let authority = try TestCertificateAuthority(certificatePEM: ca, privateKeyPEM: try Self.text(first.caPrivateKeyPath))
        let expiring = try authority.issueServerCertificate(
            dnsNames: ["localhost"],
            ipAddresses: ["127.0.0.1"],
            notValidAfter: Date().addingTimeInterval(3600)
        )
        try Data(try expiring.certificatePEM.utf8).write(to: URL(fileURLWithPath: first.certificatePath))
        try Data(try expiring.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: first.privateKeyPath))
        let renewed = try TestCertificateDirectory.prepare(path, serverNames: names)
        #expect(!renewed.createdAuthority && renewed.issuedCertificate)
        let renewedLeaf = try Certificate(pemEncoded: try Self.text(renewed.certificatePath))
        #expect(renewedLeaf.notValidAfter > Date().addingTimeInterval(300 * 86_400))
        #expect(try Self.text(renewed.caCertificatePath) == ca)
    }

    @Test func refusesHalfACA() throws {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = try TestCertificateDirectory.prepare(path, serverNames: ["localhost"])
        try FileManager.default.removeItem(atPath: directory.caPrivateKeyPath)
        #expect(throws: TestCertificateDirectoryError.self) {
            try TestCertificateDirectory.prepare(path, serverNames: ["localhost"])
        }
        // The CA clients trust is left alone.
        #expect(FileManager.default.fileExists(atPath: directory.caCertificatePath))
    }
}
