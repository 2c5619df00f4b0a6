import Foundation

/// What a finished command printed and how it exited.
package struct CommandResult: Sendable {
    package var status: Int32
    package var stdout: String
    package var stderr: String
}

/// Runs programs to completion for tests: built executables, `sqlite3`, systemd's tools.
package enum Command {
    /// Runs `executable` with `arguments`, standard input from `input` (else empty), and waits.
    ///
    /// Output goes to temporary files rather than pipes, so a program that writes much to both
    /// streams cannot block on a full pipe while the test waits for it.
    package static func run(_ executable: URL, _ arguments: [String], input: URL? = nil) throws -> CommandResult {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = try input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: try String(contentsOf: outURL, encoding: .utf8),
            stderr: try String(contentsOf: errURL, encoding: .utf8)
        )
    }

    /// Runs a program found by absolute path, e.g. `/usr/bin/systemd-analyze`.
    package static func run(_ path: String, _ arguments: [String], input: URL? = nil) throws -> CommandResult {
        try run(URL(fileURLWithPath: path), arguments, input: input)
    }
}

/// The package's own executables, as `swift build` placed them next to the test bundle.
package enum BuiltProducts {
    package static var directory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// The executable `name`; `swift test` may run the bundle from a nested directory, hence the
    /// fallback to `.build/debug`.
    package static func url(_ name: String) -> URL {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        return repository.appendingPathComponent(".build/debug/\(name)")
    }

    /// Whether `name` was built (a package-wide build builds every executable).
    package static func isBuilt(_ name: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: url(name).path)
    }

    /// The package's root folder.
    package static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
