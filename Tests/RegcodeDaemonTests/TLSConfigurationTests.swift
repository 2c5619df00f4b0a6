import BackendHTTP
import Foundation
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// `tls:`, `http_version` and `simulator.tls` as an operator writes them, and the mistakes refused before anything
/// starts.
@Suite struct TLSConfigurationTests {
    @Test func everyTLSKeyIsRead() throws {
        let yaml = """
            backend: https://backend.lab.example:8443
            http_version: "1.1"
            tls:
              ca_file: /etc/regcoded/lab-ca.pem
              ca_only: true
              server_name: backend.lab.example
              client_certificate: /etc/regcoded/box.pem
              client_key: /etc/regcoded/box-key.pem
              min_version: "1.3"
              verify: false
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        try configuration.validate()
        #expect(
            configuration.tls
                == TLSClientSettings(
                    caFile: "/etc/regcoded/lab-ca.pem",
                    caOnly: true,
                    serverName: "backend.lab.example",
                    clientCertificateFile: "/etc/regcoded/box.pem",
                    clientKeyFile: "/etc/regcoded/box-key.pem",
                    minimumVersion: .tls13,
                    verify: false,
                    httpVersion: .http1
                )
        )
        #expect(configuration.backendUsesTLS)
    }

    @Test func theDefaultsAreABoxs() throws {
        let configuration = try ConfigurationFile.parse("backend: https://sp.auth.adobe.com\n", file: "x.yaml")
        #expect(configuration.tls == TLSClientSettings())
        #expect(configuration.tls.httpVersion == .auto && configuration.tls.verify && configuration.tls.minimumVersion == .tls12)
    }

    @Test(arguments: [
        ("tls:\n  ca_fil: x.pem\n", "tls.ca_fil"),
        ("http_version: \"3\"\n", "http_version"),
        ("tls:\n  min_version: \"1.1\"\n", "tls.min_version"),
        ("tls:\n  verify: maybe\n", "tls.verify"),
    ])
    func mistakesNameTheirKey(yaml: String, key: String) {
        let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.parse(yaml, file: "x.yaml") }
        #expect(error?.key == key)
    }

    @Test func halfAClientIdentityOrACAOnlyWithoutACAIsRefused() throws {
        let keyless = try ConfigurationFile.parse("tls:\n  client_certificate: box.pem\n", file: "x.yaml")
        #expect(throws: ConfigurationError.self) { try keyless.validate() }
        let rootless = try ConfigurationFile.parse("tls:\n  ca_only: true\n", file: "x.yaml")
        #expect(throws: ConfigurationError.self) { try rootless.validate() }
    }

    @Test func theClientKeyMayComeAsASystemdCredential() throws {
        let credentials = NSTemporaryDirectory() + "credentials-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: credentials) }
        try "key".write(toFile: credentials + "/tls-client-key", atomically: true, encoding: .utf8)
        let configuration = DaemonConfiguration.defaults(environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(configuration.tls.clientKeyFile == credentials + "/tls-client-key")
    }

    @Test func theEmbeddedSimulatorOnTLSKeepsItsCABesideTheDatabase() throws {
        let configuration = try ConfigurationFile.parse("database: /var/lib/regcoded/lab.sqlite\nsimulator:\n  tls: true\n", file: "x.yaml")
        #expect(configuration.simulatorTLS)
        #expect(configuration.backendUsesTLS)
        #expect(configuration.simulatorTLSDirectory == "/var/lib/regcoded/lab.pass-sim-tls")
    }

    @Test func anUnreadableCAFileStopsTheStartNamingTLS() {
        var configuration = DaemonConfiguration()
        configuration.backend = "https://127.0.0.1:8443"
        configuration.tls.caFile = "/nonexistent/ca.pem"
        let error = #expect(throws: ConfigurationError.self) { try Daemon.tlsContext(configuration, embeddedCA: nil) }
        #expect(error?.key == "tls")
        #expect(error?.reason.contains("/nonexistent/ca.pem") == true)
    }
}
