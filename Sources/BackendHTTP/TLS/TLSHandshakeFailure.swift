import NIOSSL

/// Why a TLS connection could not be made, in the words an operator can act on.
package enum TLSHandshakeFailure: Sendable, Equatable, CustomStringConvertible {
    /// No chain from the server's certificate to a trusted root.
    case untrustedIssuer
    /// The certificate holds neither the expected name nor the address.
    case nameMismatch(expected: String)
    case expired
    case notYetValid
    /// No protocol version both sides accept.
    case protocolVersion
    /// The server did not finish the handshake within the connect timeout.
    case handshakeTimeout
    /// The server asked for a client certificate and refused the one shown (or that none was shown).
    case clientCertificateRefused
    /// `http_version: 2`, and the server offered no HTTP/2 by ALPN.
    case http2NotOffered
    /// Anything else the TLS library reported.
    case other(String)

    /// A stable code: the request row's `error_code` and the device's last outcome.
    package var code: String {
        switch self {
        case .untrustedIssuer: "tls-untrusted-issuer"
        case .nameMismatch: "tls-name-mismatch"
        case .expired: "tls-certificate-expired"
        case .notYetValid: "tls-certificate-not-yet-valid"
        case .protocolVersion: "tls-protocol-version"
        case .handshakeTimeout: "tls-handshake-timeout"
        case .clientCertificateRefused: "tls-client-certificate-refused"
        case .http2NotOffered: "tls-http2-not-offered"
        case .other: "tls-handshake-failed"
        }
    }

    package var description: String {
        switch self {
        case .untrustedIssuer: "TLS: the server's certificate is not issued by a trusted authority"
        case .nameMismatch(let expected): "TLS: the server's certificate is not valid for \(expected)"
        case .expired: "TLS: the server's certificate has expired"
        case .notYetValid: "TLS: the server's certificate is not valid yet"
        case .protocolVersion: "TLS: no protocol version both sides accept"
        case .handshakeTimeout: "TLS: the handshake did not finish in time"
        case .clientCertificateRefused: "TLS: the server refused the client certificate (or wanted one)"
        case .http2NotOffered: "TLS: the server does not offer HTTP/2"
        case .other(let reason): "TLS: handshake failed: \(reason)"
        }
    }

    /// What to change, named by its configuration key.
    package var fix: String {
        switch self {
        case .untrustedIssuer: "set tls.ca_file to the certificate authority that issued the backend's certificate"
        case .nameMismatch: "set tls.server_name to a name the certificate holds, or use that name in the backend URL"
        case .expired, .notYetValid: "renew the backend's certificate, or check this host's clock"
        case .protocolVersion: "check tls.min_version against what the backend accepts"
        case .handshakeTimeout: "check that the backend speaks TLS on this port"
        case .clientCertificateRefused: "set tls.client_certificate and tls.client_key to a certificate the backend trusts"
        case .http2NotOffered: "set http_version to auto or 1.1"
        case .other: "check the backend's TLS settings"
        }
    }

    /// A representative failure for a stored ``code`` (the name of a mismatch is not kept in the code).
    package init?(code: String) {
        let all: [TLSHandshakeFailure] = [
            .untrustedIssuer, .nameMismatch(expected: "the name asked for"), .expired, .notYetValid, .protocolVersion,
            .handshakeTimeout, .clientCertificateRefused, .http2NotOffered, .other("see the log"),
        ]
        guard let match = all.first(where: { $0.code == code }) else { return nil }
        self = match
    }

    /// The failure behind `error` when it came from the TLS layer; nil for any other error.
    static func classify(_ error: any Error) -> TLSHandshakeFailure? {
        switch error {
        case let failure as TLSHandshakeFailure:
            return failure
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let underlying): return classify(boringSSL: underlying)
            case .uncleanShutdown: return nil
            default: return .other(String(describing: error))
            }
        case let error as BoringSSLError:
            return classify(boringSSL: error)
        default:
            return nil
        }
    }

    private static func classify(boringSSL error: BoringSSLError) -> TLSHandshakeFailure {
        let text = String(describing: error).uppercased()
        if text.contains("PROTOCOL_VERSION") || text.contains("UNSUPPORTED_PROTOCOL") || text.contains("WRONG_VERSION_NUMBER") {
            return .protocolVersion
        }
        if text.contains("CERTIFICATE_REQUIRED") || text.contains("ALERT_BAD_CERTIFICATE") || text.contains("ALERT_UNKNOWN_CA")
            || text.contains("ALERT_CERTIFICATE_UNKNOWN")
        {
            return .clientCertificateRefused
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return .untrustedIssuer }
        return .other(String(describing: error))
    }
}

extension TLSHandshakeFailure: Error {}
