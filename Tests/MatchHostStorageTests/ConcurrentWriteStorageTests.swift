import MatchHostCore
import Testing

/// Writes of many games and players at once, as a busy server makes them (the SQLite store
/// then makes them in shared transactions).
@Suite("Storage: concurrent writes")
struct ConcurrentWriteStorageTests {
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

    @Test(arguments: StoreKind.allCases)
    func aWriteThatFailsAmongConcurrentOnesIsUndoneAloneAndTheOthersStay(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "taken", alias: "", deviceID: "device-taken", secretHash: [1], createdAt: 1)
            let outcomes = await withTaskGroup(of: (Int, (any Error)?).self) { group in
                for index in 0..<20 {
                    group.addTask {
                        // Player 7 is new but its device is taken: the player it wrote first must go too.
                        let device = index == 7 ? "device-taken" : "device-\(index)"
                        do {
                            try await store.createPlayerWithDevice(id: "p\(index)", alias: "", deviceID: device, secretHash: [2], createdAt: 2)
                            return (index, nil)
                        } catch {
                            return (index, error)
                        }
                    }
                }
                var outcomes: [Int: (any Error)?] = [:]
                for await (index, error) in group { outcomes[index] = error }
                return outcomes
            }
            for index in 0..<20 where index != 7 {
                #expect(outcomes[index]! == nil, "player \(index)")
                #expect(try await store.deviceIdentity(deviceID: "device-\(index)")?.playerID == "p\(index)")
            }
            #expect(outcomes[7]! as? GameStoreError == .deviceExists(deviceID: "device-taken"))
            #expect(try await store.player(id: "p7") == nil)
            #expect(try await store.deviceIdentity(deviceID: "device-taken")?.playerID == "taken")
        }
    }
}
