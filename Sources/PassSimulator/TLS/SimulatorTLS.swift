import NIOSSL

/// HTTPS settings of the simulator: where its certificate and key are, whether clients must present a certificate
/// (mutual TLS), and which HTTP versions it offers by ALPN.
package struct SimulatorTLS: Sendable, Equatable {
    /// The HTTP versions offered in the TLS handshake (ALPN).
    package enum Protocols: String, Sendable, CaseIterable {
        /// `h2` and `http/1.1`; a client without ALPN gets HTTP/1.1.
        case http2AndHTTP1
        /// `http/1.1` only.
        case http1Only
    }

    /// PEM file with the server certificate, then any intermediates.
    package var certificateChainPath: String
    /// PEM file with the server certificate's private key.
    package var privateKeyPath: String
    /// PEM file of the CA certificates client certificates must chain to; when set, a client certificate is
    /// required and verified (mutual TLS), and a handshake without one is refused.
    package var clientCAPath: String?
    /// The HTTP versions offered by ALPN.
    package var protocols: Protocols

    /// Settings serving the certificate chain and key of these PEM files.
    package init(
        certificateChainPath: String,
        privateKeyPath: String,
        clientCAPath: String? = nil,
        protocols: Protocols = .http2AndHTTP1
    ) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.clientCAPath = clientCAPath
        self.protocols = protocols
    }

    /// Reads the files and builds a TLS context, so a bad path, PEM or key reports before the server starts.
    /// - Throws: ``SimulatorTLSError``.
    package func validate() throws(SimulatorTLSError) {
        _ = try self.serverConfiguration()
    }

    /// The server TLS configuration: the chain and key, TLS 1.2 at least, and the client CAs when set. The ALPN list
    /// is left to the channel (Hummingbird's HTTP/2 channel sets `h2` and `http/1.1` itself).
    ///
    /// Builds a TLS context from it once, which is where a key that is not the certificate's shows: the error is
    /// then a ``SimulatorTLSError`` naming the files rather than a bare one from the TLS library.
    func serverConfiguration() throws(SimulatorTLSError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(self.certificateChainPath)
        } catch {
            throw .cannotLoad(what: "certificate chain", path: self.certificateChainPath, reason: String(describing: error))
        }
        guard !chain.isEmpty else {
            throw .cannotLoad(what: "certificate chain", path: self.certificateChainPath, reason: "no certificate in the file")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: self.privateKeyPath, format: .pem)
        } catch {
            throw .cannotLoad(what: "private key", path: self.privateKeyPath, reason: String(describing: error))
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = .tlsv12
        if let clientCAPath = self.clientCAPath {
            let authorities: [NIOSSLCertificate]
            do {
                authorities = try NIOSSLCertificate.fromPEMFile(clientCAPath)
            } catch {
                throw .cannotLoad(what: "client CA", path: clientCAPath, reason: String(describing: error))
            }
            guard !authorities.isEmpty else {
                throw .cannotLoad(what: "client CA", path: clientCAPath, reason: "no certificate in the file")
            }
            // A server has no host name to check in a client certificate; the chain, validity and purpose are checked.
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(authorities)
            // Tells clients which CAs are accepted, so one holding several certificates picks the right one.
            configuration.sendCANameList = true
        }
        if self.protocols == .http1Only {
            configuration.applicationProtocols = ["http/1.1"]
        }
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .unusable(
                reason: "\(String(describing: error)) (certificate \(self.certificateChainPath), key \(self.privateKeyPath))"
            )
        }
        return configuration
    }
}

/// Why the TLS settings cannot be used.
package enum SimulatorTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A PEM file could not be read or parsed.
    case cannotLoad(what: String, path: String, reason: String)
    /// The files load but do not make a TLS context (for example, the key is not the certificate's).
    case unusable(reason: String)

    package var description: String {
        switch self {
        case .cannotLoad(let what, let path, let reason): "cannot load the \(what) \(path): \(reason)"
        case .unusable(let reason): "the TLS settings cannot be used: \(reason)"
        }
    }
}
