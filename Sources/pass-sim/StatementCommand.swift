import ArgumentParser
import PassSimulator

/// `pass-sim statement`: a software statement signed with the key a simulator started with the same key file checks
/// statements with, as the TVE Dashboard issues one per registered application.
struct StatementCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statement",
        abstract: "Print a DCR software statement the simulator accepts (an RS256 JWT signed with its statement key).",
        discussion: """
            The key is the one the server uses: --statement-key FILE (as given to
            the server), or the file kept beside the server's --state FILE
            (FILE without .sqlite, then .statement-key.pem). It is created when missing, so this may run
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

    @Option(name: .long, help: ArgumentHelp("The statement key file, as given to the server's --statement-key.", valueName: "file"))
    var statementKey: String?

    @Option(name: .long, help: ArgumentHelp("The server's --state file: use the statement key kept beside it.", valueName: "path"))
    var state: String?

    /// regcoded's default DCR `redirect_uri`.
    static let defaultRedirectURI = "adobepass://ios.app"

    func validate() throws {
        if self.softwareId.isEmpty { throw ValidationError("--software-id must not be empty.") }
        if (self.statementKey == nil) == (self.state == nil) {
            throw ValidationError("Give the server's key: --statement-key FILE or --state FILE (one of them).")
        }
    }

    func run() throws {
        let path = self.statementKey ?? SoftwareStatementKey.path(besideState: self.state ?? "")
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
