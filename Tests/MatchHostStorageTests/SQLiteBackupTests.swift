import Dispatch
import Foundation
import MatchHostCore
import MatchHostSQLite
import Testing

@Suite("Storage: SQLite backup and restore")
struct SQLiteBackupTests {
    /// Backups taken while moves are being committed: each is one moment's state, every game's
    /// stored state agreeing with its move log, and a store opened on the copy continues it.
    @Test func aBackupTakenDuringWritesIsOneConsistentSnapshot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let games: [MatchID] = [1, 2, 3, 4]
        for game in games {
            try await store.createTurnGame(matchID: game, game: "fourinarow", mode: "", players: ["a\(game)", "b\(game)"], startedAt: 1_000, state: Self.state(0))
        }
        let movesPerGame = 150
        // Each move's state is its number, so a game's state must equal its log's length.
        @Sendable func play(_ numbers: ClosedRange<Int>) async throws {
            for number in numbers {
                for game in games {
                    try await store.appendMove(
                        matchID: game, moveNumber: number, move: [UInt8(number % 7)], state: Self.state(number),
                        at: UnixMillis(milliseconds: Int64(1_000 + number)))
                }
            }
        }
        try await play(1...50)
        let writer = Task { try await play(51...movesPerGame) }
        var backups: [String] = []
        while backups.count < 5 {
            let path = directory.file("backup-\(backups.count).sqlite")
            _ = try await Self.offThread { try SQLiteBackup.backup(from: store.path, to: path) }
            backups.append(path)
        }
        try await writer.value
        try await store.close()

        var overlapped = false
        for path in backups {
            let copyDirectory = try TemporaryDirectory()
            defer { copyDirectory.remove() }
            _ = try await Self.offThread { try SQLiteBackup.restore(from: path, toDirectory: copyDirectory.path) }
            let copy = try await SQLiteGameStore.open(directory: copyDirectory.path, options: SQLiteStoreOptions(createIfMissing: false))
            let running = try await copy.activeTurnGames().sorted { $0.matchID < $1.matchID }
            #expect(running.map(\.matchID) == games)
            var counts: [Int] = []
            for game in running {
                let log = try await copy.moveLog(matchID: game.matchID)
                #expect(log.map(\.moveNumber) == Array(0..<log.count).map { $0 + 1 })
                #expect(game.moveCount == log.count)
                #expect(game.state == Self.state(log.count))
                counts.append(log.count)
            }
            // Moves are committed one at a time, by number and then by game: one moment's
            // counts fall by at most one from the first game to the last.
            #expect(counts == counts.sorted(by: >) && (counts.first ?? 0) - (counts.last ?? 0) <= 1, "\(counts)")
            #expect(counts.allSatisfy { (50...movesPerGame).contains($0) }, "\(counts)")
            if counts.contains(where: { $0 > 50 }) { overlapped = true }
            // The copy is a database the server can go on with.
            if let game = running.first {
                let next = game.moveCount + 1
                try await copy.appendMove(matchID: game.matchID, moveNumber: next, move: [1], state: Self.state(next), at: 9_000)
                #expect(try await copy.moveLog(matchID: game.matchID).count == next)
            }
            try await copy.close()
        }
        #expect(overlapped, "no backup saw a move made after it was started")
    }

    @Test func aBackupNeverOverwritesAFileAndLeavesNothingWhenItFails() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        try await store.close()
        let existing = directory.file("existing.sqlite")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))

        #expect(throws: SQLiteBackupError.self) { try SQLiteBackup.backup(from: store.path, to: existing) }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")

        let notADatabase = directory.file("notes.txt")
        try Data("not a database, and long enough to have a header's worth of bytes in it".utf8).write(to: URL(fileURLWithPath: notADatabase))
        #expect(throws: SQLiteStoreError.self) { try SQLiteBackup.backup(from: notADatabase, to: directory.file("copy.sqlite")) }
        #expect(throws: SQLiteStoreError.self) { try SQLiteBackup.backup(from: directory.file("missing.sqlite"), to: directory.file("copy.sqlite")) }
        #expect(throws: SQLiteBackupError(path: directory.file("nowhere"), reason: "the directory does not exist; create it first")) {
            try SQLiteBackup.backup(from: store.path, to: directory.file("nowhere/copy.sqlite"))
        }
        // Checking names what it was given: a directory, an empty database.
        #expect(throws: SQLiteStoreError(.notADatabase, path: directory.path, reason: "it is a directory, not a database file")) {
            try SQLiteBackup.check(backup: directory.path)
        }
        let empty = directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect(throws: SQLiteBackupError(path: empty, reason: "it holds no MatchHost tables (an empty database)")) {
            try SQLiteBackup.check(backup: empty)
        }
        // No copy and no temporary file were left behind.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("copy") }
        #expect(left == [])
    }

    @Test func restoreKeepsTheDatabaseItReplacesWithItsLog() async throws {
        let source = try TemporaryDirectory()
        defer { source.remove() }
        let target = try TemporaryDirectory()
        defer { target.remove() }
        let original = try await SQLiteGameStore.open(directory: source.path)
        try await original.createPlayer(id: "backed-up", alias: "Backed Up", createdAt: 1_000)
        try await original.close()
        let backup = source.file("backup.sqlite")
        #expect(try SQLiteBackup.backup(from: original.path, to: backup).players == 1)

        // The target's own database, still open (so its latest commits are in its -wal).
        let replaced = try await SQLiteGameStore.open(directory: target.path)
        try await replaced.createPlayer(id: "replaced", alias: "Replaced", createdAt: 2_000)
        let restored = try SQLiteBackup.restore(from: backup, toDirectory: target.path)
        try await replaced.close()
        #expect(restored.summary.players == 1)
        let asidePath = try #require(restored.replaced)

        let reopened = try await SQLiteGameStore.open(directory: target.path, options: SQLiteStoreOptions(createIfMissing: false))
        #expect(try await reopened.player(id: "replaced") == nil)
        try await reopened.close()
        // What was replaced is whole under its new name: its log moved with it.
        let kept = try await SQLiteGameStore.open(path: asidePath, options: SQLiteStoreOptions(createIfMissing: false))
        #expect(try await kept.player(id: "replaced")?.alias == "Replaced")
        try await kept.close()
    }

    /// A server killed with its last commits in the log: the files as they were on disk.
    @Test func restoreFoldsAStoppedDatabasesLogIntoTheCopyItKeeps() async throws {
        let (backup, target, crashed) = try await Self.backupAndCrashImage()
        defer { backup.remove(); target.remove() }

        let restored = try SQLiteBackup.restore(from: backup.file("backup.sqlite"), toDirectory: target.path)
        let aside = try #require(restored.replaced)
        #expect(!FileManager.default.fileExists(atPath: aside + "-wal"), "the log was folded into the copy kept")
        #expect(!FileManager.default.fileExists(atPath: target.file("matchhost.sqlite-wal")))
        try await Self.expectPlayer("backed-up", in: target.file("matchhost.sqlite"), not: crashed)
        try await Self.expectPlayer(crashed, in: aside, not: "backed-up")
    }

    /// A log whose database was deleted must not be applied to the restored file.
    @Test func restoreMovesAsideALogLeftWithoutItsDatabase() async throws {
        let (backup, target, crashed) = try await Self.backupAndCrashImage()
        defer { backup.remove(); target.remove() }
        try FileManager.default.removeItem(atPath: target.file("matchhost.sqlite"))

        let restored = try SQLiteBackup.restore(from: backup.file("backup.sqlite"), toDirectory: target.path)
        let aside = try #require(restored.replaced)
        #expect(FileManager.default.fileExists(atPath: aside + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: target.file("matchhost.sqlite-wal")))
        try await Self.expectPlayer("backed-up", in: target.file("matchhost.sqlite"), not: crashed)
    }

    /// A backup holding the player "backed-up", and in another directory the files of a
    /// database whose last commit (the player it returns) is only in its log.
    private static func backupAndCrashImage() async throws -> (backup: TemporaryDirectory, target: TemporaryDirectory, crashed: String) {
        let backup = try TemporaryDirectory()
        let target = try TemporaryDirectory()
        let original = try await SQLiteGameStore.open(directory: backup.path)
        try await original.createPlayer(id: "backed-up", alias: "Backed Up", createdAt: 1_000)
        try await original.close()
        _ = try SQLiteBackup.backup(from: original.path, to: backup.file("backup.sqlite"))

        let running = try await SQLiteGameStore.open(directory: backup.file("running"))
        try await running.createPlayer(id: "crashed", alias: "In the log", createdAt: 2_000)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: running.path + suffix, toPath: target.file("matchhost.sqlite") + suffix)
        }
        try await running.close()
        let walSize = try FileManager.default.attributesOfItem(atPath: target.file("matchhost.sqlite-wal"))[.size] as? Int
        #expect((walSize ?? 0) > 0)
        return (backup, target, "crashed")
    }

    private static func expectPlayer(_ present: String, in path: String, not absent: String) async throws {
        let store = try await SQLiteGameStore.open(path: path, options: SQLiteStoreOptions(readOnly: true))
        #expect(try await store.player(id: present) != nil, "\(present) in \(path)")
        #expect(try await store.player(id: absent) == nil, "\(absent) not in \(path)")
        try await store.close()
    }

    private static func state(_ moves: Int) -> [UInt8] {
        [UInt8(moves & 0xff), UInt8(moves >> 8)]
    }

    private static func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}
