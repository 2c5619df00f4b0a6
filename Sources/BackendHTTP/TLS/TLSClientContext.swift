import Foundation
import NIOCore
import NIOSSL
import Synchronization
import X509

/// What one process needs to open TLS connections with ``TLSClientSettings``: the SSL context (built once; it is
/// costly) and the trust store the server's chain is checked against.
///
/// The chain is checked by swift-certificates' `Verifier` instead of BoringSSL's built-in check, because BoringSSL
/// reports every refusal as `CERTIFICATE_VERIFY_FAILED`, and an operator needs to know whether the issuer, the name or
/// the dates are wrong (``TLSHandshakeFailure``).
package final class TLSClientContext: Sendable {
    package let settings: TLSClientSettings
    let sslContext: NIOSSLContext
    private let trustRoots: CertificateStore

    /// Loads the files the settings name.
    /// - Throws: ``TLSSettingsError`` naming the file that could not be used.
    package init(settings: TLSClientSettings) throws(TLSSettingsError) {
        self.settings = settings
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = settings.minimumVersion == .tls13 ? .tlsv13 : .tlsv12
        configuration.applicationProtocols = settings.httpVersion.alpnProtocols
        // Checked by `verify` below; BoringSSL's own check would only say "failed".
        configuration.certificateVerification = settings.verify ? .noHostnameVerification : .none
        var roots = settings.caOnly ? CertificateStore() : CertificateStore.systemTrustRoots
        if let caFile = settings.caFile {
            do {
                let certificates = try NIOSSLCertificate.fromPEMFile(caFile)
                guard !certificates.isEmpty else { throw TLSSettingsError.unusable(file: caFile, reason: "no certificate in it") }
                roots.append(contentsOf: try certificates.map { try Certificate(derEncoded: try $0.toDERBytes()) })
            } catch let error as TLSSettingsError {
                throw error
            } catch {
                throw .unusable(file: caFile, reason: String(describing: error))
            }
        } else if settings.caOnly {
            throw .unusable(file: "tls.ca_file", reason: "tls.ca_only needs tls.ca_file")
        }
        switch (settings.clientCertificateFile, settings.clientKeyFile) {
        case (nil, nil):
            break
        case (let certificateFile?, let keyFile?):
            do {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
            } catch {
                throw .unusable(file: certificateFile, reason: String(describing: error))
            }
            do {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
            } catch {
                throw .unusable(file: keyFile, reason: String(describing: error))
            }
        case (let file?, nil), (nil, let file?):
            throw .unusable(file: file, reason: "tls.client_certificate and tls.client_key go together")
        }
        do {
            self.sslContext = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .unusable(file: settings.caFile ?? "TLS settings", reason: String(describing: error))
        }
        self.trustRoots = roots
    }

    /// The defaults (the system's roots, HTTP/2 when offered), built once for pools given no context; nil when the
    /// system's trust store cannot be read.
    static let systemDefault: TLSClientContext? = try? TLSClientContext(settings: TLSClientSettings())

    /// The handler that makes `channel` a TLS client of `host`; a refused certificate's reason lands in `verdict`.
    func makeHandler(host: String, verdict: HandshakeVerdict) throws -> NIOSSLClientHandler {
        let name = settings.serverName ?? host
        let isAddress = (try? SocketAddress(ipAddress: name, port: 0)) != nil
        // SNI carries names only (RFC 6066 §3).
        let sni = isAddress ? nil : name
        guard settings.verify else {
            return try NIOSSLClientHandler(context: sslContext, serverHostname: sni)
        }
        let roots = trustRoots
        return try NIOSSLClientHandler(context: sslContext, serverHostname: sni) { certificates, promise in
            promise.completeWithTask {
                let failure = await Self.verify(certificates, name: name, isAddress: isAddress, roots: roots)
                guard let failure else { return .certificateVerified }
                verdict.record(failure)
                return .failed
            }
        }
    }

    /// nil when the chain is trusted and names `name`; else what is wrong with it, dates first, then the issuer, then the name.
    static func verify(_ presented: [NIOSSLCertificate], name: String, isAddress: Bool, roots: CertificateStore) async -> TLSHandshakeFailure? {
        let chain: [Certificate]
        do {
            chain = try presented.map { try Certificate(derEncoded: try $0.toDERBytes()) }
        } catch {
            return .other("the server's certificate cannot be read: \(error)")
        }
        guard let leaf = chain.first else { return .other("the server sent no certificate") }
        let now = Date()
        if leaf.notValidAfter < now { return .expired }
        if leaf.notValidBefore > now { return .notYetValid }
        let intermediates = CertificateStore(chain.dropFirst())
        var full = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isAddress ? nil : name, serverIP: isAddress ? name : nil)
        }
        if case .validCertificate = await full.validate(leaf: leaf, intermediates: intermediates) { return nil }
        var issuerOnly = Verifier(rootCertificates: roots) { RFC5280Policy() }
        if case .validCertificate = await issuerOnly.validate(leaf: leaf, intermediates: intermediates) {
            return .nameMismatch(expected: name)
        }
        return .untrustedIssuer
    }
}

/// Where a connection's certificate check leaves its reason for the pool to read once the handshake has failed.
final class HandshakeVerdict: Sendable {
    private let failure = Mutex<TLSHandshakeFailure?>(nil)

    func record(_ failure: TLSHandshakeFailure) {
        self.failure.withLock { $0 = failure }
    }

    var recorded: TLSHandshakeFailure? { failure.withLock { $0 } }
}

/// A TLS setting that could not be used.
package enum TLSSettingsError: Error, Equatable, CustomStringConvertible {
    case unusable(file: String, reason: String)

    package var description: String {
        switch self {
        case .unusable(let file, let reason): "TLS: \(file): \(reason)"
        }
    }
}
