import Foundation

/// Why the `sqlite3` shell failed.
package struct SQLiteShellError: Error, CustomStringConvertible {
    package var status: Int32
    package var stderr: String
    package var description: String { "sqlite3 exited with \(status): \(stderr)" }
}

/// The `sqlite3` command-line shell: tests read and prepare databases with it, independently of
/// the code under test.
package enum SQLiteShell {
    /// Runs `sql` (or the script `input`) on `database`; returns standard output without the
    /// trailing newline. Throws when the shell fails.
    @discardableResult
    package static func run(_ database: String, _ sql: String? = nil, input: URL? = nil) throws -> String {
        let result = try Command.run("/usr/bin/sqlite3", [database] + (sql.map { [$0] } ?? []), input: input)
        guard result.status == 0 else { throw SQLiteShellError(status: result.status, stderr: result.stderr) }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
