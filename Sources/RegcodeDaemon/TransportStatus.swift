import BackendHTTP
import DeviceEvents

/// What the daemon says about its wire to the backend, wherever it reports status (`daemon.status`, systemd's
/// `STATUS=`): certificate checks turned off, fleets whose every device fails the TLS handshake the same way, and
/// devices that share one client address under a throttling backend.
struct TransportStatus: Sendable {
    let settings: TLSClientSettings
    let usesTLS: Bool
    let liveStats: LiveStats
    /// The start-up warning for devices sharing one address (``DaemonConfiguration/sharedAddressWarning(throttle:)``).
    var sharedAddressWarning: String? = nil

    /// The warning `tls.verify: false` earns, or nil.
    var verifyWarning: String? {
        usesTLS && !settings.verify ? "TLS certificate checks are off (tls.verify: false)" : nil
    }

    /// Fleet name to the handshake failure all its devices share.
    func failingFleets() -> [String: TLSHandshakeFailure] {
        guard usesTLS else { return [:] }
        return liveStats.fleetsFailingAlike { $0.hasPrefix("tls-") }.compactMapValues(TLSHandshakeFailure.init(code:))
    }

    /// One line for `STATUS=`, or nil when all is well.
    func line() -> String? {
        let failing = failingFleets().sorted { $0.key < $1.key }.map { fleet, failure in
            "fleet \(fleet): every device fails: \(failure.description) (\(failure.fix))"
        }
        let parts = [verifyWarning, sharedAddressWarning].compactMap { $0 } + failing
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
