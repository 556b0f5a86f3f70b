import Foundation
import MatchHostProcessTesting
import MatchHostClient
import MatchHostCore
import MatchHostSQLite
import MatchHostWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `kill -9` in the middle of a race on the Cat Race port, and a restart on the same data.
@Suite(.serialized) struct CatRaceCrashRestartTests {
    @Test func aRaceCutShortBySIGKILLIsRecordedAbandonedAndItsPlayersAreKept() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-catrace-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }

        let first = try await ServeProcess.start(data: data)
        let abby = try await CatRaceClient.connect(
            host: "127.0.0.1", port: first.catRacePort, playerID: "G:abby", alias: "Abby", continueMatch: true)
        #expect(try await abby.next(timeout: .seconds(10)) == .notInMatch)
        let bo = try await CatRaceClient.connect(host: "127.0.0.1", port: first.catRacePort, playerID: "G:bo", alias: "Bo", continueMatch: true)
        #expect(try await bo.next(timeout: .seconds(10)) == .notInMatch)
        try await abby.send(.startMatch(StartMatch(playerIDs: ["G:abby", "G:bo"])))
        #expect(try await bo.next(timeout: .seconds(10)) != nil)  // MATCH_STARTED
        try await abby.moved(to: 35)
        #expect(try await bo.next(timeout: .seconds(10)) == .playerMoved(PlayerMoved(playerIndex: 0, posX: 35)))
        // The race's record is written off the loop; kill only once it is on disk.
        try await Self.waitForRunningRace(in: data)
        await first.stop(with: SIGKILL)
        await abby.close()
        await bo.close()

        // The next run records the race as abandoned before it takes players; Abby, back as
        // Zed, is the same player under her new alias.
        let second = try await ServeProcess.start(data: data)
        let zed = try await CatRaceClient.connect(
            host: "127.0.0.1", port: second.catRacePort, playerID: "G:abby", alias: "Zed", continueMatch: true)
        #expect(try await zed.next(timeout: .seconds(10)) == .notInMatch)
        await zed.close()
        await second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        let store = try await SQLiteGameStore.open(directory: data.path)
        let abbyRecord = try #require(try await store.player(externalIdentity: .catRaceTutorial("G:abby")))
        let boRecord = try #require(try await store.player(externalIdentity: .catRaceTutorial("G:bo")))
        #expect(abbyRecord.alias == "Zed")
        let history = try await store.matchHistory(playerID: abbyRecord.id, limit: 10)
        #expect(history.map(\.players) == [[abbyRecord.id, boRecord.id]])
        #expect(history.first?.state == .abandoned(reason: "server restarted"))
        #expect(try await store.stats(game: "catrace", playerID: abbyRecord.id) == nil, "an abandoned race counts for nobody")
        try await store.close()
    }

    /// A race's GAME_OVER goes out only once the match's standing is committed, so `kill -9`
    /// right after it loses nothing: the restarted server finishes the match with the races
    /// won, counted in the players' stats, rather than abandoning it.
    @Test func racesWonBeforeSIGKILLCountAfterTheRestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-catrace-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }

        let first = try await ServeProcess.start(data: data, arguments: ["--max-tap-rate", "10000"])
        let abby = try await CatRaceClient.connect(
            host: "127.0.0.1", port: first.catRacePort, playerID: "G:abby", alias: "Abby", continueMatch: true)
        #expect(try await abby.next(timeout: .seconds(10)) == .notInMatch)
        let bo = try await CatRaceClient.connect(host: "127.0.0.1", port: first.catRacePort, playerID: "G:bo", alias: "Bo", continueMatch: true)
        #expect(try await bo.next(timeout: .seconds(10)) == .notInMatch)
        try await abby.startMatch(with: ["G:abby", "G:bo"])
        #expect(try await abby.next(timeout: .seconds(10))?.matchStarted != nil)
        #expect(try await bo.next(timeout: .seconds(10))?.matchStarted != nil)
        let winners = [0, 1, 0]
        for (race, winner) in winners.enumerated() {
            let (mover, watcher) = winner == 0 ? (abby, bo) : (bo, abby)
            var x = CatRaceTrack.startX
            while x < CatRaceTrack.finishX {
                x += CatRaceTrack.stepX
                try await mover.moved(to: x)
                #expect(try await watcher.next(timeout: .seconds(10)) == .playerMoved(PlayerMoved(playerIndex: UInt8(winner), posX: x)))
            }
            #expect(try await watcher.next(timeout: .seconds(10)) == .gameOver(GameOver(winnerIndex: UInt8(winner))))
            #expect(try await mover.next(timeout: .seconds(10)) == .gameOver(GameOver(winnerIndex: UInt8(winner))))
            guard race < winners.count - 1 else { break }
            try await watcher.restartMatch()
            #expect(try await abby.next(timeout: .seconds(10))?.matchStarted != nil)
            #expect(try await bo.next(timeout: .seconds(10))?.matchStarted != nil)
        }
        // No waiting for the disk: the last GAME_OVER came after its standing was committed.
        await first.stop(with: SIGKILL)
        await abby.close()
        await bo.close()

        let second = try await ServeProcess.start(data: data)
        await second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        let store = try await SQLiteGameStore.open(directory: data.path)
        let abbyRecord = try #require(try await store.player(externalIdentity: .catRaceTutorial("G:abby")))
        let boRecord = try #require(try await store.player(externalIdentity: .catRaceTutorial("G:bo")))
        let history = try await store.matchHistory(playerID: abbyRecord.id, limit: 10)
        #expect(history.count == 1)
        #expect(
            history.first?.state
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: abbyRecord.id, outcome: .won, score: 2, summary: "won 2 races"),
                        PlayerResultRecord(playerID: boRecord.id, outcome: .lost, score: 1, summary: "won 1 race"),
                    ])))
        let abbyStats = try #require(try await store.stats(game: "catrace", playerID: abbyRecord.id))
        let boStats = try #require(try await store.stats(game: "catrace", playerID: boRecord.id))
        #expect([abbyStats.played, abbyStats.won, abbyStats.lost] == [Int]([1, 1, 0]))
        #expect([boStats.played, boStats.won, boStats.lost] == [Int]([1, 0, 1]))
        try await store.close()
    }

    /// Reads the running server's database (WAL lets a reader in) until a race is recorded there.
    private static func waitForRunningRace(in data: URL) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
            var recorded: [MatchRecord] = []
            if let abby = try await store.player(externalIdentity: .catRaceTutorial("G:abby")) {
                recorded = try await store.matchHistory(playerID: abby.id, limit: 1)
            }
            try await store.close()
            if recorded.first?.players.count == 2 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TimedOut(what: "the race's record in the database")
    }
}
