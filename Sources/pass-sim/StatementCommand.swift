import ArgumentParser
import PassSimulator

/// `pass-sim statement`: a software statement signed with the key a simulator started with the same key file checks
/// statements with, as the TVE Dashboard issues one per registered application.
struct StatementCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statement",
        abstract: "Print a DCR software statement the simulator accepts (an RS256 JWT signed with its statement key).",
        usage: "pass-sim statement --software-id <id> (--statement-key <file> | --state <path>) [--redirect-uri <uri> ...]",
        discussion: """
            The key is the one the server uses: --statement-key FILE (as given to
            the server, and taken here after `statement`), or the file kept beside
            the server's --state FILE (its name without .sqlite, then
            .statement-key.pem). It is created when missing, so this may run
            before the server first starts. A client may register with the
            statement naming only a listed --redirect-uri as its redirect_uri.

            Example:
              pass-sim statement --statement-key lab/statement-key.pem \\
                --software-id regcoded-lab > lab/software-statement
            """
    )

    @Option(name: .long, help: ArgumentHelp("software_id of the registered application.", valueName: "id"))
    var softwareId: String

    @Option(
        name: .customLong("redirect-uri"),
        help: ArgumentHelp(
            "A redirect_uri clients may register with (repeatable; default adobepass://ios.app, regcoded's).",
            valueName: "uri"
        )
    )
    var redirectURIs: [String] = []

    /// The server's `--statement-key` and `--state`, given after `statement` as to the server.
    @ParentCommand var server: PassSim

    /// regcoded's default DCR `redirect_uri`.
    static let defaultRedirectURI = "adobepass://ios.app"

    func validate() throws {
        if self.softwareId.isEmpty { throw ValidationError("--software-id must not be empty.") }
        if (self.server.statementKey == nil) == (self.server.state == nil) {
            throw ValidationError("Give the server's key: --statement-key FILE or --state FILE (one of them).")
        }
    }

    func run() throws {
        let path = self.server.statementKey ?? SoftwareStatementKey.path(besideState: self.server.state ?? "")
        do {
            let (key, created) = try SoftwareStatementKey.loadOrCreate(path: path)
            if created { writeError("pass-sim: created the statement key \(path)") }
            let uris = self.redirectURIs.isEmpty ? [Self.defaultRedirectURI] : self.redirectURIs
            writeLine(try key.issue(softwareId: self.softwareId, redirectURIs: uris))
        } catch {
            writeError("pass-sim: \(error.description)")
            throw ExitCode.failure
        }
    }
}
