import Dispatch
import Foundation
import GRDB
import Logging
import MatchHostCore

/// The ``GameStore`` in one SQLite file, through GRDB: the server's default storage.
///
/// A `DatabasePool` in WAL mode: one writer connection, several readers that never wait for
/// it. Reads are GRDB's async `read`, on the pool's own dispatch queues; writes wait for the
/// writer thread (``SQLiteGroupCommit``), which commits them in groups. Either way the caller
/// is suspended (or, for ``appendMove(matchID:moveNumber:move:state:at:completion:)``, called
/// back) meanwhile, so no call blocks an event loop on disk I/O. Each call has the meaning of
/// one transaction.
///
/// Durability: ``SQLiteStoreOptions/Durability/full`` by default (the WAL is synced at every
/// commit), so what the server acknowledged after a call returned survives kill -9 and power
/// loss alike. The schema changes only through ``SQLiteSchema``'s migrations, applied at open.
public final class SQLiteGameStore: GameStore {
    /// The file name ``open(directory:limits:options:logger:)`` uses.
    public static let fileName = "matchhost.sqlite"

    /// The newest schema this build knows (its last migration, "v12"): a file migrated past it
    /// is refused.
    public static var schemaVersion: String { SQLiteSchema.inOrder(SQLiteSchema.migrator.migrations).last ?? "" }

    /// The database file.
    public let path: String
    /// The key-value limits.
    public let limits: StorageLimits
    /// See ``GameStore/outlivesServer``: a database file does.
    public var outlivesServer: Bool { true }
    let pool: DatabasePool
    /// Where every write waits for its (group) transaction.
    let writes: SQLiteGroupCommit<SQLiteGroupedWrite>

    private init(path: String, limits: StorageLimits, pool: DatabasePool) {
        self.path = path
        self.limits = limits
        self.pool = pool
        self.writes = SQLiteGroupCommit { writes in SQLiteGroupedWrite.commit(writes, to: pool) }
    }

    /// Opens ``fileName`` in `directory` (see ``open(path:limits:options:logger:)``).
    public static func open(
        directory: String, limits: StorageLimits = StorageLimits(), options: SQLiteStoreOptions = SQLiteStoreOptions(),
        logger: Logger = Logger(label: "matchhost.sqlite")
    ) async throws -> SQLiteGameStore {
        let path = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(Self.fileName).path
        return try await Self.open(path: path, limits: limits, options: options, logger: logger)
    }

    /// Opens the database at `path`, creating the file and its directory if missing (unless
    /// `options` say not to), and applies the migrations it lacks.
    ///
    /// Throws ``SQLiteStoreError`` with the path and the reason when the directory cannot be
    /// created, the file or directory is read-only, the file is missing (and may not be
    /// created), is not a database or not MatchHost's, or comes from a newer schema. The
    /// checks come before any write, so a refused file is left as it was. The blocking
    /// work runs on a dispatch queue, not the caller's thread.
    public static func open(
        path: String, limits: StorageLimits = StorageLimits(), options: SQLiteStoreOptions = SQLiteStoreOptions(),
        logger: Logger = Logger(label: "matchhost.sqlite")
    ) async throws -> SQLiteGameStore {
        let pool = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DatabasePool, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try SQLiteOpening(path: path, options: options).openPool() })
            }
        }
        logger.info("database open", metadata: ["path": "\(path)"])
        return SQLiteGameStore(path: path, limits: limits, pool: pool)
    }

    /// Closes the database; later calls throw ``GameStoreError/storageFailed(reason:)``.
    ///
    /// The write-ahead log is checkpointed into the database file and emptied first: SQLite
    /// does that itself only when the last connection to close can write, and GRDB's readers
    /// are read-only. So a stopped server's database is the one file, whole.
    public func close() async throws {
        let pool = self.pool
        let writes = self.writes
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                writes.stop()
                try? pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
                continuation.resume(with: Result { try pool.close() })
            }
        }
    }

    /// Runs `body` in a write transaction, off the caller's thread; errors other than
    /// ``GameStoreError`` and cancellation become ``GameStoreError/storageFailed(reason:)``.
    ///
    /// The transaction may be shared with the other calls that arrived while the previous one
    /// was being committed (``SQLiteGroupCommit``); `body` runs in a savepoint of its own then,
    /// so that what it wrote is undone alone if it throws. Either way this returns once its
    /// transaction is committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let result = SQLiteWriteResult<T>()
        try await self.writes.append(SQLiteGroupedWrite(undo: .savepoint) { db in result.value = try body(db) })
        guard let value = result.value else { throw GameStoreError.storageFailed(reason: "a committed write left no result") }
        return value
    }

    /// Runs `body` in a read transaction (a consistent snapshot), off the caller's thread.
    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await self.pool.read(body)
        } catch {
            throw Self.storeError(error)
        }
    }

    static func storeError(_ error: any Error) -> any Error {
        if error is GameStoreError || error is CancellationError { return error }
        // Damage found where it is read (a start's quick check reads every page, not every
        // cross-reference): say what it means and what to do, not only the SQL that met it.
        if let error = error as? DatabaseError, [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return GameStoreError.storageFailed(
                reason: "the database is damaged (\(error.message ?? "SQLite error \(error.resultCode.rawValue)")); restore it from a backup (matchhost restore)")
        }
        return GameStoreError.storageFailed(reason: "\(error)")
    }
}
