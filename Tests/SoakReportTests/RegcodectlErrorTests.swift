import Foundation
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What regcodectl says, and how it exits, when it cannot reach a daemon: the message names the
/// socket path and the fix.
@Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
struct RegcodectlErrorTests {
    static func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ctl-err-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    @Test func aMissingSocketNamesThePathAndHowToStartADaemon() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("absent.sock").path
            let result = try Command.run(BuiltProducts.url("regcodectl"), ["devices", "--socket", path])
            #expect(result.status == 3)
            #expect(result.stdout.isEmpty)
            #expect(
                result.stderr
                    == "regcodectl: no daemon at \(path) (no such file): start one with 'regcoded', or pass --socket PATH / set REGCODED_SOCKET\n"
            )
        }
    }

    @Test func aStaleSocketSaysConnectionRefused() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("stale.sock").path
            // A socket file nobody listens on, as a daemon that crashed leaves behind.
            try FakeControlSocket.leaveStaleSocketFile(at: path)
            let result = try Command.run(BuiltProducts.url("regcodectl"), ["watch", "--socket", path])
            #expect(result.status == 3)
            #expect(result.stderr.hasPrefix("regcodectl: no daemon at \(path) (connection refused): start one with 'regcoded'"))
        }
    }

    @Test func aFileThatIsNotASocketIsNamedAsSuch() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("regcoded.sqlite").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data("not a socket".utf8)))
            let result = try Command.run(BuiltProducts.url("regcodectl"), ["devices", "--socket", path])
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("regcodectl: \(path) is a file, not a socket:"))
            #expect(result.stderr.contains("--socket PATH"))
        }
    }

    // Root is never refused by file permissions.
    @Test(.enabled(if: geteuid() != 0, "root is never refused by file permissions"))
    func permissionDeniedNamesThePathAndTheGroup() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("ctl.sock").path
            let server = try FakeControlSocket(path: path)
            defer { server.close() }
            try #require(chmod(path, 0) == 0)
            let result = try Command.run(BuiltProducts.url("regcodectl"), ["devices", "--socket", path])
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("regcodectl: permission denied at \(path): "))
            #expect(result.stderr.contains("--socket-group"))
        }
    }
}
