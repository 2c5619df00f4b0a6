import Foundation
import NIOSSL
import PassSimulator

/// Certificates for the TLS tests, from pass-sim's test certificate authority: a CA the client is told to trust,
/// server certificates (good, for another name, expired, from an unknown CA), and a client CA with a client
/// certificate for mutual TLS. Files live in a temporary directory, as an operator's would.
struct TestPKI: Sendable {
    let directory: String
    let caFile: String
    let clientCertificateFile: String
    let clientKeyFile: String
    private let authority: TestCertificateAuthority
    private let clientAuthority: TestCertificateAuthority

    init() throws {
        directory = NSTemporaryDirectory() + "keepalive-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        authority = try TestCertificateAuthority(commonName: "test CA")
        clientAuthority = try TestCertificateAuthority(commonName: "test client CA")
        caFile = directory + "/ca.pem"
        try authority.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        let client = try clientAuthority.issueClientCertificate(commonName: "box-1")
        clientCertificateFile = directory + "/client.pem"
        clientKeyFile = directory + "/client-key.pem"
        try client.certificatePEM.write(toFile: clientCertificateFile, atomically: true, encoding: .utf8)
        try client.privateKeyPEM.write(toFile: clientKeyFile, atomically: true, encoding: .utf8)
    }

    enum ServerCertificate {
        /// For `localhost` and 127.0.0.1, from the trusted CA.
        case good
        /// For `names` only.
        case named([String])
        case expired
        /// From a CA nobody trusts.
        case unknownIssuer
    }

    /// A server configuration presenting `certificate`; with `requireClientCertificate`, clients must show one
    /// issued by the client CA.
    func server(_ certificate: ServerCertificate = .good, requireClientCertificate: Bool = false) throws -> TLSConfiguration {
        let issued =
            switch certificate {
            case .good: try authority.issueServerCertificate()
            case .named(let names): try authority.issueServerCertificate(dnsNames: names, ipAddresses: [])
            case .expired:
                try authority.issueServerCertificate(
                    notValidBefore: Date().addingTimeInterval(-7200),
                    notValidAfter: Date().addingTimeInterval(-3600)
                )
            case .unknownIssuer: try TestCertificateAuthority(commonName: "stranger CA").issueServerCertificate()
            }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(issued.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(issued.privateKeyPEM.utf8), format: .pem))
        )
        if requireClientCertificate {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([
                try NIOSSLCertificate(bytes: Array(clientAuthority.certificatePEM.utf8), format: .pem)
            ])
        }
        return configuration
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
