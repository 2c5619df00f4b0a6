/// The release every tool reports with `--version` (regcoded, regcodectl, pass-sim).
package enum RegcodeVersion {
    /// The version string, e.g. `0.2.0`.
    package static let current = "0.2.0"
}
