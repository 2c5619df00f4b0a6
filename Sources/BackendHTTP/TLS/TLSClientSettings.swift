/// How a client speaks TLS to an `https://` origin: whom it trusts, the name it expects, the certificate it shows and
/// the HTTP versions it offers by ALPN.
///
/// The defaults are what a living-room box's URLSession does: the system's roots, the origin's host as the name,
/// TLS 1.2 or later, HTTP/2 when the server offers it.
package struct TLSClientSettings: Sendable, Equatable {
    /// The lowest protocol version the client accepts.
    package enum MinimumVersion: String, Sendable, CaseIterable {
        case tls12 = "1.2"
        case tls13 = "1.3"
    }

    /// PEM bundle of certificate authorities trusted besides the system's roots (alone with ``caOnly``).
    package var caFile: String?
    /// Trusts only ``caFile``, not the system's roots.
    package var caOnly: Bool
    /// The name sent by SNI and checked against the certificate; default: the origin's host.
    package var serverName: String?
    /// PEM certificate (chain) shown when the server asks for one: mutual TLS.
    package var clientCertificateFile: String?
    /// PEM private key of ``clientCertificateFile``.
    package var clientKeyFile: String?
    package var minimumVersion: MinimumVersion
    /// false: any certificate is accepted (a lab shortcut; the daemon warns about it wherever it reports status).
    package var verify: Bool
    /// Which HTTP versions are offered by ALPN.
    package var httpVersion: HTTPVersionPreference

    package init(
        caFile: String? = nil,
        caOnly: Bool = false,
        serverName: String? = nil,
        clientCertificateFile: String? = nil,
        clientKeyFile: String? = nil,
        minimumVersion: MinimumVersion = .tls12,
        verify: Bool = true,
        httpVersion: HTTPVersionPreference = .auto
    ) {
        self.caFile = caFile
        self.caOnly = caOnly
        self.serverName = serverName
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
        self.minimumVersion = minimumVersion
        self.verify = verify
        self.httpVersion = httpVersion
    }
}

/// The HTTP version a TLS connection speaks.
package enum HTTPVersionPreference: String, Sendable, CaseIterable {
    /// HTTP/2 when the server offers it by ALPN, else HTTP/1.1 (what URLSession does).
    case auto
    /// HTTP/1.1 only.
    case http1 = "1.1"
    /// HTTP/2 only: a server that does not offer it fails the connection.
    case http2 = "2"

    /// The ALPN protocol names offered, most preferred first.
    var alpnProtocols: [String] {
        switch self {
        case .auto: ["h2", "http/1.1"]
        case .http1: ["http/1.1"]
        case .http2: ["h2"]
        }
    }
}

/// The HTTP version a connection ended up speaking.
package enum NegotiatedHTTPVersion: String, Sendable {
    case http1 = "http/1.1"
    case http2 = "h2"
}
