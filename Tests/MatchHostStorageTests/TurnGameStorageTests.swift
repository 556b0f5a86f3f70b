import MatchHostCore
import Testing

@Suite("Storage: turn-based games")
struct TurnGameStorageTests {
    @Test(arguments: StoreKind.allCases)
    func movesAppendInOrderAndReplaceTheState(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTurnGame(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [0])
            #expect(try await store.activeTurnGames() == [
                TurnGameRecord(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [0], moveCount: 0, lastMoveAt: 1_000),
            ])

            try await store.appendMove(matchID: 7, moveNumber: 1, move: [3], state: [1, 3], at: 1_100)
            try await store.appendMove(matchID: 7, moveNumber: 2, move: [4], state: [2, 3, 4], at: 1_200)

            #expect(try await store.activeTurnGames() == [
                TurnGameRecord(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [2, 3, 4], moveCount: 2, lastMoveAt: 1_200),
            ])
            #expect(try await store.moveLog(matchID: 7) == [
                TurnMoveRecord(moveNumber: 1, move: [3], playedAt: 1_100), TurnMoveRecord(moveNumber: 2, move: [4], playedAt: 1_200),
            ])
            #expect(try await store.match(id: 7)?.kind == .turnBased)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDuplicateMoveNumberIsRefusedAndChangesNothing(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTurnGame(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [0])
            try await store.appendMove(matchID: 7, moveNumber: 1, move: [3], state: [1], at: 1_100)
            try await store.appendMove(matchID: 7, moveNumber: 2, move: [4], state: [2], at: 1_200)

            await #expect(throws: GameStoreError.duplicateMove(7, moveNumber: 2)) {
                try await store.appendMove(matchID: 7, moveNumber: 2, move: [9], state: [99], at: 1_300)
            }
            await #expect(throws: GameStoreError.duplicateMove(7, moveNumber: 1)) {
                try await store.appendMove(matchID: 7, moveNumber: 1, move: [9], state: [99], at: 1_300)
            }
            await #expect(throws: GameStoreError.moveOutOfOrder(7, expected: 3, got: 4)) {
                try await store.appendMove(matchID: 7, moveNumber: 4, move: [9], state: [99], at: 1_300)
            }

            let game = try #require(try await store.activeTurnGames().first)
            #expect(game.state == [2])
            #expect(game.moveCount == 2)
            #expect(game.lastMoveAt == 1_200)
            #expect(try await store.moveLog(matchID: 7).map(\.move) == [[3], [4]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func finishingEndsTheGameButKeepsItsLog(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTurnGame(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [0])
            try await store.createTurnGame(matchID: 8, game: "fourinarow", mode: "", players: ["c", "d"], startedAt: 900, state: [0])
            try await store.appendMove(matchID: 7, moveNumber: 1, move: [3], state: [1], at: 1_100)
            #expect(try await store.activeTurnGames().map(\.matchID) == [8, 7], "oldest first")

            let stats = try await store.recordMatchFinished(
                matchID: 7, endedAt: 1_500,
                result: MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost)]))
            try await store.recordMatchAbandoned(matchID: 8, endedAt: 1_600, reason: "timed out")

            #expect(stats.map(\.rating) == [1516, 1484])
            #expect(try await store.activeTurnGames().isEmpty)
            await #expect(throws: GameStoreError.matchNotRunning(7)) {
                try await store.appendMove(matchID: 7, moveNumber: 2, move: [4], state: [2], at: 1_700)
            }
            #expect(try await store.moveLog(matchID: 7).map(\.moveNumber) == [1])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anEndOffTheBoardReplacesTheStateWithoutAMove(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTurnGame(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [0])
            try await store.appendMove(matchID: 7, moveNumber: 1, move: [3], state: [1, 3], at: 1_100)
            try await store.replaceTurnState(matchID: 7, state: [9, 1, 3])
            // Still running, so a restart restores it, and finds it over.
            #expect(try await store.activeTurnGames() == [
                TurnGameRecord(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 1_000, state: [9, 1, 3], moveCount: 1, lastMoveAt: 1_100),
            ])
            #expect(try await store.moveLog(matchID: 7).map(\.moveNumber) == [1])

            try await store.recordMatchAbandoned(matchID: 7, endedAt: 1_200, reason: "test")
            await #expect(throws: GameStoreError.matchNotRunning(7)) { try await store.replaceTurnState(matchID: 7, state: [8]) }
            try await store.recordMatchStarted(id: 8, game: "race", mode: "", players: ["a"], startedAt: 1)
            await #expect(throws: GameStoreError.notTurnBased(8)) { try await store.replaceTurnState(matchID: 8, state: [8]) }
            await #expect(throws: GameStoreError.unknownMatch(9)) { try await store.replaceTurnState(matchID: 9, state: [8]) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func turnCallsOnOtherMatchesAreRefused(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.recordMatchStarted(id: 1, game: "race", mode: "", players: ["a"], startedAt: 1)
            try await store.createTurnGame(matchID: 2, game: "chess", mode: "", players: ["a", "b"], startedAt: 1, state: [])

            await #expect(throws: GameStoreError.notTurnBased(1)) {
                try await store.appendMove(matchID: 1, moveNumber: 1, move: [], state: [], at: 2)
            }
            await #expect(throws: GameStoreError.notTurnBased(1)) { try await store.moveLog(matchID: 1) }
            await #expect(throws: GameStoreError.unknownMatch(3)) {
                try await store.appendMove(matchID: 3, moveNumber: 1, move: [], state: [], at: 2)
            }
            await #expect(throws: GameStoreError.unknownMatch(3)) { try await store.moveLog(matchID: 3) }
            await #expect(throws: GameStoreError.matchExists(1)) {
                try await store.createTurnGame(matchID: 1, game: "chess", mode: "", players: ["a", "b"], startedAt: 1, state: [])
            }
            #expect(try await store.activeTurnGames().map(\.matchID) == [2])
        }
    }
}
