import Foundation
import MatchHostProcessTesting
@testable import MatchHostSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost serve` with a database it cannot use: one clear line, a non-zero exit, nothing bound.
@Suite(.serialized) struct ServeStorageTests {
    /// Runs `matchhost serve` on `data` until it exits.
    private func serveUntilExit(data: URL) async throws -> FinishedProcess {
        try await runMatchHostToExit([
            "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0", "--data", data.path,
            "--log-level", "warning",
        ])
    }

    private func makeDataDirectory(_ name: String) throws -> URL {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        return data
    }

    @Test func theMemoryStoreServesWithoutOpeningTheDatabase() async throws {
        let data = try self.makeDataDirectory("memory")
        defer { try? FileManager.default.removeItem(at: data) }
        // A file the SQLite store would refuse: with --store memory it is not even read.
        let database = data.appendingPathComponent(SQLiteGameStore.fileName)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        try garbage.write(to: database)

        let process = try ChildProcess(
            MatchHostBinary.url.path,
            [
                "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--no-admin", "--web-port", "0", "--data", data.path,
                "--store", "memory", "--log-level", "warning",
            ],
            standardOutput: .pipe)
        defer { if process.isRunning { process.terminate() } }
        let printed = await readLines(2, from: try #require(process.standardOutput))
        #expect(String(decoding: printed, as: UTF8.self).contains("native listening on 127.0.0.1:"))
        process.terminate()
        await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        #expect(try Data(contentsOf: database) == garbage)
        #expect(!FileManager.default.fileExists(atPath: database.path + "-wal"))
    }

    /// A data directory whose database is gone (deleted, moved, or `--data` pointing at another
    /// copy) but whose token key is still there is refused: an empty new database would make
    /// every returning device a new player. A first start, and `--store memory`, go ahead.
    @Test func aDatabaseGoneFromADataDirectoryAServerUsedStopsTheServer() async throws {
        let data = try self.makeDataDirectory("missing")
        defer { try? FileManager.default.removeItem(at: data) }
        let database = data.appendingPathComponent(SQLiteGameStore.fileName)
        let key = data.appendingPathComponent("token-signing.key")

        // --store memory keeps no token key: a later SQLite start is a first start.
        let memory = try await ServeProcess.start(data: data, arguments: ["--store", "memory"])
        await memory.stop(with: SIGTERM)
        #expect(!FileManager.default.fileExists(atPath: key.path))
        let first = try await ServeProcess.start(data: data)
        await first.stop(with: SIGTERM)
        #expect(FileManager.default.fileExists(atPath: database.path))
        let keyBytes = try Data(contentsOf: key)

        try FileManager.default.removeItem(at: database)
        let run = try await self.serveUntilExit(data: data)
        #expect(run.status == 2)
        #expect(!run.stdout.contains("listening"))
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("matchhost: \(database.path) is missing, but \(key.path) shows that a server stored its data here"))
        #expect(!FileManager.default.fileExists(atPath: database.path), "nothing created")
        #expect(try Data(contentsOf: key) == keyBytes)
    }

    @Test func aFileThatIsNotADatabaseStopsTheServerBeforeItBinds() async throws {
        let data = try self.makeDataDirectory("notadb")
        defer { try? FileManager.default.removeItem(at: data) }
        let database = data.appendingPathComponent(SQLiteGameStore.fileName)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        try garbage.write(to: database)

        let run = try await self.serveUntilExit(data: data)
        #expect(run.status == 2)
        #expect(!run.stdout.contains("listening"))
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(run.stderr.contains("cannot open database \(database.path)"))
        #expect(run.stderr.contains("not a database"))
        // Left exactly as it was.
        #expect(try Data(contentsOf: database) == garbage)
    }

    /// Damage the server's start would refuse (its quick check reads every page) can still meet
    /// a read-only command, which does not read the whole file: one line that says so, not SQL.
    @Test func aReadOnlyCommandMeetingDamageSaysSoInOneLine() async throws {
        let data = try self.makeDataDirectory("damaged")
        defer { try? FileManager.default.removeItem(at: data) }
        let database = data.appendingPathComponent(SQLiteGameStore.fileName)
        let store = try await SQLiteGameStore.open(directory: data.path)
        try await store.createPlayer(id: "0da3ef31aa", alias: "Abby", createdAt: 1)
        try await store.close()  // the last connection out copies the log into the file
        #expect(!FileManager.default.fileExists(atPath: database.path + "-wal"))
        // The player table's and its key's first pages overwritten, as a bad block would be.
        let handle = try #require(FileHandle(forUpdatingAtPath: database.path))
        for page in try SQLiteSchema.rootPages(of: ["player", "sqlite_autoindex_player_1"], atPath: database.path) {
            try handle.seek(toOffset: UInt64(page - 1) * 4096)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        }
        try handle.close()

        let run = try await runMatchHostToExit(["player", "0da3ef31aa", "--data", data.path])
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "matchhost: cannot read \(data.path): storage failed: the database is damaged (database disk image is malformed); restore it from a backup (matchhost restore)\n")
    }

    @Test func aDatabaseFromANewerMatchHostStopsTheServerBeforeItBinds() async throws {
        let data = try self.makeDataDirectory("newer")
        defer { try? FileManager.default.removeItem(at: data) }
        let database = data.appendingPathComponent(SQLiteGameStore.fileName)
        try SQLiteSchema.createFile(atPath: database.path, migratedUpTo: "v2")
        try SQLiteSchema.execute("INSERT INTO grdb_migrations (identifier) VALUES ('v99')", atPath: database.path)

        let run = try await self.serveUntilExit(data: data)
        #expect(run.status == 2)
        #expect(!run.stdout.contains("listening"))
        #expect(run.stderr.split(separator: "\n").count == 1)
        #expect(run.stderr.contains("cannot open database \(database.path)"))
        #expect(run.stderr.contains("newer MatchHost"))
        #expect(try SQLiteSchema.appliedMigrations(atPath: database.path) == ["v1", "v2", "v99"])
    }
}
