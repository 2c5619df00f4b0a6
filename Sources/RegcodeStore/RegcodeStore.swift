import Foundation
import GRDB
import GRDBSQLite
import Logging
import RegcodeEngine

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's SQLite state: devices, their durable snapshots, the poll log, the request log and
/// the event log.
///
/// One process writes; every write that belongs together (a batch of engine steps) is one
/// transaction. `schema.sql` is executed verbatim on a new file, so the file's schema is exactly
/// what `sqlite3 new.db < schema.sql` creates.
package final class RegcodeStore: Sendable {
    /// The schema version (`PRAGMA user_version`) this build reads and writes.
    package static let schemaVersion: Int32 = 7
    /// `PRAGMA application_id` of a regcoded database ('RGCD').
    package static let applicationID: Int32 = 0x5247_4344

    /// The database file.
    package let path: String

    /// The schema version of the file as opened. A read-write store is always at ``schemaVersion``
    /// (it migrates older files on open); a read-only store also reads older versions it knows, and
    /// what they lack reads as empty (see ``requestAttempts(device:sinceEpochMs:)``).
    package let fileSchemaVersion: Int32

    // The daemon opens a pool rather than a queue: WAL lets the control socket's reads (event
    // replay, summaries, poll reports) run concurrently with a long batched `apply` instead of
    // queueing behind it. Reports open a read-only queue.
    let pool: any DatabaseWriter
    let logger: Logger
    /// A connection of its own for ``checkpoint()`` when checkpoints run in the background, so the
    /// checkpoint's disk syncs never sit on the writer's commit path.
    private let checkpointer: DatabaseQueue?

    /// Who moves the write-ahead log into the database file.
    package enum WALCheckpoints: Sendable {
        /// SQLite's default: the committing connection checkpoints every ~1,000 pages, inside a commit.
        case onCommit
        /// Nobody on the commit path; the owner calls ``checkpoint()`` on a schedule.
        case background
    }

    /// Opens or creates the database at `path`.
    ///
    /// A new file is created with mode 0600 (SQLite gives `-wal`/`-shm` the same mode) and gets
    /// `schema.sql`. An existing file of an older schema version this build knows is migrated in
    /// place, in one transaction (version 1: `request_attempts` and `devices.client_address` are
    /// added; existing devices have no address until ``assignClientAddresses(_:)``); a version it
    /// does not know is refused and left untouched. The connection uses WAL, foreign keys and a
    /// busy timeout. `pollIndex` drops or builds the poll log's index by device (see ``PollIndex``).
    /// - Throws: ``RegcodeStoreError`` naming the path and the reason.
    package init(path: String, walCheckpoints: WALCheckpoints = .onCommit, pollIndex: PollIndex = .device, logger: Logger) throws {
        self.path = path
        var logger = logger
        logger[metadataKey: "db"] = .string(path)
        self.logger = logger

        // Read-only first: a foreign or newer file must be refused byte for byte unchanged, and
        // opening it for writing would already switch it to WAL.
        try Self.probeExisting(path)
        try Self.createFileIfMissing(path, logger: logger)

        var configuration = Configuration()
        configuration.label = "regcoded.store"
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            // With WAL, NORMAL only risks the last transactions on power loss, never corruption;
            // FULL would add an fsync to every batch of engine steps.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if walCheckpoints == .background {
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
            // A log that grew during a burst shrinks back to this when it starts over.
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            // The page cache stays at SQLite's default 2 MiB. With 64 MiB, perf found ~6 % of the daemon's CPU at
            // 40,000 devices in SQLite's cache truncation (pcache1TruncateUnsafe), spread over every commit and
            // scanning a hash table sized by the cache: more than re-reading the index leaves a small cache drops.
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw RegcodeStoreError.cannotOpen(path: path, reason: Self.describe(error))
        }
        self.pool = pool
        self.fileSchemaVersion = Self.schemaVersion
        if walCheckpoints == .background {
            var checkpointing = Configuration()
            checkpointing.label = "regcoded.store.checkpoint"
            checkpointing.busyMode = .timeout(5)
            checkpointing.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
            do {
                checkpointer = try DatabaseQueue(path: path, configuration: checkpointing)
            } catch {
                throw RegcodeStoreError.cannotOpen(path: path, reason: Self.describe(error))
            }
        } else {
            checkpointer = nil
        }
        let outcome = try Self.prepareSchema(pool, path: path)
        switch outcome {
        case .created:
            logger.info("state database created", metadata: ["schema": "\(Self.schemaVersion)"])
        case .existing:
            logger.info("state database opened", metadata: ["schema": "\(Self.schemaVersion)"])
        case .migrated(let from):
            logger.notice("state database migrated", metadata: ["from": "\(from)", "schema": "\(Self.schemaVersion)"])
        }
        do {
            // A new file that starts without the index is news to nobody; an existing one that changed is.
            if try apply(pollIndex), !outcome.isCreated {
                logger.notice("poll log index changed", metadata: ["poll_index": "\(pollIndex.rawValue)"])
            }
        } catch {
            throw RegcodeStoreError.cannotOpen(path: path, reason: Self.describe(error))
        }
    }

    /// Opens an existing database for reading only (reports): nothing is created, migrated or
    /// written in it, and SQLite refuses any write. The file must carry this build's schema version or an
    /// older one this build can migrate (see ``fileSchemaVersion``); an older file is read through a migrated
    /// copy (``migratedCopy(of:from:)``), so every query sees the current schema.
    /// - Throws: ``RegcodeStoreError`` naming the path and the reason.
    package init(readingOnly path: String, logger: Logger) throws {
        self.path = path
        var logger = logger
        logger[metadataKey: "db"] = .string(path)
        self.logger = logger
        var configuration = Configuration()
        configuration.label = "regcoded.store.readonly"
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        let source: DatabaseQueue
        do {
            source = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw RegcodeStoreError.cannotOpen(path: path, reason: Self.describe(error))
        }
        checkpointer = nil
        let (userVersion, applicationID) = try source.read { db in
            (try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0, try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0)
        }
        guard applicationID == Self.applicationID else {
            throw RegcodeStoreError.notARegcodeDatabase(path: path, reason: "application_id is \(applicationID), expected \(Self.applicationID)")
        }
        guard (Self.oldestMigratableVersion...Self.schemaVersion).contains(userVersion) else {
            throw RegcodeStoreError.unsupportedSchemaVersion(path: path, found: userVersion, supported: Self.schemaVersion)
        }
        fileSchemaVersion = userVersion
        if userVersion < Self.schemaVersion {
            do {
                pool = try Self.migratedCopy(of: source, from: userVersion)
            } catch {
                throw RegcodeStoreError.cannotOpen(
                    path: path,
                    reason: "cannot read schema \(userVersion) through a migrated copy: \(Self.describe(error))"
                )
            }
        } else {
            pool = source
        }
    }

    /// Copies what the write-ahead log holds into the database file, on a connection of its own when the
    /// store was opened with ``WALCheckpoints/background``, so that the log starts over.
    ///
    /// First SQLite's PASSIVE mode copies the bulk without blocking anyone. Under a steady stream of
    /// commits that alone never lets the log start over (the writer has always appended a few frames by
    /// the time the copy ends), and the file grew by hundreds of megabytes a minute, every new block of it
    /// zeroed by the file system. So a RESTART follows: it waits for the transaction in progress, copies
    /// the few frames the passive pass missed while holding writers back, and the next commit writes the
    /// log from its start again. A RESTART that cannot finish (a long reader) is tried again next time.
    /// - Returns: frames in the log and frames copied, as of the last pass that ran.
    @discardableResult
    package func checkpoint() async throws -> (walFrames: Int, checkpointed: Int) {
        let connection: any DatabaseWriter = checkpointer ?? pool
        let passive = try await connection.writeWithoutTransaction { try $0.checkpoint(.passive) }
        let restart = try await connection.writeWithoutTransaction { db -> (walFrameCount: Int, checkpointedFrameCount: Int)? in
            // Never wait: a RESTART that waits for the writer or for a reader (a report, the console, a lab's
            // sqlite3) holds back every writer meanwhile, and with the usual 5 s timeout the fleet's steps
            // piled up until the fleet was held. Busy now means: try again next period.
            try db.execute(sql: "PRAGMA busy_timeout = 0")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(Self.busyTimeoutMs)") }
            do {
                return try db.checkpoint(.restart)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                return nil
            }
        }
        let last = restart ?? passive
        return (last.walFrameCount, last.checkpointedFrameCount)
    }

    /// The busy timeout of every connection (GRDB's `busyMode`), in milliseconds.
    static let busyTimeoutMs = 5_000

    // MARK: Opening

    private enum SchemaOutcome {
        case created, existing
        case migrated(from: Int32)

        var isCreated: Bool {
            if case .created = self { return true }
            return false
        }
    }

    /// The 16 bytes every SQLite 3 database starts with.
    static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// Checks an existing, non-empty file without writing to it: it must start with the SQLite
    /// header and be empty of schema, or carry this database's application id and a schema version
    /// this build knows. `user_version` and `application_id` are read through a read-only
    /// connection rather than at header offsets 60 and 68: a WAL not yet checkpointed may hold
    /// newer values than the file's first page.
    /// - Throws: ``RegcodeStoreError``; the file is left as it was.
    static func probeExisting(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { return }  // Missing: created below; other errors surface there.
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw RegcodeStoreError.cannotOpen(path: path, reason: "not a regular file")
        }
        guard info.st_size > 0 else { return }  // An empty file is a new database (SQLite treats it so).
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RegcodeStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        var header = [UInt8](repeating: 0, count: 100)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        guard count == header.count, Array(header[0..<16]) == sqliteMagic else {
            throw RegcodeStoreError.cannotOpen(path: path, reason: "not an SQLite 3 database (no 'SQLite format 3' header)")
        }
        var configuration = Configuration()
        configuration.label = "regcoded.store.probe"
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        let (userVersion, applicationID, objects): (Int32, Int32, Int)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            (userVersion, applicationID, objects) = try queue.read { db in
                (
                    try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
                    try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                )
            }
            try queue.close()
        } catch {
            throw RegcodeStoreError.cannotOpen(path: path, reason: describe(error))
        }
        if objects == 0 && userVersion == 0 && applicationID == 0 { return }
        guard applicationID == Self.applicationID else {
            throw RegcodeStoreError.notARegcodeDatabase(path: path, reason: "application_id is \(applicationID), expected \(Self.applicationID)")
        }
        guard (oldestMigratableVersion...schemaVersion).contains(userVersion) else {
            throw RegcodeStoreError.unsupportedSchemaVersion(path: path, found: userVersion, supported: schemaVersion)
        }
    }

    /// Creates the file with mode 0600 before SQLite sees it, because SQLite would create it with
    /// the process umask (usually world-readable) and the file holds client secrets and tokens.
    private static func createFileIfMissing(_ path: String, logger: Logger) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            // A restrictive umask must not leave the owner without write access.
            _ = fchmod(fd, 0o600)
            close(fd)
            return
        }
        let code = errno
        guard code == EEXIST else {
            throw RegcodeStoreError.cannotOpen(path: path, reason: String(cString: strerror(code)))
        }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            logger.warning(
                "state database is readable by other users; it holds client secrets and tokens",
                metadata: ["mode": "\(String(info.st_mode & 0o777, radix: 8))"]
            )
        }
    }

    /// Runs `schema.sql` on an empty database, or checks that an existing one is ours and migrates it
    /// to the current version if it is older.
    private static func prepareSchema(_ pool: any DatabaseWriter, path: String) throws -> SchemaOutcome {
        do {
            return try pool.writeWithoutTransaction { db in
                var outcome = SchemaOutcome.existing
                // IMMEDIATE so that two processes opening the same new file cannot both create it.
                try db.inTransaction(.immediate) {
                    let userVersion = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                    let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                    let objects = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                    if objects == 0 && userVersion == 0 && applicationID == 0 {
                        try db.execute(sql: schemaSQL)
                        let written = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                        guard written == schemaVersion else {
                            // schema.sql and this build disagree: refuse rather than mislabel the file.
                            throw RegcodeStoreError.unsupportedSchemaVersion(path: path, found: written, supported: schemaVersion)
                        }
                        outcome = .created
                        return .commit
                    }
                    guard applicationID == Self.applicationID else {
                        throw RegcodeStoreError.notARegcodeDatabase(
                            path: path,
                            reason: "application_id is \(applicationID), expected \(Self.applicationID)"
                        )
                    }
                    guard (oldestMigratableVersion...schemaVersion).contains(userVersion) else {
                        throw RegcodeStoreError.unsupportedSchemaVersion(path: path, found: userVersion, supported: schemaVersion)
                    }
                    guard userVersion < schemaVersion else { return .commit }
                    _ = try migrate(db, from: userVersion)
                    let migrated = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                    guard migrated == schemaVersion else {
                        // A migration that does not end at this build's version: roll back, refuse.
                        throw RegcodeStoreError.unsupportedSchemaVersion(path: path, found: userVersion, supported: schemaVersion)
                    }
                    outcome = .migrated(from: userVersion)
                    return .commit
                }
                return outcome
            }
        } catch let error as RegcodeStoreError {
            throw error
        } catch {
            throw RegcodeStoreError.cannotOpen(path: path, reason: describe(error))
        }
    }

    /// The bytes of `schema.sql`, embedded at build time.
    static var schemaSQL: String { String(decoding: PackageResources.schema_sql, as: UTF8.self) }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return error.message ?? "SQLite error \(error.resultCode)"
        }
        return String(describing: error)
    }
}

extension RegcodeStore {
    /// Whether `error` says the database cannot be written or read now but may be later: another process holds its
    /// lock (past the busy timeout), the disk is full, an I/O error, the file cannot be opened or is read-only. The
    /// control layer answers such a failure with a retryable error rather than an internal one.
    package static func isUnavailable(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PROTOCOL,
            .SQLITE_NOMEM, .SQLITE_INTERRUPT:
            return true
        default:
            return false
        }
    }
}

extension RegcodeStore {
    /// The memory SQLite holds in this process now, in bytes: its page caches (up to `cache_size`, 2 MB by default,
    /// per connection), statements and schema. It grows while the caches fill as the database grows, then stays: a
    /// soak that watches the process's memory subtracts it to see what the rest does.
    package static var sqliteMemoryBytes: Int { Int(sqlite3_memory_used()) }
}
