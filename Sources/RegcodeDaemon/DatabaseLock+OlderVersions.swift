import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension DatabaseLock {
    /// The lock file older versions held (`<database>.lock`, an exclusive `flock`, the holder's PID inside).
    ///
    /// During an upgrade an older daemon may still run on the database, and it knows only that file: the lock on the
    /// database's identity does not exclude it, nor it this one. So where that file exists (the database was used by
    /// an older version) it is locked too, and held as long as the process lives, so neither version starts beside
    /// the other. Where it does not exist nothing is created: no file is left behind for a lock nothing else reads.
    static func olderVersionsLockPath(forDatabase database: String) -> String { database + ".lock" }

    /// Takes the older versions' lock of `database` when its file exists: the descriptor holding it (kept open for
    /// the process's lifetime), or nil when there is no such file.
    static func acquireOlderVersionsLock(database: String) -> Result<Int32?, ConfigurationError> {
        let path = olderVersionsLockPath(forDatabase: database)
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return .success(nil) }
            let reason = String(cString: strerror(code))
            return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot open \(path), the lock file of older versions: \(reason)"))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = olderVersionHolder(fd)
            close(fd)
            guard code == EWOULDBLOCK else {
                let reason = String(cString: strerror(code))
                return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot lock \(path): \(reason)"))
            }
            let who = holder.map { "regcoded (pid \($0))" } ?? "another regcoded"
            return .failure(
                ConfigurationError(file: nil, key: "database", reason: "\(database) is in use by \(who), an older version holding \(path)")
            )
        }
        return .success(fd)
    }

    /// The PID an older holder wrote into its lock file, if it wrote one.
    private static func olderVersionHolder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
