import MatchHostCore
import Testing

@Suite("Storage: notices of matches that ended while their players were away")
struct EndNoticeStorageTests {
    @Test(arguments: StoreKind.allCases)
    func noticesAreKeptUntilDeletedOldestFirstTheFirstPerPlayerAndMatch(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.endNotices().isEmpty)
            try await store.recordEndNotices([
                MatchEndNotice(playerID: "b", matchID: 9, reason: "abandoned(left)", endedAt: 300),
                MatchEndNotice(playerID: "a", matchID: 9, reason: "abandoned(left)", endedAt: 300),
                MatchEndNotice(playerID: "a", matchID: 7, reason: "won by b", endedAt: 100),
                MatchEndNotice(playerID: "c", matchID: 8, reason: "draw", endedAt: 200),
            ])
            // The same player and match again leaves the notice kept as it is.
            try await store.recordEndNotices([MatchEndNotice(playerID: "c", matchID: 8, reason: "drawn game", endedAt: 250)])
            #expect(try await store.endNotices() == [
                MatchEndNotice(playerID: "a", matchID: 7, reason: "won by b", endedAt: 100),
                MatchEndNotice(playerID: "c", matchID: 8, reason: "draw", endedAt: 200),
                MatchEndNotice(playerID: "a", matchID: 9, reason: "abandoned(left)", endedAt: 300),
                MatchEndNotice(playerID: "b", matchID: 9, reason: "abandoned(left)", endedAt: 300),
            ])

            // Only the player's notices of those matches go; an id without one changes nothing.
            try await store.deleteEndNotices(playerID: "a", matchIDs: [9, 8, UInt64.max])
            #expect(try await store.endNotices().map { "\($0.playerID)\($0.matchID)" } == ["a7", "c8", "b9"])

            #expect(try await store.deleteEndNotices(endedBefore: 150) == 1)
            #expect(try await store.endNotices().map { "\($0.playerID)\($0.matchID)" } == ["c8", "b9"])
            #expect(try await store.deleteEndNotices(endedBefore: 150) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func endingInterruptedMatchesLeavesEachOfTheirPlayersWhoCanSignInANoticeInTheSameCall(kind: StoreKind) async throws {
        try await kind.withStore { store in
            // Players who sign in with a device; "b" stands for a Cat Race tutorial client.
            for player in ["a", "c", "d", "e"] {
                try await store.createPlayerWithDevice(id: player, alias: player, deviceID: "device-\(player)", secretHash: [1], createdAt: 1)
            }
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a", "b"], startedAt: 10)
            try await store.recordInterimResult(
                matchID: 1, result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost),
                ]))
            try await store.recordMatchStarted(id: 2, game: "disks", mode: "", players: ["c"], startedAt: 20)
            try await store.recordMatchStarted(id: 3, game: "disks", mode: "", players: ["d"], startedAt: 30)
            try await store.recordMatchAbandoned(matchID: 3, endedAt: 40, reason: "left")
            try await store.createTurnGame(matchID: 4, game: "fourinarow", mode: "", players: ["e", "f"], startedAt: 5, state: [0])

            _ = try await store.endInterruptedMatches(at: 1_000, reason: "server restarted", notice: "abandoned(server restarted)")

            // Finished with its interim result or abandoned, it ended because the server did;
            // matches already over and turn-based games (which continue) leave none, nor does
            // a player who cannot sign in.
            #expect(try await store.endNotices() == ["a", "c"].map { player in
                MatchEndNotice(playerID: player, matchID: player == "c" ? 2 : 1, reason: "abandoned(server restarted)", endedAt: 1_000)
            })
            try await store.recordMatchStarted(id: 5, game: "disks", mode: "", players: ["g"], startedAt: 1_100)
            _ = try await store.endInterruptedMatches(at: 2_000, reason: "server restarted", notice: nil)
            #expect(try await store.endNotices().count == 2, "no notice asked for, none left")
        }
    }
}
