import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One daemon per database: an exclusive `flock` on `<database>.lock`, holding the holder's PID.
///
/// Two daemons on one file would reconcile away each other's devices and poll side by side, so the
/// second one must refuse to start before it writes anything. The lock is a separate file, not a
/// lock on the database itself, so readers (`regcodectl report`) are never shut out. It is held
/// until the process exits; the kernel drops it even when the daemon crashes, so a stale lock file
/// never blocks a restart. The file is left in place: removing it would let a third process lock a
/// new inode while a second still waits on the old one.
enum DatabaseLock {
    /// Lock files this process holds, by path: a process holds its lock once, however many daemons
    /// it builds (in-process tests build several, one after another, on one database).
    private static let held = Mutex<[String: Int32]>([:])

    /// The lock file of `database`.
    static func path(forDatabase database: String) -> String { database + ".lock" }

    /// Takes the lock of `database`, or names the process that holds it.
    /// - Throws: ``ConfigurationError`` (key `database`) when another process holds the lock or the
    ///   lock file cannot be created.
    static func acquire(database: String) throws(ConfigurationError) {
        let lockPath = path(forDatabase: database)
        let result: Result<Void, ConfigurationError> = held.withLock { held in
            if held[lockPath] != nil { return .success(()) }
            let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot create the lock file \(lockPath): \(reason)"))
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                let holder = readHolder(fd)
                close(fd)
                guard code == EWOULDBLOCK else {
                    let reason = String(cString: strerror(code))
                    return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot lock \(lockPath): \(reason)"))
                }
                let who = holder.map { "regcoded (pid \($0))" } ?? "another regcoded"
                return .failure(ConfigurationError(file: nil, key: "database", reason: "\(database) is in use by \(who)"))
            }
            let pid = Array("\(getpid())\n".utf8)
            if ftruncate(fd, 0) == 0 {
                _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            }
            held[lockPath] = fd
            return .success(())
        }
        try result.get()
    }

    /// The PID written by the holder, if it wrote one yet.
    private static func readHolder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
