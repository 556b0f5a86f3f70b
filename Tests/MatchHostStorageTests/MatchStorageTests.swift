import MatchHostCore
import Testing

@Suite("Storage: matches, stats and ratings")
struct MatchStorageTests {
    @Test(arguments: StoreKind.allCases)
    func finishedMatchesUpdateStatsAndEloExactly(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "chess", mode: "ranked", players: ["a", "b"], startedAt: 100)
            let first = try await store.recordMatchFinished(
                matchID: 1, endedAt: 200,
                result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "b", outcome: .lost, score: 3, summary: "resigned"),
                    PlayerResultRecord(playerID: "a", outcome: .won, score: 7),
                ]))
            #expect(first == [
                PlayerStats(game: "chess", playerID: "a", played: 1, won: 1, lost: 0, drawn: 0, rating: 1516),
                PlayerStats(game: "chess", playerID: "b", played: 1, won: 0, lost: 1, drawn: 0, rating: 1484),
            ])

            try await store.recordMatchStarted(id: 2, game: "chess", mode: "ranked", players: ["a", "b"], startedAt: 300)
            try await store.recordMatchFinished(
                matchID: 2, endedAt: 400,
                result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost),
                ]))
            let a = try #require(try await store.stats(game: "chess", playerID: "a"))
            let b = try #require(try await store.stats(game: "chess", playerID: "b"))
            // 1516 vs 1484: expected score 0.545919..., so the winner gains 32 × 0.454... = 14.5305.
            #expect(abs(a.rating - 1530.5304984710244) < 1e-9)
            #expect(abs(b.rating - 1469.4695015289756) < 1e-9)
            #expect((a.played, a.won, a.lost, a.drawn) == (2, 2, 0, 0))
            #expect((b.played, b.won, b.lost, b.drawn) == (2, 0, 2, 0))

            // Three players, pairwise Elo averaged over the two opponents; c is new (1500).
            try await store.recordMatchStarted(id: 3, game: "chess", mode: "ranked", players: ["a", "b", "c"], startedAt: 500)
            let third = try await store.recordMatchFinished(
                matchID: 3, endedAt: 600,
                result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "c", outcome: .won), PlayerResultRecord(playerID: "a", outcome: .lost),
                    PlayerResultRecord(playerID: "b", outcome: .lost),
                ]))
            #expect(third.map(\.playerID) == ["a", "b", "c"])
            #expect(abs(third[0].rating - 1520.4376292281147) < 1e-9)
            #expect(abs(third[1].rating - 1463.5623707718853) < 1e-9)
            #expect(abs(third[2].rating - 1516.0) < 1e-9)

            // Other games keep their own numbers.
            #expect(try await store.stats(game: "go", playerID: "a") == nil)
            let stored = try #require(try await store.match(id: 1))
            #expect(stored.endedAt == 200)
            #expect(stored.state == .finished(MatchResultRecord(players: [
                PlayerResultRecord(playerID: "a", outcome: .won, score: 7),
                PlayerResultRecord(playerID: "b", outcome: .lost, score: 3, summary: "resigned"),
            ])))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func playersJoiningARunningMatchTakeTheNextSeatAndCountInItsResult(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 5, game: "disks", mode: "", players: ["a"], startedAt: 100)
            try await store.addMatchPlayer(matchID: 5, playerID: "b")
            try await store.addMatchPlayer(matchID: 5, playerID: "c")
            #expect(try await store.match(id: 5)?.players == ["a", "b", "c"])
            #expect(try await store.matchHistory(playerID: "c", limit: 10).map(\.id) == [5])
            await #expect(throws: GameStoreError.invalidMatch(5, reason: "player b is in the match already")) {
                try await store.addMatchPlayer(matchID: 5, playerID: "b")
            }
            await #expect(throws: GameStoreError.unknownMatch(6)) { try await store.addMatchPlayer(matchID: 6, playerID: "b") }
            // The result must name the player who joined late too.
            await #expect(throws: GameStoreError.invalidResult(5, reason: "the result must name exactly the match's players [\"a\", \"b\", \"c\"]")) {
                try await store.recordMatchFinished(
                    matchID: 5, endedAt: 200,
                    result: MatchResultRecord(players: [.init(playerID: "a", outcome: .won), .init(playerID: "b", outcome: .lost)]))
            }
            let stats = try await store.recordMatchFinished(
                matchID: 5, endedAt: 200,
                result: MatchResultRecord(players: [
                    .init(playerID: "c", outcome: .won), .init(playerID: "a", outcome: .lost), .init(playerID: "b", outcome: .lost),
                ]))
            #expect(stats.map(\.playerID) == ["a", "b", "c"])
            #expect(stats.map(\.won) == [0, 0, 1])
            await #expect(throws: GameStoreError.matchNotRunning(5)) { try await store.addMatchPlayer(matchID: 5, playerID: "d") }
            #expect(try await store.match(id: 5)?.players == ["a", "b", "c"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func drawsBetweenEqualsChangeNoRating(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 7, game: "go", mode: "", players: ["x", "y"], startedAt: 1)
            let stats = try await store.recordMatchFinished(
                matchID: 7, endedAt: 2,
                result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "x", outcome: .draw), PlayerResultRecord(playerID: "y", outcome: .draw),
                ]))
            #expect(stats.map(\.rating) == [1500, 1500])
            #expect(stats.map(\.drawn) == [1, 1])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func refusedResultsAndStartsChangeNothing(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "chess", mode: "", players: ["a", "b"], startedAt: 100)

            await #expect(throws: GameStoreError.matchExists(1)) {
                try await store.recordMatchStarted(id: 1, game: "chess", mode: "", players: ["c"], startedAt: 100)
            }
            await #expect(throws: GameStoreError.invalidMatch(2, reason: "a player appears twice in the match")) {
                try await store.recordMatchStarted(id: 2, game: "chess", mode: "", players: ["c", "c"], startedAt: 100)
            }
            await #expect(throws: GameStoreError.invalidMatch(3, reason: "a match needs at least one player")) {
                try await store.recordMatchStarted(id: 3, game: "chess", mode: "", players: [], startedAt: 100)
            }
            let idRange = "match ids run from 1 to 9223372036854775807"
            await #expect(throws: GameStoreError.invalidMatch(0, reason: idRange)) {
                try await store.recordMatchStarted(id: 0, game: "chess", mode: "", players: ["c"], startedAt: 100)
            }
            await #expect(throws: GameStoreError.invalidMatch(.max, reason: idRange)) {
                try await store.recordMatchStarted(id: .max, game: "chess", mode: "", players: ["c"], startedAt: 100)
            }
            let mismatch = GameStoreError.invalidResult(1, reason: #"the result must name exactly the match's players ["a", "b"]"#)
            await #expect(throws: mismatch) {
                try await store.recordMatchFinished(
                    matchID: 1, endedAt: 200, result: MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .won)]))
            }
            await #expect(throws: mismatch) {
                try await store.recordMatchFinished(
                    matchID: 1, endedAt: 200,
                    result: MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "z", outcome: .lost),
                    ]))
            }
            await #expect(throws: GameStoreError.invalidResult(1, reason: "player a appears twice in the result")) {
                try await store.recordMatchFinished(
                    matchID: 1, endedAt: 200,
                    result: MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "a", outcome: .lost),
                    ]))
            }
            await #expect(throws: GameStoreError.unknownMatch(99)) {
                try await store.recordMatchFinished(matchID: 99, endedAt: 200, result: MatchResultRecord(players: []))
            }

            #expect(try await store.stats(game: "chess", playerID: "a") == nil)
            #expect(try await store.match(id: 1)?.state == .running)
            #expect(try await store.match(id: 2) == nil)
            #expect(try await store.largestMatchID() == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func abandonedMatchesEndWithoutStats(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 5, game: "race", mode: "", players: ["a", "b"], startedAt: 100)
            try await store.recordMatchAbandoned(matchID: 5, endedAt: 150, reason: "both left")

            #expect(try await store.match(id: 5) == MatchRecord(
                id: 5, game: "race", mode: "", kind: .realTime, players: ["a", "b"], startedAt: 100, endedAt: 150,
                state: .abandoned(reason: "both left")))
            #expect(try await store.stats(game: "race", playerID: "a") == nil)
            await #expect(throws: GameStoreError.matchNotRunning(5)) {
                try await store.recordMatchAbandoned(matchID: 5, endedAt: 160, reason: "again")
            }
            await #expect(throws: GameStoreError.matchNotRunning(5)) {
                try await store.recordMatchFinished(
                    matchID: 5, endedAt: 160,
                    result: MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost),
                    ]))
            }
            await #expect(throws: GameStoreError.unknownMatch(6)) {
                try await store.recordMatchAbandoned(matchID: 6, endedAt: 160, reason: "none")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func endInterruptedAbandonsTheRunningRealTimeMatches(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a"], startedAt: 100)
            try await store.recordMatchStarted(id: 2, game: "race", mode: "", players: ["b", "c"], startedAt: 50)
            try await store.recordMatchStarted(id: 3, game: "race", mode: "", players: ["d"], startedAt: 10)
            try await store.recordMatchFinished(
                matchID: 3, endedAt: 20, result: MatchResultRecord(players: [PlayerResultRecord(playerID: "d", outcome: .won)]))
            try await store.createTurnGame(matchID: 4, game: "chess", mode: "", players: ["e", "f"], startedAt: 5, state: [0])

            let abandoned = try await store.endInterruptedMatches(at: 1_000, reason: "server restarted", notice: nil)

            #expect(abandoned == [
                MatchRecord(
                    id: 2, game: "race", mode: "", kind: .realTime, players: ["b", "c"], startedAt: 50, endedAt: 1_000,
                    state: .abandoned(reason: "server restarted")),
                MatchRecord(
                    id: 1, game: "race", mode: "", kind: .realTime, players: ["a"], startedAt: 100, endedAt: 1_000,
                    state: .abandoned(reason: "server restarted")),
            ])
            #expect(try await store.match(id: 1)?.state == .abandoned(reason: "server restarted"))
            #expect(try await store.match(id: 2)?.endedAt == 1_000)
            #expect(try await store.match(id: 3)?.state == .finished(MatchResultRecord(players: [PlayerResultRecord(playerID: "d", outcome: .won)])))
            #expect(try await store.match(id: 4)?.state == .running)
            #expect(try await store.activeTurnGames().map(\.matchID) == [4])
            #expect(try await store.endInterruptedMatches(at: 2_000, reason: "again", notice: nil).isEmpty)
        }
    }

    /// A match that runs rounds keeps each round's standing; a crash then ends it with that
    /// standing, counted in stats as a finished match, not abandoned.
    @Test(arguments: StoreKind.allCases)
    func interruptedMatchesFinishWithTheirInterimResult(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a", "b"], startedAt: 100)
            try await store.recordInterimResult(
                matchID: 1, result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "b", outcome: .won, score: 1, summary: "won 1 race"),
                    PlayerResultRecord(playerID: "a", outcome: .lost, score: 0, summary: "won 0 races"),
                ]))
            // The next round replaces it; a player who arrives after it has no line yet.
            try await store.recordInterimResult(
                matchID: 1, result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "a", outcome: .won, score: 1, summary: "won 1 race"),
                    PlayerResultRecord(playerID: "b", outcome: .won, score: 1, summary: "won 1 race"),
                ]))
            try await store.addMatchPlayer(matchID: 1, playerID: "c")
            // Kept, not counted: a running match changes no stats.
            #expect(try await store.stats(game: "race", playerID: "a") == nil)
            #expect(try await store.match(id: 1)?.state == .running)
            // Dropped when the match is abandoned after all.
            try await store.recordMatchStarted(id: 2, game: "race", mode: "", players: ["d", "e"], startedAt: 200)
            try await store.recordInterimResult(
                matchID: 2, result: MatchResultRecord(players: [
                    PlayerResultRecord(playerID: "d", outcome: .won), PlayerResultRecord(playerID: "e", outcome: .lost),
                ]))
            try await store.recordMatchAbandoned(matchID: 2, endedAt: 300, reason: "left")
            try await store.recordMatchStarted(id: 3, game: "race", mode: "", players: ["f"], startedAt: 300)

            let ended = try await store.endInterruptedMatches(at: 1_000, reason: "server restarted", notice: nil)

            let result = MatchResultRecord(players: [
                PlayerResultRecord(playerID: "a", outcome: .won, score: 1, summary: "won 1 race"),
                PlayerResultRecord(playerID: "b", outcome: .won, score: 1, summary: "won 1 race"),
                PlayerResultRecord(playerID: "c", outcome: .lost),
            ])
            #expect(ended == [
                MatchRecord(
                    id: 1, game: "race", mode: "", kind: .realTime, players: ["a", "b", "c"], startedAt: 100, endedAt: 1_000,
                    state: .finished(result)),
                MatchRecord(
                    id: 3, game: "race", mode: "", kind: .realTime, players: ["f"], startedAt: 300, endedAt: 1_000,
                    state: .abandoned(reason: "server restarted")),
            ])
            #expect(try await store.match(id: 1)?.state == .finished(result))
            #expect(try await store.match(id: 2)?.state == .abandoned(reason: "left"))
            let a = try #require(try await store.stats(game: "race", playerID: "a"))
            let c = try #require(try await store.stats(game: "race", playerID: "c"))
            #expect((a.played, a.won, a.lost) == (1, 1, 0))
            #expect((c.played, c.won, c.lost) == (1, 0, 1))
            #expect(a.rating > 1500 && c.rating < 1500)
            #expect(try await store.stats(game: "race", playerID: "d") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func interimResultsAreCheckedLikeResults(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a", "b"], startedAt: 100)
            await #expect(throws: GameStoreError.invalidResult(1, reason: "the result must name exactly the match's players [\"a\", \"b\"]")) {
                try await store.recordInterimResult(matchID: 1, result: MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .won)]))
            }
            await #expect(throws: GameStoreError.unknownMatch(9)) {
                try await store.recordInterimResult(matchID: 9, result: MatchResultRecord(players: []))
            }
            try await store.createTurnGame(matchID: 2, game: "chess", mode: "", players: ["a", "b"], startedAt: 5, state: [0])
            await #expect(throws: GameStoreError.invalidMatch(2, reason: "a turn-based match keeps no interim result")) {
                try await store.recordInterimResult(
                    matchID: 2, result: MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost),
                    ]))
            }
            try await store.recordMatchAbandoned(matchID: 1, endedAt: 200, reason: "left")
            await #expect(throws: GameStoreError.matchNotRunning(1)) {
                try await store.recordInterimResult(
                    matchID: 1, result: MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost),
                    ]))
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func historyIsNewestFirstAndLimited(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a", "b"], startedAt: 100)
            try await store.recordMatchStarted(id: 10, game: "race", mode: "", players: ["b", "a"], startedAt: 300)
            try await store.recordMatchStarted(id: 11, game: "race", mode: "", players: ["a"], startedAt: 300)
            try await store.recordMatchStarted(id: 12, game: "race", mode: "", players: ["a", "c"], startedAt: 200)
            try await store.recordMatchStarted(id: 13, game: "race", mode: "", players: ["c"], startedAt: 400)
            try await store.recordMatchAbandoned(matchID: 12, endedAt: 250, reason: "left")

            #expect(try await store.matchHistory(playerID: "a", limit: 3).map(\.id) == [11, 10, 12])
            #expect(try await store.matchHistory(playerID: "a", limit: 10).map(\.id) == [11, 10, 12, 1])
            #expect(try await store.matchHistory(playerID: "a", limit: 0).isEmpty)
            #expect(try await store.matchHistory(playerID: "nobody", limit: 5).isEmpty)
            // What another player may read: ended matches only, the limit counting only them.
            #expect(try await store.matchHistory(playerID: "a", limit: 1, readBy: .otherPlayer("z")).map(\.id) == [12])
            #expect(try await store.matchHistory(playerID: "a", limit: 10, readBy: .otherPlayer("z")).map(\.id) == [12])
            let second = try #require(try await store.matchHistory(playerID: "a", limit: 2).last)
            #expect(second.players == ["b", "a"], "players stay in seat order")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func privateMatchesShowInAnotherPlayersHistoryOnlyToTheirOwnPlayers(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let won = MatchResultRecord(players: [
                PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost),
            ])
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a", "b"], startedAt: 100, isPrivate: true)
            try await store.recordMatchFinished(matchID: 1, endedAt: 150, result: won)
            try await store.createTurnGame(
                matchID: 2, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 200, state: [0], isPrivate: true)
            try await store.recordMatchAbandoned(matchID: 2, endedAt: 250, reason: "left")
            try await store.recordMatchStarted(id: 3, game: "race", mode: "", players: ["a", "c"], startedAt: 300)
            try await store.recordMatchAbandoned(matchID: 3, endedAt: 350, reason: "left")
            try await store.recordMatchStarted(id: 4, game: "race", mode: "", players: ["a", "c"], startedAt: 400, isPrivate: true)
            try await store.recordMatchAbandoned(matchID: 4, endedAt: 450, reason: "left")

            #expect(try await store.matchHistory(playerID: "a", limit: 10).map(\.id) == [4, 3, 2, 1])
            #expect(try await store.matchHistory(playerID: "a", limit: 10).map(\.isPrivate) == [true, false, true, true])
            #expect(try await store.match(id: 2)?.isPrivate == true)
            #expect(try await store.match(id: 3)?.isPrivate == false)
            // b played in 1 and 2, c in 3 and 4: each sees the private ones it was in.
            #expect(try await store.matchHistory(playerID: "a", limit: 10, readBy: .otherPlayer("b")).map(\.id) == [3, 2, 1])
            #expect(try await store.matchHistory(playerID: "a", limit: 10, readBy: .otherPlayer("c")).map(\.id) == [4, 3])
            #expect(try await store.matchHistory(playerID: "a", limit: 10, readBy: .otherPlayer("z")).map(\.id) == [3])
            // The limit counts only what the reader is shown.
            #expect(try await store.matchHistory(playerID: "b", limit: 1, readBy: .otherPlayer("c")).isEmpty)
            #expect(try await store.matchHistory(playerID: "c", limit: 1, readBy: .otherPlayer("z")).map(\.id) == [3])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func largestMatchIDCoversBothKinds(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.largestMatchID() == 0)
            try await store.recordMatchStarted(id: 5, game: "race", mode: "", players: ["a"], startedAt: 1)
            try await store.recordMatchStarted(id: 3, game: "race", mode: "", players: ["a"], startedAt: 2)
            #expect(try await store.largestMatchID() == 5)
            try await store.createTurnGame(matchID: 9, game: "chess", mode: "", players: ["a", "b"], startedAt: 3, state: [])
            #expect(try await store.largestMatchID() == 9)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func reservedMatchIDsCountAsUsedAndNeverShrink(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.reserveMatchIDs(through: 1_000)
            #expect(try await store.largestMatchID() == 1_000)
            try await store.reserveMatchIDs(through: 10)
            #expect(try await store.largestMatchID() == 1_000)
            try await store.recordMatchStarted(id: 1_500, game: "race", mode: "", players: ["a"], startedAt: 1)
            #expect(try await store.largestMatchID() == 1_500, "a stored match beyond the reservation")
            try await store.reserveMatchIDs(through: 2_000)
            #expect(try await store.largestMatchID() == 2_000)
        }
    }
}
