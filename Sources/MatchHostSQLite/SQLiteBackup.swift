import Foundation
import GRDB

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
/// its destination, synced, checked with `PRAGMA integrity_check`, and only then given its
/// name, so an interrupted backup or restore never leaves a file that looks complete.
public enum SQLiteBackup {
    /// Writes a consistent snapshot of the database at `source` to `destination`, a file that
    /// must not exist yet (mode 0600: it holds hashed device secrets). The server may be
    /// running on `source`.
    /// - Throws: ``SQLiteStoreError`` when `source` is missing, not a database or not
    ///   MatchHost's; ``SQLiteBackupError`` when `destination` exists or cannot be written,
    ///   or the copy fails its check.
    public static func backup(from source: String, to destination: String) throws -> SQLiteBackupSummary {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw SQLiteBackupError(path: destination, reason: "the file exists; a backup never overwrites one")
        }
        let copy = try CheckedCopy(of: source, beside: destination)
        try copy.publish(as: destination)
        return copy.summary
    }

    /// Puts a copy of the backup `backup` in place as the database (``SQLiteGameStore/fileName``)
    /// of `directory`. A database already there is not deleted but renamed, with its
    /// write-ahead log, to `matchhost.sqlite.before-restore-<time>`; that name is returned.
    ///
    /// No server may be using `directory` meanwhile: the caller holds its lock (`matchhost
    /// restore` takes the server's data directory lock). A backup from an older MatchHost is
    /// migrated when the server opens it; one from a newer MatchHost is refused.
    public static func restore(from backup: String, toDirectory directory: String) throws -> (summary: SQLiteBackupSummary, replaced: String?) {
        let destination = (directory as NSString).appendingPathComponent(SQLiteGameStore.fileName)
        let copy = try CheckedCopy(of: backup, beside: destination)
        var replaced: String?
        if FileManager.default.fileExists(atPath: destination) {
            let aside = destination + ".before-restore-" + Self.timestamp()
            do {
                // A log left beside the database belongs to it: a new database next to an old
                // log would have the log's pages applied to it.
                for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: destination + suffix) {
                    try FileManager.default.moveItem(atPath: destination + suffix, toPath: aside + suffix)
                }
            } catch {
                copy.discard()
                throw SQLiteBackupError(path: destination, reason: "cannot be moved aside to \(aside): \(error.localizedDescription)")
            }
            replaced = aside
        }
        try copy.publish(as: destination)
        return (copy.summary, replaced)
    }

    private static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: Date())
    }
}

/// A snapshot of a database written to a temporary file, synced and checked, not yet named.
private struct CheckedCopy {
    let temporaryPath: String
    let summary: SQLiteBackupSummary

    init(of source: String, beside destination: String) throws {
        guard FileManager.default.fileExists(atPath: source) else {
            throw SQLiteStoreError(.missing, path: source, reason: "the file does not exist")
        }
        // Refuses a file that is not a MatchHost database, or is from a newer one.
        try SQLiteOpening(path: source, options: SQLiteStoreOptions(createIfMissing: false)).inspect()
        let directory = (destination as NSString).deletingLastPathComponent
        let temporaryPath = (directory.isEmpty ? "." : directory) + "/.\((destination as NSString).lastPathComponent).partial-\(getpid())"
        try? FileManager.default.removeItem(atPath: temporaryPath)
        do {
            try Self.vacuum(source, into: temporaryPath)
            try Self.restrictAndSync(temporaryPath)
            self.summary = try Self.check(temporaryPath)
        } catch {
            try? FileManager.default.removeItem(atPath: temporaryPath)
            if error is SQLiteBackupError { throw error }
            throw SQLiteBackupError(path: destination, reason: "the copy failed: \(error)")
        }
        self.temporaryPath = temporaryPath
    }

    /// Gives the copy its name, which must be free (a hard link fails rather than replace a
    /// file), and syncs the directory so that the name survives a crash too.
    func publish(as destination: String) throws {
        defer { self.discard() }
        guard link(self.temporaryPath, destination) == 0 else {
            let reason = errno == EEXIST ? "the file exists" : String(cString: strerror(errno))
            throw SQLiteBackupError(path: destination, reason: "cannot be written: \(reason)")
        }
        let directory = (destination as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
        }
    }

    /// Removes the temporary file.
    func discard() {
        try? FileManager.default.removeItem(atPath: self.temporaryPath)
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

    private static func restrictAndSync(_ path: String) throws {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SQLiteBackupError(path: path, reason: "cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0, fsync(descriptor) == 0 else {
            throw SQLiteBackupError(path: path, reason: "cannot be synced: \(String(cString: strerror(errno)))")
        }
    }

    private static func check(_ path: String) throws -> SQLiteBackupSummary {
        let queue = try Self.readOnlyQueue(path)
        defer { try? queue.close() }
        return try queue.read { db in
            let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            guard problems == ["ok"] else {
                throw SQLiteBackupError(path: path, reason: "the copy failed its integrity check: \(problems.prefix(3).joined(separator: "; "))")
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

/// A backup or restore could not be made; nothing was left under the destination's name.
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
