import Foundation
import RegcodeEngine
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon
@testable import regcoded

/// The embedded simulator's software statement (issued from its key, kept beside the database) and the start-up
/// warnings about REST API v1's end.
@Suite struct EmbeddedStatementTests {
    static func claims(_ statement: String) throws -> [String: Any] {
        let parts = statement.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let data = try #require(Data(base64Encoded: payload))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("embedded-statement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func theEmbeddedSimulatorsKeyIsKeptBesideTheDatabaseAndSignsEveryFleetsRedirectURI() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DaemonConfiguration()
        configuration.database = directory.appendingPathComponent("regcoded.sqlite").path
        configuration.fleets[0].identity.clientRedirectURI = "adobepass://lab.app"

        let key = try EmbeddedSimulator.statementKey(configuration)
        #expect(key.key.path == directory.appendingPathComponent("regcoded.pass-sim.statement-key.pem").path)
        let mode = try FileManager.default.attributesOfItem(atPath: try #require(key.key.path))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let statement = Daemon.embeddedStatement(key: key, configuration: configuration)
        #expect(statement != DeviceCatalog.embeddedSoftwareStatement)
        let claims = try Self.claims(statement)
        #expect(claims["software_id"] as? String == "regcoded-embedded")
        #expect(claims["redirect_uris"] as? [String] == ["adobepass://ios.app", "adobepass://lab.app"])

        // Every fleet without a statement gets it, and so does one holding the unsigned lab statement.
        let credentials = directory.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        try DeviceCatalog.embeddedSoftwareStatement.write(
            to: credentials.appendingPathComponent("software-statement"),
            atomically: true,
            encoding: .utf8
        )
        for environment in [[:], ["CREDENTIALS_DIRECTORY": credentials.path]] {
            let catalog = try DeviceCatalog.load(configuration: configuration, environment: environment, embeddedStatement: statement)
            #expect(catalog.secrets["stb"]?.softwareStatement == statement)
        }
    }

    @Test func anotherBackendHasNoKeyAndTheUnsignedPlaceholder() throws {
        var configuration = DaemonConfiguration()
        configuration.backend = "http://127.0.0.1:8080"
        let catalog = try DeviceCatalog.load(configuration: configuration, environment: [:])
        let backend = try Daemon.embeddedBackend(
            EmbeddedSimulator.factory,
            configuration: configuration,
            catalog: catalog,
            identityProvider: TVProviderIdentityProvider()
        )
        #expect(backend == nil)
        #expect(Daemon.embeddedStatement(key: nil, configuration: configuration) == DeviceCatalog.embeddedSoftwareStatement)
    }

    @Test func v1AndTheSignedHeaderAgainstARemoteBackendAreWarnedAbout() {
        var configuration = DaemonConfiguration()
        configuration.backend = "https://api.auth.adobe.com"
        #expect(configuration.legacyAPIWarnings.isEmpty)
        configuration.fleets[0].profile = .v1
        #expect(configuration.legacyAPIWarnings.count == 1)
        #expect(configuration.legacyAPIWarnings.first?.contains("2025-12-31") == true)
        #expect(configuration.legacyAPIWarnings.first?.contains("end of 2026") == true)
        configuration.fleets[0].publicKey = "samplePublicKey"
        #expect(configuration.legacyAPIWarnings.count == 2)
        #expect(configuration.legacyAPIWarnings.contains { $0.contains("legacy public key") })

        for local in [nil, "http://127.0.0.1:8080", "http://localhost:9000"] {
            configuration.backend = local
            #expect(configuration.legacyAPIWarnings.isEmpty)
        }
    }
}
