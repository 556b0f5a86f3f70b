import GRDB

// Used by MatchHostStorageTests (through @testable import) to build the files an older or
// newer MatchHost, or another program, would leave, without the tests depending on GRDB.
extension SQLiteSchema {
    /// Creates a database at `path` migrated only up to `identifier`, as an older build would.
    static func createFile(atPath path: String, migratedUpTo identifier: String) throws {
        let pool = try DatabasePool(path: path)
        try Self.migrator.migrate(pool, upTo: identifier)
        try pool.close()
    }

    /// The migrations recorded in the file at `path`, in the order they were made.
    static func appliedMigrations(atPath path: String) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        // Unknown ones (a newer build's) included.
        return try queue.read { db in Self.inOrder(try Self.migrator.appliedIdentifiers(db)) }
    }

    /// The first page (1-based) of each table and index of the file at `path` whose name is
    /// in `names`: where a lookup in it starts.
    static func rootPages(of names: [String], atPath path: String) throws -> [Int] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            try Int.fetchAll(db, sql: "SELECT rootpage FROM sqlite_master WHERE name IN (\(names.map { _ in "?" }.joined(separator: ", ")))", arguments: StatementArguments(names))
        }
    }

    /// Runs `sql` on the file at `path`, creating it if missing.
    static func execute(_ sql: String, atPath path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
    }
}

extension SQLiteGameStore {
    /// The writer connection's `PRAGMA synchronous` (2 is FULL, 1 is NORMAL).
    func synchronousSetting() async throws -> Int {
        try await self.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }
}
