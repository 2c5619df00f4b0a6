import RegcodeSupport

/// The version `daemon.status` and `rpc.discover` report.
public enum RegcodedVersion {
    public static let current = RegcodeVersion.current
}
