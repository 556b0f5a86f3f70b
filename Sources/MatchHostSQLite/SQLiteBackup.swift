import Foundation
import GRDB
import MatchHostCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Copies of the server's database: taken while the server runs, and put back in place.
///
/// Both directions make the copy the same way: `VACUUM INTO` through a read-only connection,
/// which copies one read transaction's snapshot (everything committed when it began, nothing
/// after) while the server goes on writing. The copy is written under a temporary name beside
/// its destination (created mode 0600 before anything is in it: it holds hashed device
/// secrets), synced, checked with `PRAGMA integrity_check` and `foreign_key_check`, and only
/// then given its name, so an interrupted backup or restore never leaves a file that looks
/// complete.
public enum SQLiteBackup {
    /// Writes a consistent snapshot of the database at `source` to `destination`, a file that
    /// must not exist yet. The server may be running on `source`.
    /// - Throws: ``SQLiteStoreError`` when `source` is missing, not a database or not
    ///   MatchHost's; ``SQLiteBackupError`` when `destination` exists or cannot be written,
    ///   or the copy fails its check.
    public static func backup(from source: String, to destination: String) throws -> SQLiteBackupSummary {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw SQLiteBackupError(path: destination, reason: "the file exists; a backup never overwrites one")
        }
        let copy = try CheckedCopy(of: source, beside: destination)
        defer { copy.discard() }
        try copy.publish(asNew: destination)
        return copy.summary
    }

    /// Puts a copy of the backup `backup` in place as the database (``SQLiteGameStore/fileName``)
    /// of `directory`.
    ///
    /// What was there is kept, not deleted: the database, its write-ahead log folded in first
    /// where it can be, under `matchhost.sqlite.before-restore-<time>` (a log that cannot be
    /// folded, or one left without its database, goes beside it as `…-wal`). A log must never
    /// stay beside the restored file: SQLite would apply its pages to it. The database's name
    /// is never empty meanwhile: the old file stays under it until the copy replaces it in one
    /// `rename`.
    ///
    /// No server may be using `directory` meanwhile: the caller holds its lock (`matchhost
    /// restore` takes the server's data directory lock). A backup from an older MatchHost is
    /// migrated when the server opens it; one from a newer MatchHost is refused.
    public static func restore(from backup: String, toDirectory directory: String) throws -> SQLiteRestoreResult {
        let destination = (directory as NSString).appendingPathComponent(SQLiteGameStore.fileName)
        let copy = try CheckedCopy(of: backup, beside: destination)
        defer { copy.discard() }
        let files = FileManager.default
        let hadDatabase = files.fileExists(atPath: destination)
        if hadDatabase { Self.foldLog(into: destination) }
        let logs = ["-wal", "-shm"].filter { files.fileExists(atPath: destination + $0) }
        guard hadDatabase || !logs.isEmpty else {
            try copy.publish(replacing: destination)
            return SQLiteRestoreResult(summary: copy.summary, replaced: nil)
        }
        let aside = destination + ".before-restore-" + Self.timestamp()
        if hadDatabase, link(destination, aside) != 0 {
            throw SQLiteBackupError(path: destination, reason: "cannot be kept as \(aside): \(String(cString: strerror(errno))); nothing was changed")
        }
        for suffix in logs {
            guard rename(destination + suffix, aside + suffix) == 0 else {
                throw SQLiteBackupError(
                    path: destination + suffix,
                    reason: "cannot be moved aside to \(aside + suffix): \(String(cString: strerror(errno))); the database was not replaced")
            }
        }
        try copy.publish(replacing: destination)
        return SQLiteRestoreResult(summary: copy.summary, replaced: aside)
    }

    /// Checks that `backup` would restore, without putting it anywhere: the same copy and
    /// checks as ``restore(from:toDirectory:)``, made in the system's temporary directory and
    /// removed again. For verifying backups where they are kept.
    public static func check(backup: String) throws -> SQLiteBackupSummary {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-check-\(UUID().uuidString).sqlite").path
        let copy = try CheckedCopy(of: backup, beside: scratch)
        copy.discard()
        return copy.summary
    }

    /// Checkpoints the whole log into the database and leaves WAL mode, which deletes the log:
    /// the database kept aside is then one file. A damaged database may refuse; its log is then
    /// moved aside beside it instead.
    private static func foldLog(into path: String) {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        try? queue.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        try? queue.close()
    }

    private static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        // The basic ISO 8601 form the README's backup names use, with milliseconds, so that two restores in the same second keep both.
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        return formatter.string(from: Date())
    }
}

/// What ``SQLiteBackup/restore(from:toDirectory:)`` did.
public struct SQLiteRestoreResult: Sendable, Hashable {
    /// What the restored database holds.
    public var summary: SQLiteBackupSummary
    /// Where what was replaced is kept (the database, and any log as `…-wal`), if anything was.
    public var replaced: String?
}

/// A snapshot of a database written to a temporary file, synced and checked, not yet named.
private struct CheckedCopy {
    let temporaryPath: String
    let summary: SQLiteBackupSummary

    init(of source: String, beside destination: String) throws {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: source, isDirectory: &isDirectory) else {
            let directoryExists = files.fileExists(atPath: FilePaths.directory(of: source))
            throw SQLiteStoreError(.missing, path: source, reason: directoryExists ? "the file does not exist" : "the directory does not exist")
        }
        guard !isDirectory.boolValue else {
            throw SQLiteStoreError(.notADatabase, path: source, reason: "it is a directory, not a database file")
        }
        // Refuses a file that is not a MatchHost database, or is from a newer one.
        try SQLiteOpening(path: source, options: SQLiteStoreOptions(createIfMissing: false)).inspect()
        let directory = FilePaths.directory(of: destination)
        guard files.fileExists(atPath: directory) else {
            throw SQLiteBackupError(path: directory, reason: "the directory does not exist; create it first")
        }
        let temporaryPath = directory + "/.\((destination as NSString).lastPathComponent).partial-\(getpid())"
        try? FileManager.default.removeItem(atPath: temporaryPath)
        // Made 0600 before SQLite writes a byte into it (VACUUM INTO fills an empty file).
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SQLiteBackupError(path: temporaryPath, reason: "cannot be created: \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        do {
            try Self.vacuum(source, into: temporaryPath)
            try Self.sync(temporaryPath)
            // A failed check names what the user gave, not the temporary file.
            self.summary = try Self.check(temporaryPath, copyOf: source)
        } catch let error as SQLiteBackupError {
            try? FileManager.default.removeItem(atPath: temporaryPath)
            throw error
        } catch {
            try? FileManager.default.removeItem(atPath: temporaryPath)
            throw SQLiteBackupError(path: destination, reason: "the copy failed: \(error)")
        }
        self.temporaryPath = temporaryPath
    }

    /// Gives the copy the name `destination`, which must be free: a hard link, which fails
    /// rather than replace a file; where the file system has none (FAT, some network mounts),
    /// the name is claimed with an exclusive create and the copy renamed over it.
    func publish(asNew destination: String) throws {
        if link(self.temporaryPath, destination) != 0 {
            let reason = errno
            guard reason != EEXIST else { throw SQLiteBackupError(path: destination, reason: "cannot be written: the file exists") }
            let claim = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard claim >= 0 else {
                throw SQLiteBackupError(path: destination, reason: "cannot be written: \(String(cString: strerror(errno)))")
            }
            close(claim)
            try self.publish(replacing: destination)
        }
        Self.syncDirectory(of: destination)
    }

    /// Gives the copy the name `destination` in one `rename`, replacing what is there.
    func publish(replacing destination: String) throws {
        guard rename(self.temporaryPath, destination) == 0 else {
            throw SQLiteBackupError(path: destination, reason: "cannot be written: \(String(cString: strerror(errno)))")
        }
        Self.syncDirectory(of: destination)
    }

    /// Removes the temporary file, if it is still there.
    func discard() {
        try? FileManager.default.removeItem(atPath: self.temporaryPath)
    }

    /// So that the new name survives a crash too.
    private static func syncDirectory(of path: String) {
        let descriptor = open(FilePaths.directory(of: path), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private static func readOnlyQueue(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        // The server's writer may hold a lock for a moment.
        configuration.busyMode = .timeout(5)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    private static func vacuum(_ source: String, into path: String) throws {
        let queue = try Self.readOnlyQueue(source)
        defer { try? queue.close() }
        try queue.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [path]) }
    }

    private static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw SQLiteBackupError(path: path, reason: "cannot be synced: \(reason)")
        }
        close(descriptor)
    }

    private static func check(_ path: String, copyOf source: String) throws -> SQLiteBackupSummary {
        let queue = try Self.readOnlyQueue(path)
        defer { try? queue.close() }
        return try queue.read { db in
            let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            guard problems == ["ok"] else {
                throw SQLiteBackupError(path: source, reason: "its copy failed the integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
            guard try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") == nil else {
                throw SQLiteBackupError(path: source, reason: "its copy failed the foreign key check")
            }
            guard try db.tableExists("player") else {
                throw SQLiteBackupError(path: source, reason: "it holds no MatchHost tables (an empty database)")
            }
            func count(_ sql: String) throws -> Int { try Int.fetchOne(db, sql: sql) ?? 0 }
            let bytes = try count("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")
            return SQLiteBackupSummary(
                bytes: Int64(bytes),
                players: try count("SELECT COUNT(*) FROM player"),
                matches: try count("SELECT COUNT(*) FROM game_match"),
                runningTurnGames: try count("SELECT COUNT(*) FROM game_match WHERE kind = 'turn_based' AND state = 'running'"),
                moves: try count("SELECT COUNT(*) FROM turn_move"))
        }
    }
}
/// What a backup holds, counted in the checked copy.
public struct SQLiteBackupSummary: Sendable, Hashable, CustomStringConvertible {
    /// The copy's size.
    public var bytes: Int64
    /// Player accounts.
    public var players: Int
    /// Matches of every game and state.
    public var matches: Int
    /// Turn-based games still running, which continue when a server starts on the copy.
    public var runningTurnGames: Int
    /// Turn-based moves stored.
    public var moves: Int

    /// Creates a summary.
    public init(bytes: Int64, players: Int, matches: Int, runningTurnGames: Int, moves: Int) {
        self.bytes = bytes
        self.players = players
        self.matches = matches
        self.runningTurnGames = runningTurnGames
        self.moves = moves
    }

    /// "3 players, 5 matches (1 turn-based running), 12 moves; 98304 bytes".
    public var description: String {
        "\(self.players) players, \(self.matches) matches (\(self.runningTurnGames) turn-based running), \(self.moves) moves; \(self.bytes) bytes"
    }
}

/// A backup or restore could not be made. A backup leaves nothing under its name; a restore
/// leaves the database it would have replaced in place (see the reason).
public struct SQLiteBackupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file concerned.
    public var path: String
    /// What went wrong, in words.
    public var reason: String

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// "PATH: REASON".
    public var description: String { "\(self.path): \(self.reason)" }
}
