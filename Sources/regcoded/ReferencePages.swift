import ArgumentParser
import Foundation
import RegcodeDaemon

/// `regcoded --generate-reference DIR`: writes the generated pages of `docs/reference` (configuration keys, command
/// lines, control methods) from the tables the code runs on, so the pages cannot drift from it. A hidden flag, not a
/// subcommand, so the daemon's usage line stays as it was; `Tests/generate-reference.sh` runs it and also checks the
/// committed pages against a fresh run.
enum ReferencePages {
    /// What each page names as the command that writes it.
    static let generator = "sh Tests/generate-reference.sh"

    /// Writes configuration.md, command-line.md, control-methods.md and app-events.md into `directory`.
    static func write(into directory: String) throws {
        // regcodectl and pass-sim are built beside this executable.
        guard let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() else {
            throw ValidationError("cannot tell where this executable is")
        }
        let tools = ["regcoded", "regcodectl", "pass-sim"].map { executable.deletingLastPathComponent().appendingPathComponent($0).path }
        let pages = [
            ("configuration.md", ConfigurationReference.markdown(generatedBy: Self.generator)),
            ("command-line.md", try CommandLineReference.markdown(generatedBy: Self.generator, tools: tools)),
            ("control-methods.md", ControlMethodReference.markdown(generatedBy: Self.generator)),
            ("app-events.md", EventKindReference.appEvents(generatedBy: Self.generator)),
            ("oauth-events.md", EventKindReference.oauthEvents(generatedBy: Self.generator)),
            ("oauth-providers.md", OAuthProviderReference.markdown(generatedBy: Self.generator)),
        ]
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, text) in pages {
            try Data(text.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
        }
    }
}
