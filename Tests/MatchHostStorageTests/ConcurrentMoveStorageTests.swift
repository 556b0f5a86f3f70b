import MatchHostCore
import Testing

/// Moves of many games at once, as a server with many games in play makes them (the SQLite
/// store then writes them in shared transactions).
@Suite("Storage: concurrent moves")
struct ConcurrentMoveStorageTests {
    private static let games = 1...20

    private static func createGames(_ store: any GameStore) async throws {
        for id in Self.games {
            try await store.createTurnGame(
                matchID: MatchID(id), game: "fourinarow", mode: "", players: ["a\(id)", "b\(id)"], startedAt: 1_000, state: [0])
        }
    }

    /// Appends move `number` of every game at once.
    private static func appendMoveOfEveryGame(_ number: Int, to store: any GameStore) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in Self.games {
                group.addTask {
                    try await store.appendMove(
                        matchID: MatchID(id), moveNumber: number, move: [UInt8(id), UInt8(number)], state: [UInt8(number)],
                        at: UnixMillis(milliseconds: Int64(1_000 + number)))
                }
            }
            try await group.waitForAll()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func movesOfManyGamesAtOnceAreAllStoredInOrder(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await Self.createGames(store)
            for number in 1...3 {
                try await Self.appendMoveOfEveryGame(number, to: store)
            }
            for id in Self.games {
                #expect(try await store.moveLog(matchID: MatchID(id)) == (1...3).map {
                    TurnMoveRecord(moveNumber: $0, move: [UInt8(id), UInt8($0)], playedAt: UnixMillis(milliseconds: Int64(1_000 + $0)))
                })
            }
            let active = try await store.activeTurnGames()
            #expect(active.count == Self.games.count)
            #expect(active.allSatisfy { $0.moveCount == 3 && $0.state == [3] && $0.lastMoveAt == 1_003 })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRefusedMoveAmongConcurrentOnesFailsAloneAndChangesNothing(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await Self.createGames(store)
            let outcomes = await withTaskGroup(of: (Int, (any Error)?).self) { group in
                for id in Self.games {
                    group.addTask {
                        do {
                            try await store.appendMove(matchID: MatchID(id), moveNumber: 1, move: [1], state: [1], at: 1_100)
                            return (id, nil)
                        } catch {
                            return (id, error)
                        }
                    }
                }
                // Refused whatever the order: game 5 never gets a move 3 before its move 2,
                // and match 99 does not exist.
                group.addTask {
                    do {
                        try await store.appendMove(matchID: 5, moveNumber: 3, move: [9], state: [9], at: 1_100)
                        return (-5, nil)
                    } catch {
                        return (-5, error)
                    }
                }
                group.addTask {
                    do {
                        try await store.appendMove(matchID: 99, moveNumber: 1, move: [9], state: [9], at: 1_100)
                        return (-99, nil)
                    } catch {
                        return (-99, error)
                    }
                }
                var outcomes: [Int: (any Error)?] = [:]
                for await (id, error) in group { outcomes[id] = error }
                return outcomes
            }
            for id in Self.games {
                #expect(outcomes[id]! == nil, "game \(id)'s move 1")
            }
            switch outcomes[-5]! as? GameStoreError {
            case .moveOutOfOrder(5, _, 3): break
            default: Issue.record("game 5's move 3: \(String(describing: outcomes[-5]!))")
            }
            #expect(outcomes[-99]! as? GameStoreError == .unknownMatch(99))
            #expect(try await store.moveLog(matchID: 5) == [TurnMoveRecord(moveNumber: 1, move: [1], playedAt: 1_100)])
            #expect(try await store.activeTurnGames().allSatisfy { $0.moveCount == 1 && $0.state == [1] })
        }
    }
}
