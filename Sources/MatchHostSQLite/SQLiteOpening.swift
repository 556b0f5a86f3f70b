import Foundation
import GRDB

/// The checks and steps of opening a database file, each failure turned into an
/// ``SQLiteStoreError`` that names the path and the reason. Blocking: run off event loops.
struct SQLiteOpening {
    let path: String
    let options: SQLiteStoreOptions

    private var directory: String {
        URL(fileURLWithPath: self.path).deletingLastPathComponent().path
    }

    /// Checks the directory and the file, opens the pool, and migrates; the pool is closed
    /// again if a later step fails. Read-only: checks the file and its schema, and opens.
    func openPool() throws -> DatabasePool {
        if self.options.readOnly {
            try self.checkReadableFile()
            try self.inspect()
            return try self.makePool()
        }
        try self.prepareDirectory()
        if try self.checkFile() {
            try self.inspect()
        }
        let pool = try self.makePool()
        do {
            try self.prepare(pool)
            return pool
        } catch {
            try? pool.close()
            throw error
        }
    }

    private func prepareDirectory() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: self.directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw SQLiteStoreError(.directoryNotCreatable, path: self.directory, reason: "it exists and is not a directory")
            }
            return
        }
        guard self.options.createIfMissing else {
            throw SQLiteStoreError(.missing, path: self.path, reason: "the directory does not exist")
        }
        do {
            try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        } catch {
            throw SQLiteStoreError(
                .directoryNotCreatable, path: self.directory, reason: "the directory cannot be created (\(Self.reason(error)))")
        }
    }

    /// Checks permissions (`access(2)`, which refuses writing even to root for an immutable
    /// file or a read-only mount); returns whether the file exists.
    private func checkFile() throws -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: self.path, isDirectory: &isDirectory) else {
            guard self.options.createIfMissing else {
                throw SQLiteStoreError(.missing, path: self.path, reason: "the file does not exist")
            }
            guard FileManager.default.isWritableFile(atPath: self.directory) else {
                throw SQLiteStoreError(
                    .readOnly, path: self.directory, reason: "the directory is not writable, so the database cannot be created")
            }
            return false
        }
        guard !isDirectory.boolValue else {
            throw SQLiteStoreError(.notADatabase, path: self.path, reason: "it is a directory")
        }
        guard FileManager.default.isReadableFile(atPath: self.path) else {
            throw SQLiteStoreError(.cannotOpen, path: self.path, reason: "the file is not readable")
        }
        guard FileManager.default.isWritableFile(atPath: self.path) else {
            throw SQLiteStoreError(.readOnly, path: self.path, reason: "the file is read-only")
        }
        guard FileManager.default.isWritableFile(atPath: self.directory) else {
            throw SQLiteStoreError(
                .readOnly, path: self.directory,
                reason: "the directory is read-only; SQLite needs to create its -wal and -shm files there")
        }
        return true
    }

    /// For a read-only open: the file must be there and readable; nothing is created.
    private func checkReadableFile() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: self.path, isDirectory: &isDirectory) else {
            let directoryExists = FileManager.default.fileExists(atPath: self.directory)
            throw SQLiteStoreError(.missing, path: self.path, reason: directoryExists ? "the file does not exist" : "the directory does not exist")
        }
        guard !isDirectory.boolValue else {
            throw SQLiteStoreError(.notADatabase, path: self.path, reason: "it is a directory")
        }
        guard FileManager.default.isReadableFile(atPath: self.path) else {
            throw SQLiteStoreError(.cannotOpen, path: self.path, reason: "the file is not readable")
        }
    }

    /// Looks at an existing file through a read-only connection, so that a file refused here
    /// (damaged, foreign, newer) is not touched: opening the pool would already write to it
    /// (WAL mode is recorded in the file).
    func inspect() throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        do {
            // GRDB's open reads sqlite_master, so a file that is not a database fails here.
            let queue = try DatabaseQueue(path: self.path, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in
                try self.checkSchema(db)
                // Damage inside the file (a torn page, a bad disk block) shows only where it is
                // read: found now, it is refused before anything is written to it; found later,
                // a migration could write over it, or the server fail on its first query.
                if !self.options.readOnly { try self.checkIntegrity(db) }
            }
        } catch let error as SQLiteStoreError {
            throw error
        } catch {
            throw self.openError(error)
        }
    }

    private func makePool() throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "MatchHost"
        configuration.readonly = self.options.readOnly
        // Another process (a backup, the sqlite3 shell) may hold a lock for a moment.
        configuration.busyMode = .timeout(5)
        do {
            return try DatabasePool(path: self.path, configuration: configuration)
        } catch {
            throw self.openError(error)
        }
    }

    /// Sets durability, proves the file writable, migrates.
    private func prepare(_ pool: DatabasePool) throws {
        do {
            try pool.writeWithoutTransaction { db in
                if self.options.durability == .full {
                    // GRDB sets NORMAL when it enables WAL; this connection is the only writer.
                    try db.execute(sql: "PRAGMA synchronous = FULL")
                }
                // SQLite opens a write-protected file read-only without complaint (root
                // ignores permission bits, but not an immutable file or a read-only mount):
                // taking the write lock is what proves the file writable, before any write.
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "ROLLBACK")
            }
            try SQLiteSchema.migrator.migrate(pool)
        } catch let error as SQLiteStoreError {
            throw error
        } catch {
            throw self.openError(error)
        }
    }

    private func checkSchema(_ db: Database) throws {
        let migrator = SQLiteSchema.migrator
        guard try db.tableExists("grdb_migrations") else {
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            guard tables.isEmpty else {
                throw SQLiteStoreError(
                    .foreignDatabase, path: self.path,
                    reason: "it holds tables MatchHost did not create (\(tables.prefix(5).joined(separator: ", ")))")
            }
            guard !self.options.readOnly else {
                throw SQLiteStoreError(.olderSchema, path: self.path, reason: "it holds no MatchHost tables yet, and reading does not create them")
            }
            return
        }
        let applied = try migrator.appliedIdentifiers(db)
        let unknown = applied.subtracting(migrator.migrations)
        guard unknown.isEmpty else {
            throw SQLiteStoreError(
                .newerSchema, path: self.path,
                reason: "a newer MatchHost migrated it (\(SQLiteSchema.inOrder(unknown).joined(separator: ", "))); this one knows \(migrator.migrations.joined(separator: ", "))")
        }
        let missing = migrator.migrations.filter { !applied.contains($0) }
        guard missing.isEmpty || !self.options.readOnly else {
            throw SQLiteStoreError(
                .olderSchema, path: self.path,
                reason: "an older MatchHost wrote it (it lacks \(missing.joined(separator: ", "))), and reading does not migrate; start this version's server on it once")
        }
    }

    /// `PRAGMA quick_check`: every page and record well formed (not the slower cross-checks
    /// of indexes against tables). A read of the whole file, once at the server's start.
    private func checkIntegrity(_ db: Database) throws {
        let problems = try String.fetchAll(db, sql: "PRAGMA quick_check(3)")
        guard problems == ["ok"] else {
            throw SQLiteStoreError(
                .notADatabase, path: self.path,
                reason: "the database is damaged (\(problems.joined(separator: "; "))); restore it from a backup (matchhost restore)")
        }
    }

    private func openError(_ error: any Error) -> SQLiteStoreError {
        guard let error = error as? DatabaseError else {
            return SQLiteStoreError(.cannotOpen, path: self.path, reason: Self.reason(error))
        }
        let message = error.message ?? "SQLite error \(error.resultCode.rawValue)"
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return SQLiteStoreError(.notADatabase, path: self.path, reason: "the file is not a database or is damaged (\(message))")
        case .SQLITE_READONLY:
            return SQLiteStoreError(.readOnly, path: self.path, reason: "the file cannot be written (\(message))")
        default:
            return SQLiteStoreError(.cannotOpen, path: self.path, reason: message)
        }
    }

    private static func reason(_ error: any Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? "\(error)"
    }
}
