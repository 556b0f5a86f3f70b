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

    /// Every table, index, view and trigger of the file at `path`, as SQLite holds them (type,
    /// name and the SQL that made them, which ALTER TABLE edits in place), sorted.
    static func schema(atPath path: String) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").map { row in
                "\(row["type"] as String) \(row["name"] as String): \(row["sql"] as String? ?? "")"
            }
        }
    }

    /// Runs a `sqlite3 .dump` (which holds its own transaction) on the file at `path`, creating it.
    static func load(dump sql: String, atPath path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
        try queue.close()
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
