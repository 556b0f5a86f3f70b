import Foundation
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

        // The next run records the race as abandoned before it takes players; Abby is still Abby.
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
        #expect(abbyRecord.alias == "Abby")
        let history = try await store.matchHistory(playerID: abbyRecord.id, limit: 10)
        #expect(history.map(\.players) == [[abbyRecord.id, boRecord.id]])
        #expect(history.first?.state == .abandoned(reason: "server restarted"))
        #expect(try await store.stats(game: "catrace", playerID: abbyRecord.id) == nil, "an abandoned race counts for nobody")
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
