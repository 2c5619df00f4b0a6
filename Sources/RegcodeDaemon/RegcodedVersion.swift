import RegcodeSupport

/// The version `daemon.status` and `rpc.discover` report.
package enum RegcodedVersion {
    package static let current = RegcodeVersion.current
}
