import Foundation
import Logging
import PassSimulator
import RegcodeTestSupport

/// A temporary directory with a lab CA and a server certificate for `localhost`, `127.0.0.1` and `::1`
/// (``TestCertificateDirectory``), and a second CA for client certificates.
struct TLSLab {
    let directory: URL
    let server: TestCertificateDirectory
    let clientAuthority: TestCertificateAuthority

    init() throws {
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-lab-\(UUID().uuidString)")
        self.server = try TestCertificateDirectory.prepare(self.directory.path, serverNames: ["localhost", "127.0.0.1", "::1"])
        self.clientAuthority = try TestCertificateAuthority(commonName: "pass-sim test client CA")
        try self.write(try self.clientAuthority.certificatePEM, to: "client-ca.pem")
    }

    /// The PEM file of the CA client certificates must chain to.
    var clientCAPath: String { self.directory.appendingPathComponent("client-ca.pem").path }

    /// A curl trusting the lab CA.
    var curl: Curl { Curl(caFile: self.server.caCertificatePath) }

    /// HTTPS settings serving the lab's server certificate.
    func tls(protocols: SimulatorTLS.Protocols = .http2AndHTTP1, mutual: Bool = false) -> SimulatorTLS {
        SimulatorTLS(
            certificateChainPath: self.server.certificatePath,
            privateKeyPath: self.server.privateKeyPath,
            clientCAPath: mutual ? self.clientCAPath : nil,
            protocols: protocols
        )
    }

    /// A simulator serving HTTPS on a manual clock (so throttle buckets never refill on their own), quiet below
    /// warnings.
    func simulator(
        protocols: SimulatorTLS.Protocols = .http2AndHTTP1,
        mutual: Bool = false,
        _ configure: (inout SimulatorConfiguration) -> Void = { _ in }
    ) -> PassSimulator {
        var configuration = Client.configuration()
        configuration.clock = .manual(ManualClock(originEpochMs: 1_750_000_000_000))
        configuration.tls = self.tls(protocols: protocols, mutual: mutual)
        configure(&configuration)
        return PassSimulator(configuration: configuration, logger: Self.quietLogger)
    }

    /// A logger that only lets warnings and errors through.
    static var quietLogger: Logger {
        var logger = Logger(label: "pass-sim-tls-test")
        logger.logLevel = .warning
        return logger
    }

    /// Writes `certificate` and its key into the lab directory and returns the two paths, for curl's `--cert`/`--key`.
    func files(of certificate: IssuedCertificate, named name: String) throws -> (certificate: String, key: String) {
        (
            try self.write(try certificate.certificatePEM, to: "\(name).pem"),
            try self.write(try certificate.privateKeyPEM, to: "\(name)-key.pem")
        )
    }

    @discardableResult
    func write(_ text: String, to name: String) throws -> String {
        let url = self.directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func remove() {
        try? FileManager.default.removeItem(at: self.directory)
    }
}
