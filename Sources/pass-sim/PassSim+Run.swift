import ArgumentParser
import Glibc
import Hummingbird
import Logging
import PassSimulator
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PassSim {
    func run() async throws {
        LoggingSystem.bootstrap(DeferredMetadataLogHandler.standardError)
        var logger = Logger(label: "pass-sim")
        logger.logLevel = self.logLevel.level
        let configuration = try self.simulatorConfiguration(logger: logger)
        let simulator = PassSimulator(configuration: configuration, logger: logger)
        let host = self.listen.host
        let scheme = configuration.tls == nil ? "http" : "https"
        let application = simulator.makeApplication(host: host, port: self.listen.port) { port in
            let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
            let authority = shownHost.contains(":") ? "[\(shownHost)]:\(port)" : "\(shownHost):\(port)"
            writeLine("pass-sim listening; activation page: \(scheme)://\(authority)/activate; OAuth device page: \(scheme)://\(authority)/device")
        }
        do {
            try await simulator.loadState()
        } catch {
            writeError("pass-sim: \(error.description)")
            throw ExitCode.failure
        }
        try await application.runService()
    }

    /// Every flag and file turned into the simulator's settings; a bad one is said on stderr (exit 1) or as a
    /// validation error (exit 64).
    func simulatorConfiguration(logger: Logger) throws -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration()
        configuration.codeTTL = self.codeTtl.duration
        configuration.maxConnections = self.maxConnections.map { max(1, $0) }
        configuration.idleTimeout = self.idleTimeout.value > 0 ? self.idleTimeout.duration : nil
        configuration.readTimeout = self.readTimeout.value > 0 ? self.readTimeout.duration : nil
        configuration.autoApproveAfter = self.autoApproveAfter?.duration
        configuration.throttleEnabled = !self.noThrottle
        for key in self.signingKeys {
            configuration.signingKeys[key.publicKey] = key.secret
        }
        configuration.denyResources = Dictionary(self.denyResources.map { ($0.name, $0.details) }) { _, last in last }
        configuration.denyMVPDs = Dictionary(self.denyMVPDs.map { ($0.name, $0.details) }) { _, last in last }
        configuration.defaultCodeScript = self.script?.script
        configuration.faults = try self.faultConfiguration()
        configuration.faultSeed = self.seed
        configuration.statePath = self.state
        configuration.lenient = self.lenient
        configuration.throttleKey = self.throttleKey.key
        configuration.trustForwardedFor = self.trustForwardedFor
        if self.anyRequestor {
            configuration.serviceProviders = nil
        } else if !self.requestors.isEmpty {
            configuration.serviceProviders = Set(self.requestors)
        }
        if !self.integrations.isEmpty {
            configuration.integrations = Dictionary(self.integrations.map { ($0.requestor, $0.mvpds) }) { $0.union($1) }
        }
        for statement in self.softwareStatements {
            configuration.approvedSoftwareStatements[statement.softwareId, default: []].formUnion(statement.requestors)
        }
        try self.configureStatements(&configuration, logger: logger)

        configuration.tls = try self.tlsSettings(logger: logger)
        configuration.v2ProfileScope = self.v2ProfileScope.scope
        configuration.requirePFSForAppleSSODecisions = self.requirePfsOnDecisions
        configuration.missingProfileDecision = self.missingProfileDecisions.answer
        try self.configureSingleSignOn(&configuration, logger: logger)
        try self.configureEntitlements(&configuration)
        try self.configureOAuth(&configuration)
        return configuration
    }

    /// `--oauth-config` and `--oauth-provider` (which wins over the file's provider).
    func configureOAuth(_ configuration: inout SimulatorConfiguration) throws {
        do {
            if let path = self.oauthConfig {
                configuration.oauth = try OAuthServerSettings.load(path: path)
            }
            if let name = self.oauthProvider {
                try configuration.oauth.selectProvider(named: name)
            }
            try configuration.oauth.validate()
        } catch {
            writeError("pass-sim: OAuth: \(error.description)")
            throw ExitCode.failure
        }
    }

    /// `--sso-config`, `--tv-provider-idp-key` and `--accept-unsigned-saml`.
    func configureSingleSignOn(_ configuration: inout SimulatorConfiguration, logger: Logger) throws {
        if let path = self.ssoConfig {
            do {
                try SSOConfigurationFile.load(path: path).apply(to: &configuration)
            } catch let error as SSOConfigurationError {
                writeError("pass-sim: \(path): \(error.description)")
                throw ExitCode.failure
            } catch {
                writeError("pass-sim: cannot read \(path): \(error)")
                throw ExitCode.failure
            }
        }
        if let path = self.tvProviderIdpKey {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
                writeError("pass-sim: cannot read \(path)")
                throw ExitCode.failure
            }
            configuration.samlTrust.defaultKeyPEM = String(decoding: data, as: UTF8.self)
        }
        configuration.samlTrust.acceptUnsigned = self.acceptUnsignedSaml
        if let problem = configuration.samlTrust.problem {
            writeError("pass-sim: \(problem)")
            throw ExitCode.failure
        }
        if self.acceptUnsignedSaml {
            logger.warning("--accept-unsigned-saml: Apple SSO SAML answers are accepted without a trusted signature; Adobe would refuse them")
        }
    }

    /// `--entitlements`: TempPass, degradation, home networks and item errors, for MVPDs the simulator knows.
    func configureEntitlements(_ configuration: inout SimulatorConfiguration) throws {
        if let path = self.entitlements {
            do {
                let settings = try EntitlementSettings.load(path: path)
                settings.apply(to: &configuration)
                let unknown = settings.unknownMVPDs(known: Set(configuration.mvpds.map(\.id)))
                guard unknown.isEmpty else {
                    writeError("pass-sim: \(path): unknown MVPD \(unknown.joined(separator: ", "))")
                    throw ExitCode.failure
                }
            } catch let error as ExitCode {
                throw error
            } catch {
                writeError("pass-sim: cannot read \(path): \(error)")
                throw ExitCode.failure
            }
        }
    }
}
