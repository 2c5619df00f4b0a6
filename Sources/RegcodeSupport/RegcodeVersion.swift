/// The release every tool reports with `--version` (regcoded, regcodectl, pass-sim).
public enum RegcodeVersion {
    /// The version string, e.g. `0.2.0`.
    public static let current = "0.2.0"
}
