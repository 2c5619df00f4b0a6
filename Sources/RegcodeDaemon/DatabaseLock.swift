import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One daemon per database: an exclusive `flock` on the database file itself.
///
/// Two daemons on one file would reconcile away each other's devices and poll side by side, so the second one must
/// refuse to start before it writes anything. The lock is taken on an open descriptor of the file, so it belongs to
/// the file's identity (device and inode), not to the path that names it: a symlink, a hard link, a bind mount or a
/// relative path reaches the same lock. `flock` locks are separate from the POSIX record locks SQLite takes, so
/// readers (`regcodectl report`, `sqlite3`) are never shut out. The descriptor stays open until the process exits
/// (closing any descriptor of the file would drop SQLite's own locks in this process); the kernel drops the lock when
/// the daemon dies, so nothing stale ever blocks a restart. The holder is named from `/proc/locks`.
///
/// Older versions' lock file is honoured too (see ``olderVersionsLockPath(forDatabase:)``).
///
/// The database must live on a local file system: over NFS, Linux emulates `flock` with the record locks SQLite uses.
enum DatabaseLock {
    /// Device and inode of a database file.
    struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Descriptors this process holds, by file: a process holds a file's lock once, however many daemons it builds
    /// (in-process tests build several, one after another, on one database) and whatever path each names it by.
    private static let held = Mutex<[FileIdentity: Int32]>([:])

    /// Takes the lock of `database`, or names the process that holds it.
    /// - Parameter createIfMissing: false takes the lock only when the file exists (and does nothing otherwise), so a
    ///   start that fails later on has created nothing; true creates a missing file (mode 0600, as the store would).
    /// - Returns: whether this process holds the lock now.
    /// - Throws: ``ConfigurationError`` (key `database`) when another process holds the lock or the file cannot be
    ///   opened.
    @discardableResult
    static func acquire(database: String, createIfMissing: Bool = true) throws(ConfigurationError) -> Bool {
        let result: Result<Bool, ConfigurationError> = held.withLock { held in
            var info = stat()
            // stat, not open: opening and closing another descriptor of a file SQLite has open here drops its locks.
            if stat(database, &info) == 0, held[FileIdentity(info)] != nil { return .success(true) }
            let fd = openOrCreate(database, create: createIfMissing)
            guard fd >= 0 else {
                let code = errno
                if code == ENOENT && !createIfMissing { return .success(false) }
                let reason = String(cString: strerror(code))
                return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot open \(database) to lock it: \(reason)"))
            }
            guard fstat(fd, &info) == 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot read \(database): \(reason)"))
            }
            let identity = FileIdentity(info)
            if held[identity] != nil {
                // Created or renamed into place since the stat above: the lock is ours already. Keep this
                // descriptor open too (see the type's comment).
                return .success(true)
            }
            let olderVersionsLock: Int32?
            switch acquireOlderVersionsLock(database: database) {
            case .success(let lock): olderVersionsLock = lock
            case .failure(let error):
                close(fd)
                return .failure(error)
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                close(fd)
                if let olderVersionsLock { close(olderVersionsLock) }
                guard code == EWOULDBLOCK else {
                    let reason = String(cString: strerror(code))
                    return .failure(ConfigurationError(file: nil, key: "database", reason: "cannot lock \(database): \(reason)"))
                }
                let who = holder(of: identity).map { "\($0.name) (pid \($0.pid))" } ?? "another process"
                return .failure(ConfigurationError(file: nil, key: "database", reason: "\(database) is in use by \(who)"))
            }
            held[identity] = fd
            return .success(true)
        }
        return try result.get()
    }

    /// A read-only descriptor of `database` (locks need no more), creating the file with mode 0600 when asked, or -1
    /// with `errno` set.
    private static func openOrCreate(_ database: String, create: Bool) -> Int32 {
        let flags = O_RDONLY | O_CLOEXEC | O_NOCTTY
        let fd = open(database, flags)
        guard fd < 0, errno == ENOENT, create else { return fd }
        let created = open(database, flags | O_CREAT | O_EXCL, 0o600)
        if created >= 0 {
            // A restrictive umask must not leave the owner without write access.
            _ = fchmod(created, 0o600)
            return created
        }
        // EEXIST: created meanwhile, or a symlink to a missing file (O_EXCL never follows one; SQLite would).
        guard errno == EEXIST else { return -1 }
        return open(database, flags | O_CREAT, 0o600)
    }

    /// The process holding a `flock` write lock on `identity`, from `/proc/locks`, with its command name.
    static func holder(of identity: FileIdentity) -> (pid: Int32, name: String)? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            guard let pid = lockHolder(line: line, identity: identity) else { continue }
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            return (pid, comm.flatMap { $0.isEmpty ? nil : $0 } ?? "another process")
        }
        return nil
    }

    /// The PID of one `/proc/locks` line when it is a `flock` on `identity`, e.g.
    /// `1: FLOCK  ADVISORY  WRITE 19272 fe:00:16238349 0 EOF` (device as hexadecimal major:minor, inode in decimal).
    static func lockHolder(line: Substring, identity: FileIdentity) -> Int32? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int32(fields[4]), pid > 0 else { return nil }
        let file = fields[5].split(separator: ":")
        guard file.count == 3, let major = UInt64(file[0], radix: 16), let minor = UInt64(file[1], radix: 16), let inode = UInt64(file[2])
        else { return nil }
        // Linux's encoding of dev_t (glibc's gnu_dev_major and gnu_dev_minor).
        let device = identity.device
        let deviceMajor = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let deviceMinor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return major == deviceMajor && minor == deviceMinor && inode == identity.inode ? pid : nil
    }
}
