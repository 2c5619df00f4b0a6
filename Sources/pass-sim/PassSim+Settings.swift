import ArgumentParser
import Hummingbird
import Logging
import PassSimulator

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The flags turned into the simulator's settings: checks across flags, statements, TLS and faults.
extension PassSim {
    func validate() throws {
        if self.codeTtl.value <= 0 {
            throw ValidationError("--code-ttl must be greater than 0 seconds.")
        }
        if let retryAfter, retryAfter < 0 {
            throw ValidationError("--retry-after must not be negative.")
        }
        if let latencySpikeMs, latencySpikeMs < 0 {
            throw ValidationError("--latency-spike must not be negative.")
        }
        if (self.tlsCert == nil) != (self.tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together.")
        }
        if self.tlsSelfSigned != nil, self.tlsCert != nil {
            throw ValidationError("--tls-self-signed makes its own certificate; use it or --tls-cert/--tls-key, not both.")
        }
        if self.tlsCert == nil, self.tlsSelfSigned == nil {
            if self.tlsClientCa != nil {
                throw ValidationError("--tls-client-ca needs HTTPS: add --tls-cert/--tls-key or --tls-self-signed.")
            }
            if self.noHttp2 {
                throw ValidationError("--no-http2 needs HTTPS (plain HTTP is HTTP/1.1 only): add --tls-cert/--tls-key or --tls-self-signed.")
            }
        }
    }

    /// The statement key (from --statement-key, else beside --state, else for this run) and whether unsigned
    /// statements are accepted, both said in the log.
    func configureStatements(_ configuration: inout SimulatorConfiguration, logger: Logger) throws {
        configuration.acceptUnsignedStatements = self.acceptUnsignedStatements
        if let path = self.statementKey ?? self.state.map(SoftwareStatementKey.path(besideState:)) {
            do {
                let (key, created) = try SoftwareStatementKey.loadOrCreate(path: path)
                configuration.statementKey = key
                logger.info("software statement key", metadata: ["sim.statement_key": .string(path), "sim.statement_key_created": "\(created)"])
            } catch {
                writeError("pass-sim: \(error.description)")
                throw ExitCode.failure
            }
        } else {
            logger.info(
                "software statement key generated for this run only; statements come from POST /_sim/statements (--statement-key keeps one)"
            )
        }
        if self.acceptUnsignedStatements || self.lenient {
            logger.warning(
                "software statements are accepted unsigned: only their structure and an approved software_id are checked",
                metadata: ["sim.accept_unsigned_statements": "true"]
            )
        }
    }

    /// The HTTPS settings of the TLS flags (with --tls-self-signed, after preparing its directory), `nil` without them.
    func tlsSettings(logger: Logger) throws -> SimulatorTLS? {
        var tls: SimulatorTLS
        if let directory = self.tlsSelfSigned {
            let host = self.listen.host
            var names = ["localhost", "127.0.0.1", "::1"]
            if host != "0.0.0.0", host != "::", !names.contains(host) { names.append(host) }
            let prepared: TestCertificateDirectory
            do {
                prepared = try TestCertificateDirectory.prepare(directory, serverNames: names)
            } catch {
                writeError("pass-sim: --tls-self-signed: \(error.description)")
                throw ExitCode.failure
            }
            let caPath =
                prepared.caCertificatePath.hasPrefix("/")
                ? prepared.caCertificatePath : FileManager.default.currentDirectoryPath + "/" + prepared.caCertificatePath
            logger.info(
                "lab TLS directory ready",
                metadata: [
                    "sim.tls.ca": .string(caPath), "sim.tls.ca_created": .stringConvertible(prepared.createdAuthority),
                    "sim.tls.certificate_issued": .stringConvertible(prepared.issuedCertificate),
                    "sim.tls.names": .array(names.map { .string($0) }),
                ]
            )
            writeLine("pass-sim TLS: clients trust \(caPath) (tls.ca_file)\(prepared.createdAuthority ? "; this CA is new" : "")")
            tls = SimulatorTLS(certificateChainPath: prepared.certificatePath, privateKeyPath: prepared.privateKeyPath)
        } else if let certificate = self.tlsCert, let key = self.tlsKey {
            tls = SimulatorTLS(certificateChainPath: certificate, privateKeyPath: key)
        } else {
            return nil
        }
        tls.clientCAPath = self.tlsClientCa
        tls.protocols = self.noHttp2 ? .http1Only : .http2AndHTTP1
        do {
            try tls.validate()
        } catch {
            writeError("pass-sim: \(error.description)")
            throw ExitCode.failure
        }
        return tls
    }

    /// The fault settings: the `--faults` file, with the `--fault-*` flags and `--latency` overriding its default.
    func faultConfiguration() throws -> FaultConfiguration {
        var configuration = FaultConfiguration()
        if let path = self.faults {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ValidationError("--faults: cannot read \(path).")
            }
            do {
                configuration = try JSONDecoder().decode(FaultConfiguration.self, from: data)
            } catch {
                throw ValidationError("--faults: \(path) is not a fault configuration (\(error)).")
            }
        }
        var defaults = configuration.defaults
        if let value = self.fault5xx?.value { defaults.error5xx = value }
        if let value = self.fault429?.value { defaults.throttle429 = value }
        if let value = self.fault429RetryAfter?.value { defaults.throttle429RetryAfter = value }
        if let value = self.retryAfter { defaults.retryAfterSeconds = value }
        if let value = self.faultDrop?.value { defaults.drop = value }
        if let value = self.faultMalformed?.value { defaults.malformed = value }
        if let value = self.faultTokenExpiry?.value { defaults.tokenExpiry = value }
        if let value = self.faultEarlyExpiry?.value { defaults.earlyExpiry = value }
        if let latency = self.latency {
            defaults.latencyMs = latency.fixed
            defaults.latencySpreadMs = latency.spread
        }
        if let value = self.faultLatencySpike?.value { defaults.latencySpike = value }
        if let value = self.latencySpikeMs { defaults.latencySpikeMs = value }
        configuration.defaults = defaults
        do {
            try configuration.validate()
        } catch {
            throw ValidationError("Fault settings: \(error.description).")
        }
        return configuration
    }
}
