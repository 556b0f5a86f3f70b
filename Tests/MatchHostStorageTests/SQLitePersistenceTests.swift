import Foundation
import MatchHostCore
@testable import MatchHostSQLite
import Testing

@Suite("SQLite store: what survives closing and reopening")
struct SQLitePersistenceTests {
    @Test func everythingCommittedIsThereAfterReopening() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let first = try await SQLiteGameStore.open(directory: directory.path)
        try await first.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "dev", secretHash: [9, 9], createdAt: 1)
        try await first.createPlayer(id: "p2", alias: "Bob", createdAt: 2)
        try await first.createPlayerWithExternalIdentity(id: "p4", alias: "Abby", identity: .catRaceTutorial("G:4"), createdAt: 3)
        try await first.writeValue(playerID: "p1", key: "level", value: [4, 2])
        try await first.recordMatchStarted(id: 41, game: "race", mode: "", players: ["p1", "p2"], startedAt: 10)
        try await first.recordMatchFinished(
            matchID: 41, endedAt: 20,
            result: MatchResultRecord(players: [PlayerResultRecord(playerID: "p1", outcome: .won), PlayerResultRecord(playerID: "p2", outcome: .lost)]))
        try await first.recordMatchStarted(id: 42, game: "race", mode: "", players: ["p2"], startedAt: 30)
        try await first.createTurnGame(matchID: 43, game: "chess", mode: "", players: ["p1", "p2"], startedAt: 40, state: [0])
        try await first.appendMove(matchID: 43, moveNumber: 1, move: [7], state: [1], at: 50)
        // Refused calls in between must leave no trace after reopening either.
        await #expect(throws: GameStoreError.duplicateMove(43, moveNumber: 1)) {
            try await first.appendMove(matchID: 43, moveNumber: 1, move: [8], state: [66], at: 60)
        }
        await #expect(throws: GameStoreError.deviceExists(deviceID: "dev")) {
            try await first.createPlayerWithDevice(id: "p3", alias: "Cy", deviceID: "dev", secretHash: [1], createdAt: 70)
        }
        try await first.close()

        let second = try await SQLiteGameStore.open(directory: directory.path)
        #expect(try await second.deviceIdentity(deviceID: "dev") == DeviceIdentityRecord(deviceID: "dev", playerID: "p1", secretHash: [9, 9], linkedAt: 1))
        #expect(try await second.player(id: "p3") == nil)
        #expect(try await second.player(externalIdentity: .catRaceTutorial("G:4")) == PlayerRecord(id: "p4", alias: "Abby", createdAt: 3, lastSeenAt: 3))
        #expect(try await second.readValue(playerID: "p1", key: "level") == [4, 2])
        #expect(try await second.stats(game: "race", playerID: "p1")?.rating == 1516)
        #expect(try await second.largestMatchID() == 43)
        #expect(try await second.activeTurnGames() == [
            TurnGameRecord(matchID: 43, game: "chess", mode: "", players: ["p1", "p2"], startedAt: 40, state: [1], moveCount: 1, lastMoveAt: 50),
        ])
        #expect(try await second.moveLog(matchID: 43) == [TurnMoveRecord(moveNumber: 1, move: [7], playedAt: 50)])
        #expect(try await second.endInterruptedMatches(at: 100, reason: "restart", notice: nil).map(\.id) == [42])
        try await second.close()

        let afterClose = await #expect(throws: GameStoreError.self) { try await second.player(id: "p1") }
        guard case .storageFailed = afterClose else {
            Issue.record("a closed store should report a storage failure, not \(String(describing: afterClose))")
            return
        }
    }
}
