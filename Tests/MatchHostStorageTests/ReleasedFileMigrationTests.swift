import Foundation
import MatchHostCore
import Testing

@testable import MatchHostSQLite

/// A database an older release really wrote, not one this build's migrator made to look old:
/// `Fixtures/matchhost-v9.sql` is the `sqlite3 .dump` of the data directory of session 27's
/// `matchhost serve` (schema v9) after Four in a Row and Disks benches, a Cat Race of two
/// tutorial bots, a ban (`matchhost ban`), and a SIGKILL in the middle of a Four in a Row game.
/// If a migration released before were edited, a file that release wrote would no longer
/// become what a new file is: this is the test that says so.
@Suite struct ReleasedFileMigrationTests {
    static let banned = "28c62f074bd39504aeb808cdb6492173"

    static func releasedFile(in directory: TemporaryDirectory) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/matchhost-v9.sql")
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.load(dump: try String(contentsOf: fixture, encoding: .utf8), atPath: path)
        return path
    }

    @Test func aFileOfAnOlderReleaseBecomesWhatANewFileIs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.releasedFile(in: directory)
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Array(SQLiteOpeningTests.everyMigration.prefix(9)))
        try await SQLiteGameStore.open(path: path).close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == SQLiteOpeningTests.everyMigration)

        let fresh = directory.file("fresh.sqlite")
        try await SQLiteGameStore.open(path: fresh).close()
        let migrated = try SQLiteSchema.schema(atPath: path)
        #expect(migrated == (try SQLiteSchema.schema(atPath: fresh)))
        #expect(migrated.count > 20, "\(migrated)")
    }

    @Test func aFileOfAnOlderReleaseKeepsItsPlayersResultsBansAndGameInPlay() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(path: try Self.releasedFile(in: directory))

        // The game the SIGKILL interrupted is there to continue, with every move it stored.
        let games = try await store.activeTurnGames()
        #expect(games.map(\.matchID) == [7])
        #expect(games.first?.moveCount == 12)
        #expect(try await store.moveLog(matchID: 7).map(\.moveNumber) == Array(1...12))

        // The finished matches count: each game's board has its players.
        #expect(try await store.leaderboard(game: "fourinarow", limit: 10).count == 4)
        #expect(try await store.leaderboard(game: "disks", limit: 10).count == 2)
        #expect(try await store.leaderboard(game: "catrace", limit: 10).count == 2)

        // The Cat Race bots keep their players; the benches' devices still sign in.
        let bot = try #require(try await store.player(externalIdentity: .catRaceTutorial("bot-f6370ad6-0-0")))
        #expect(bot.id == "75ecfde151f5c2efbc7ea5d9e95c7aeb")
        let device = try #require(try await store.deviceIdentity(deviceID: "bench-4af3ad02-fourinarow-0-0"))
        #expect(device.playerID == Self.banned)
        #expect(device.secretHash.count == 32)

        // The ban holds, and starts the ban record v10 added.
        #expect(try await store.bannedPlayers()[Self.banned]?.reason == "cheating")
        #expect(try await store.banRecords(playerID: Self.banned, limit: 10).map(\.ban.reason) == ["cheating"])

        // And the file takes what v10, v11 and v12 added; no alias was locked before.
        try await store.putLinkCode(LinkCodeRecord(playerID: bot.id, digest: [1, 2], expiresAt: 9_000_000_000_000), at: 1)
        #expect(try await store.linkCodes(validAt: 1).map(\.playerID) == [bot.id])
        #expect(try await store.player(id: Self.banned)?.aliasLocked == false)
        _ = try await store.setAliasByOperator(playerID: Self.banned, alias: nil, locked: true)
        await #expect(throws: GameStoreError.aliasLocked(Self.banned)) { try await store.setAlias(playerID: Self.banned, alias: "Cheater") }
        try await store.close()
    }
}
