import MatchHostCore
import Testing

@Suite("Storage: leaderboards")
struct LeaderboardStorageTests {
    /// Eight players whose order uses every tie-break: a, c (1516, 1 win) by id; h, i (1500
    /// and 1 win each: both won the same match, which Elo scores as a draw) before e, f (1500,
    /// a draw, no win); then b, d (1484).
    private func playEightPlayers(_ store: any GameStore) async throws {
        try await store.createPlayer(id: "a", alias: "Ann", createdAt: 1)
        try await store.createPlayer(id: "e", alias: "Eve", createdAt: 1)
        var id: MatchID = 0
        func play(_ results: [(PlayerID, PlayerOutcome)]) async throws {
            id += 1
            try await store.recordMatchStarted(id: id, game: "chess", mode: "", players: results.map(\.0), startedAt: UnixMillis(milliseconds: Int64(id)))
            try await store.recordMatchFinished(
                matchID: id, endedAt: UnixMillis(milliseconds: Int64(id)),
                result: MatchResultRecord(players: results.map { PlayerResultRecord(playerID: $0.0, outcome: $0.1) }))
        }
        try await play([("d", .lost), ("c", .won)])
        try await play([("a", .won), ("b", .lost)])
        try await play([("f", .draw), ("e", .draw)])
        try await play([("i", .won), ("h", .won)])
        // Another game must not leak into this one.
        try await store.recordMatchStarted(id: 100, game: "go", mode: "", players: ["z", "y"], startedAt: 1)
        try await store.recordMatchFinished(
            matchID: 100, endedAt: 2,
            result: MatchResultRecord(players: [PlayerResultRecord(playerID: "z", outcome: .won), PlayerResultRecord(playerID: "y", outcome: .lost)]))
    }

    @Test(arguments: StoreKind.allCases)
    func topEntriesAreOrderedAndRanked(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await self.playEightPlayers(store)

            let board = try await store.leaderboard(game: "chess", limit: 20)
            #expect(board.map(\.playerID) == ["a", "c", "h", "i", "e", "f", "b", "d"])
            #expect(board.map(\.rank) == Array(1...8))
            #expect(board.map(\.rating) == [1516, 1516, 1500, 1500, 1500, 1500, 1484, 1484])
            #expect(board.map(\.won) == [1, 1, 1, 1, 0, 0, 0, 0])
            #expect(board[0] == LeaderboardEntry(rank: 1, playerID: "a", alias: "Ann", rating: 1516, won: 1, played: 1))
            #expect(board[1].alias == nil)
            #expect(board[4].alias == "Eve")

            #expect(try await store.leaderboard(game: "chess", limit: 3).map(\.playerID) == ["a", "c", "h"])
            #expect(try await store.leaderboard(game: "chess", limit: 0).isEmpty)
            #expect(try await store.leaderboard(game: "go", limit: 5).map(\.playerID) == ["z", "y"])
            #expect(try await store.leaderboard(game: "none", limit: 5).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func entriesAroundAPlayerKeepTheirRanksAtTheEdges(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await self.playEightPlayers(store)
            func around(_ player: PlayerID, _ count: Int) async throws -> [String] {
                try await store.leaderboard(game: "chess", around: player, count: count).map { "\($0.rank)\($0.playerID)" }
            }

            #expect(try await around("e", 3) == ["4i", "5e", "6f"])
            #expect(try await around("e", 4) == ["4i", "5e", "6f", "7b"], "an even count puts the extra entry below")
            #expect(try await around("a", 5) == ["1a", "2c", "3h", "4i", "5e"], "top edge")
            #expect(try await around("c", 5) == ["1a", "2c", "3h", "4i", "5e"])
            #expect(try await around("d", 5) == ["4i", "5e", "6f", "7b", "8d"], "bottom edge")
            #expect(try await around("b", 3) == ["6f", "7b", "8d"])
            #expect(try await around("h", 20) == ["1a", "2c", "3h", "4i", "5e", "6f", "7b", "8d"])
            #expect(try await around("h", 1) == ["3h"])
            #expect(try await around("h", 0).isEmpty)
            #expect(try await around("nobody", 3).isEmpty)
            #expect(try await around("z", 3).isEmpty, "z plays go, not chess")
        }
    }
}
