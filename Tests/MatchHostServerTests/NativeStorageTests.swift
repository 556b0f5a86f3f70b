import Foundation
import Logging
import MatchHostCore
import MatchHostProcessTesting
import MatchHostGames
import MatchHostSQLite
@testable import MatchHostServer
import MatchHostStoreTesting
import MatchHostWire
import NIOConcurrencyHelpers
import NIOCore
import Testing

extension TestNativeConnection {
    /// Sends `request` and returns its answer, skipping the events that come first (a game's
    /// STATE goes out as the seat is made, before MATCH_JOINED).
    func ask(_ request: NativeRequest) async throws -> Result<NativeResponse, NativeError> {
        let id = try await self.request(request)
        let answer = try await self.nextMessage(matching: "the answer to request \(id)") { message in
            switch message {
            case .response(id, _), .requestError(id, _): return true
            default: return false
            }
        }
        switch answer {
        case .response(_, let response): return .success(response)
        case .requestError(_, let error): return .failure(error)
        default: throw TestClientError.unexpected("\(answer)")
        }
    }

    /// Sends a request (the list of relay matches) and returns what arrives before its answer:
    /// everything the server had sent by the time it read the request.
    func messagesSentBeforeARequestIsAnswered() async throws -> [NativeServerMessage] {
        let id = try await self.request(.listMatches(NativeLobbyQuery(mode: "relay")))
        var before: [NativeServerMessage] = []
        while true {
            let message = try await self.nextMessage()
            if case .response(id, _) = message { return before }
            before.append(message)
        }
    }

    /// Reads server messages until one satisfies `predicate` (at most 200), returning it.
    func nextMessage(matching what: String, _ predicate: (NativeServerMessage) -> Bool) async throws -> NativeServerMessage {
        for _ in 0..<200 {
            let message = try await self.nextMessage()
            if predicate(message) { return message }
        }
        throw TestClientError.unexpected("no \(what)")
    }

    /// The next event of `matchID`, as `decode` reads a game's MATCH_EVENT body, satisfying `predicate`.
    func nextMatchEvent<Event>(
        in matchID: MatchIdentifier, _ what: String, decode: (ByteBuffer) throws -> Event, where predicate: (Event) -> Bool
    ) async throws -> Event {
        let message = try await self.nextMessage(matching: what) { message in
            guard case .matchEvent(matchID, let body) = message, let event = try? decode(body) else { return false }
            return predicate(event)
        }
        guard case .matchEvent(_, let body) = message else { throw TestClientError.unexpected("no event") }
        return try decode(body)
    }

    /// The next Four in a Row event of `matchID` satisfying `predicate`.
    func nextFourInARowEvent(
        in matchID: MatchIdentifier, _ what: String, where predicate: (FourInARowServerMessage) -> Bool
    ) async throws -> FourInARowServerMessage {
        try await self.nextMatchEvent(in: matchID, what, decode: { try FourInARowServerMessage(body: $0) }, where: predicate)
    }

    /// Plays move `number` into `column` and waits until this player sees it acknowledged (MOVED).
    func playFourInARow(_ number: UInt16, column: UInt8, in matchID: MatchIdentifier) async throws {
        let move = FourInARowClientMessage.move(FourInARowMove(moveNumber: number, column: column)).encoded()
        try await self.sendReliable(.matchInput(matchID: matchID, input: move))
        _ = try await self.nextFourInARowEvent(in: matchID, "MOVED \(number)") { event in
            if case .moved(let moved) = event { return moved.moveNumber == number }
            return false
        }
    }
}

/// Two devices' players seated in a new Four in a Row match: seat 0 (`first`) moves first.
func fourInARowPair(
    _ server: RunningNativeServer, _ a: String, _ b: String
) async throws -> (first: TestNativeConnection, second: TestNativeConnection, match: MatchIdentifier, players: [String], secrets: [String]) {
    let pair = try await authenticatedFourInARowPair(server, a, b)
    return (pair.first, pair.second, pair.match, pair.auths.map(\.playerID), pair.auths.map(\.deviceSecret))
}

/// ``fourInARowPair(_:_:_:)`` with each player's AUTHENTICATED (its session, to resume it).
func authenticatedFourInARowPair(
    _ server: RunningNativeServer, _ a: String, _ b: String
) async throws -> (first: TestNativeConnection, second: TestNativeConnection, match: MatchIdentifier, auths: [NativeAuthenticated]) {
    let (first, firstAuth) = try await server.login(a)
    let (second, secondAuth) = try await server.login(b)
    let created = try #require(try await first.ask(.createMatch(mode: "fourinarow", maxPlayers: 0, label: "")).joined)
    _ = try #require(try await second.ask(.joinMatch(created.matchID)).joined)
    return (first, second, created.matchID, [firstAuth, secondAuth])
}

@Suite struct NativeMatchRecordTests {
    @Test func aFinishedFourInARowIsStoredWithItsResultAndStats() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (first, second, matchID, players, _) = try await fourInARowPair(server, "four-a", "four-b")
        // Seat 0 stacks column 0, seat 1 column 1: seat 0 has four at move 7.
        for number in UInt16(1)...7 {
            let mover = number % 2 == 1 ? first : second
            try await mover.playFourInARow(number, column: number % 2 == 1 ? 0 : 1, in: matchID)
        }
        _ = try await second.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { return true } else { return false } }
        try await server.stop()  // waits for the result to be written

        let record = try #require(await store.match(id: matchID))
        #expect(record.kind == .turnBased)
        #expect(record.game == "fourinarow")
        #expect(record.players == players)
        #expect(
            record.state
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: players[0], outcome: .won, summary: "four in a row after 7 moves"),
                        PlayerResultRecord(playerID: players[1], outcome: .lost, summary: "four in a row after 7 moves"),
                    ])))
        #expect(await store.stats(game: "fourinarow", playerID: players[0])?.won == 1)
        #expect(await store.stats(game: "fourinarow", playerID: players[1])?.lost == 1)
        #expect(await store.activeTurnGames().isEmpty)
    }

    @Test func aRealTimeMatchRecordsEveryPlayerWhoJoinedAndIsAbandonedWithoutAResult() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (a, aAuth) = try await server.login("race-a")
        let (b, bAuth) = try await server.login("race-b")
        let created = try #require(try await a.ask(.createMatch(mode: "catrace", maxPlayers: 0, label: "")).joined)
        _ = try #require(try await b.ask(.joinMatch(created.matchID)).joined)
        #expect(try await b.ask(.leaveMatch(created.matchID)) == .success(.matchLeft(created.matchID)))
        _ = try await a.ask(.leaveMatch(created.matchID))
        // A relay is not stored.
        let relay = try #require(try await a.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
        try await server.stop()

        let record = try #require(await store.match(id: created.matchID))
        #expect(record.kind == .realTime)
        #expect(record.players == [aAuth.playerID, bAuth.playerID])
        // No race was won, so there is no result.
        #expect(record.state == .abandoned(reason: "racer \(bAuth.playerID) left"))
        #expect(await store.match(id: relay.matchID) == nil)
    }

    @Test func aGracefulStopAbandonsRealTimeMatchesButKeepsTurnBasedGamesRunning() async throws {
        let store = InMemoryGameStore()
        let log = LogLines()
        let server = try await RunningNativeServer.start(logger: log.logger) { $0.store = store }
        let (a, _) = try await server.login("stop-a")
        let disks = try #require(try await a.ask(.createMatch(mode: "disks", maxPlayers: 0, label: "")).joined)
        let (first, _, four, _, _) = try await fourInARowPair(server, "stop-c", "stop-d")
        try await first.playFourInARow(1, column: 3, in: four)
        // A game still waiting for its second player is not stored: it ends like the others.
        let (lonely, _) = try await server.login("stop-e")
        let waiting = try #require(try await lonely.ask(.createMatch(mode: "fourinarow", maxPlayers: 0, label: "")).joined)
        await server.listener.close()
        let lonelyEnd = try await lonely.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { return true } else { return false } }
        #expect(lonelyEnd == .matchEnded(matchID: waiting.matchID, reason: "abandoned(server shutting down)"))
        // What the listener said as it closed is still in the connection's inbox: the session's
        // end, and no MATCH_ENDED for the saved game (it is not over: it goes on after the restart).
        var before: [NativeServerMessage] = []
        var closing: NativeError?
        while closing == nil {
            switch try await first.next() {
            case .error(let error): closing = error
            case .reliable(_, _, let message), .unreliable(let message): before.append(try NativeServerMessage(message: message))
            default: continue
            }
        }
        #expect(closing?.code == .shuttingDown)
        #expect(!before.contains { if case .matchEnded = $0 { return true } else { return false } }, "\(before)")
        try await server.group.shutdownGracefully()

        #expect(await store.match(id: disks.matchID)?.state == .abandoned(reason: "server shutting down"))
        #expect(await store.match(id: four)?.state == .running)
        #expect(await store.activeTurnGames().map(\.matchID) == [four])
        // The log does not call the saved game ended.
        let lines = log.all.filter { $0.contains("match=\(four)") && $0.contains("match ") }
        #expect(lines.contains { $0.hasPrefix("info match suspended") })
        #expect(!lines.contains { $0.contains("match ended") }, "\(lines)")
    }

    @Test func aGracefulStopEndsTurnBasedGamesWhenTheStoreDiesWithTheServer() async throws {
        let server = try await RunningNativeServer.start { $0.store = InMemoryGameStore(outlivesServer: false) }
        let (first, _, four, _, _) = try await fourInARowPair(server, "gone-a", "gone-b")
        try await first.playFourInARow(1, column: 3, in: four)
        await server.listener.close()
        let ended = try await first.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { return true } else { return false } }
        #expect(ended == .matchEnded(matchID: four, reason: "abandoned(server shutting down)"))
        try await server.group.shutdownGracefully()
    }

    /// Relays are never stored, yet their ids must not repeat after a restart (a crash cannot
    /// say which were given): ids are reserved in the store a block ahead of use.
    @Test func idsOfMatchesNeverStoredDoNotRepeatAfterARestart() async throws {
        let store = InMemoryGameStore()
        let first = try await RunningNativeServer.start { $0.store = store }
        let (host, issued) = try await first.login("relay-host")
        #expect(await store.largestMatchID() == 1_000, "the first block, reserved before the port opened")
        var last: MatchID = 0
        for _ in 0..<501 {
            let created = try #require(try await host.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
            last = created.matchID
            _ = try await host.ask(.leaveMatch(created.matchID))
        }
        #expect(last == 501)
        #expect(await store.match(id: 1) == nil, "relays are not stored")
        try await first.stop()  // which waits for the writes in flight
        // Fewer than half the first block were left: the next was reserved.
        #expect(await store.largestMatchID() == 2_000)

        let second = try await RunningNativeServer.start { $0.store = store }
        let (again, _) = try await second.login("relay-host", secret: issued.deviceSecret)
        let created = try #require(try await again.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
        #expect(created.matchID == 2_001)
        try await second.stop()
    }

    @Test func matchIDsContinueAfterTheLargestStoredAndInterruptedMatchesAreToldToTheirPlayers() async throws {
        let store = InMemoryGameStore()
        let first = try await RunningNativeServer.start { $0.store = store }
        let (_, issued) = try await first.login("interrupted")
        try await first.stop()
        // What a crash leaves: a real-time match still running.
        try await store.recordMatchStarted(id: 41, game: "disks", mode: "", players: [issued.playerID, "someone"], startedAt: 5)

        let second = try await RunningNativeServer.start { $0.store = store }
        #expect(await store.match(id: 41)?.state == .abandoned(reason: "server restarted"))
        let (again, _) = try await second.login("interrupted", secret: issued.deviceSecret)
        #expect(try await again.nextMessage() == .matchEnded(matchID: 41, reason: "abandoned(server restarted)"))
        let created = try #require(try await again.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
        // After the ids the first run reserved (1-1000; 41 among them), never one of them.
        #expect(created.matchID == 1_001)
        #expect(await store.largestMatchID() == 2_000, "and the second run reserved the next block")
        try await second.stop()
    }

    /// The notice of a match a restart abandoned is kept in the store: a player away across a
    /// second restart still hears of it when back, and once it has acknowledged it, never again.
    @Test func aPlayerAwayAcrossTwoRestartsHearsOfTheInterruptedMatchOnceWhenBack() async throws {
        let store = InMemoryGameStore()
        let first = try await RunningNativeServer.start { $0.store = store }
        let (_, issued) = try await first.login("twice-away")
        try await first.stop()
        // What a crash leaves: a real-time match still running.
        try await store.recordMatchStarted(id: 41, game: "disks", mode: "", players: [issued.playerID, "someone"], startedAt: 5)
        // This run abandons it; the player is not back before the next restart.
        let second = try await RunningNativeServer.start { $0.store = store }
        try await second.stop()

        let third = try await RunningNativeServer.start { $0.store = store }
        let (back, _) = try await third.login("twice-away", secret: issued.deviceSecret)
        #expect(try await back.nextMessage() == .matchEnded(matchID: 41, reason: "abandoned(server restarted)"))
        #expect(try await back.drain().isEmpty)  // whose request acknowledges it
        try await third.stop()  // which waits for the writes in flight
        #expect(await store.endNotices().isEmpty, "the player's notice went once acknowledged (\"someone\", without a device, had none)")

        let fourth = try await RunningNativeServer.start { $0.store = store }
        let (again, _) = try await fourth.login("twice-away", secret: issued.deviceSecret)
        #expect(try await again.drain().isEmpty, "told once")
        try await fourth.stop()
    }
}

@Suite struct TurnDurabilityTests {
    @Test func everyMoveIsStoredBeforeAnyoneIsToldOfIt() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (first, second, matchID, players, _) = try await fourInARowPair(server, "durable-a", "durable-b")
        // The game is stored once both players are seated (written off the loop, so it may
        // land just after the join's answer; the first MOVED waits for it in any case).
        var seated: [[String]] = []
        for _ in 0..<1000 where seated.isEmpty {
            seated = await store.activeTurnGames().map(\.players)
            if seated.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(seated == [players])
        for number in UInt16(1)...4 {
            try await (number % 2 == 1 ? first : second).playFourInARow(number, column: UInt8(number), in: matchID)
            // MOVED has arrived, so the move is in the log already.
            #expect(try await store.moveLog(matchID: matchID).map(\.moveNumber) == Array(1...Int(number)))
        }
        let stored = try #require(await store.activeTurnGames().first)
        let state = try FourInARowState(bytes: ByteBuffer(bytes: stored.state))
        #expect(state.moves == [1, 2, 3, 4])
        #expect(stored.moveCount == 4)
        try await server.stop()
    }

    @Test func movesOfGamesPlayedAtOnceAreInTheSQLiteLogBeforeTheyAreAcknowledged() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-turns-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let server = try await RunningNativeServer.start { $0.store = store }
        var games: [(first: TestNativeConnection, second: TestNativeConnection, match: MatchIdentifier)] = []
        for game in 0..<6 {
            let pair = try await fourInARowPair(server, "grouped-\(game)-a", "grouped-\(game)-b")
            games.append((pair.first, pair.second, pair.match))
        }
        // Every game's move goes out before any answer is read, so the store gets them together.
        for number in UInt16(1)...6 {
            let movers = games.map { number % 2 == 1 ? $0.first : $0.second }
            for (game, mover) in zip(games, movers) {
                let move = FourInARowClientMessage.move(FourInARowMove(moveNumber: number, column: UInt8(number % 3))).encoded()
                try await mover.sendReliable(.matchInput(matchID: game.match, input: move))
            }
            for (game, mover) in zip(games, movers) {
                _ = try await mover.nextFourInARowEvent(in: game.match, "MOVED \(number)") { event in
                    if case .moved(let moved) = event { return moved.moveNumber == number }
                    if case .moveRefused(let refusal) = event { Issue.record("move \(number) refused: \(refusal.text)") }
                    return false
                }
                #expect(try await store.moveLog(matchID: game.match).map(\.moveNumber) == Array(1...Int(number)))
            }
        }
        try await server.stop()
        try await store.close()
    }

    @Test func aStoredGameContinuesOnTheNextServerWithItsPlayersSeatedAgain() async throws {
        let store = InMemoryGameStore()
        let before = try await RunningNativeServer.start { $0.store = store }
        let pair = try await fourInARowPair(before, "resume-a", "resume-b")
        let (matchID, players) = (pair.match, pair.players)
        for number in UInt16(1)...3 {
            try await (number % 2 == 1 ? pair.first : pair.second).playFourInARow(number, column: number % 2 == 1 ? 0 : 1, in: matchID)
        }
        try await before.stop()

        let after = try await RunningNativeServer.start { $0.store = store }
        #expect(try await after.listener.counts().matches == 1)
        // Its seats are its players': it is in no lobby (whether it was listed is not stored).
        let (watcher, _) = try await after.login("resume-watcher")
        #expect(try await watcher.ask(.listMatches(NativeLobbyQuery(mode: "fourinarow"))) == .success(.matchList(entries: [], next: 0)))
        // Seat 1 is to move; it comes back first, and gets its seat and the game as stored.
        let (second, _) = try await after.login("resume-b", secret: pair.secrets[1])
        guard case .matchResumed(let info) = try await second.nextMessage() else {
            Issue.record("expected MATCH_RESUMED right after AUTHENTICATED")
            return
        }
        #expect(info.matchID == matchID)
        #expect(info.mode == "fourinarow")
        #expect(info.players == [.init(playerID: players[0], presence: .reserved), .init(playerID: players[1], presence: .connected)])
        guard case .state(let snapshot) = try await second.nextFourInARowEvent(in: matchID, "STATE", where: { if case .state = $0 { true } else { false } })
        else { return }
        #expect(snapshot.moveNumber == 4)
        #expect(snapshot.seatToMove == 1)
        #expect(snapshot.board.filter { $0 != 0 }.count == 3)
        // A fresh turn from the restart (30 s by default), not what was left before it.
        #expect(snapshot.turnTimeLeftMilliseconds > 20_000)

        let (first, _) = try await after.login("resume-a", secret: pair.secrets[0])
        guard case .matchResumed = try await first.nextMessage() else {
            Issue.record("expected MATCH_RESUMED")
            return
        }
        _ = try await second.nextMessage(matching: "PRESENCE reconnected") {
            $0 == .presence(matchID: matchID, playerID: players[0], change: .reconnected, reason: .none)
        }
        for number in UInt16(4)...7 {
            try await (number % 2 == 1 ? first : second).playFourInARow(number, column: number % 2 == 1 ? 0 : 1, in: matchID)
        }
        _ = try await second.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { return true } else { return false } }
        // A new match does not reuse the stored game's id.
        let relay = try #require(try await first.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
        #expect(relay.matchID > matchID)
        try await after.stop()

        #expect(try await store.moveLog(matchID: matchID).map(\.moveNumber) == Array(1...7))
        guard case .finished(let result) = await store.match(id: matchID)?.state else {
            Issue.record("the game is stored as finished")
            return
        }
        #expect(result.players.map(\.outcome) == [.won, .lost])
    }

    /// Stores everything but moves, as a disk that fills up once a game has started would.
    private struct MoveFailingStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        func appendMove(
            matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
            completion: @escaping @Sendable (Result<Void, any Error>) -> Void
        ) {
            completion(.failure(GameStoreError.storageFailed(reason: "database or disk is full")))
        }
    }

    @Test func aMoveTheStoreCannotTakeIsRefusedAndTheTurnGoesOn() async throws {
        let server = try await RunningNativeServer.start { $0.store = MoveFailingStore() }
        let (first, _, matchID, _, _) = try await fourInARowPair(server, "saving-a", "saving-b")
        let move = FourInARowClientMessage.move(FourInARowMove(moveNumber: 1, column: 3)).encoded()
        for _ in 1...2 {
            try await first.sendReliable(.matchInput(matchID: matchID, input: move))
            let refused = try await first.nextFourInARowEvent(in: matchID, "MOVE_REFUSED") {
                if case .moveRefused = $0 { return true }
                if case .moved = $0 { Issue.record("a move that was not stored was acknowledged") }
                return false
            }
            guard case .moveRefused(let refusal) = refused else { return }
            #expect(refusal.reason == .couldNotBeSaved)
            #expect(refusal.moveNumber == 1, "still the first move: the turn goes on, and it may be played again")
        }
        try await server.stop()
    }

    /// Holds each state stored without a move (a game's end off the board) until `release`
    /// opens; `entered` opens once one is being stored.
    private struct HeldEndingStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let entered = Gate()
        let release = Gate()
        let endings = NIOLockedValueBox<[MatchID: [UInt8]]>([:])
        func replaceTurnState(matchID: MatchID, state: [UInt8]) async throws {
            self.endings.withLockedValue { $0[matchID] = state }
            await self.entered.open()
            await self.release.wait()
            try await self.inner.replaceTurnState(matchID: matchID, state: state)
        }
    }

    @Test func aGameThatEndsOffTheBoardIsStoredAsOverBeforeGameOverIsSent() async throws {
        let store = HeldEndingStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (first, second, matchID, _, _) = try await fourInARowPair(server, "ending-a", "ending-b")
        try await first.playFourInARow(1, column: 3, in: matchID)
        #expect(try await second.ask(.leaveMatch(matchID)) == .success(.matchLeft(matchID)))
        // The end is being stored: a request made after it is answered, and no GAME_OVER came first.
        let before = try await first.messagesSentBeforeARequestIsAnswered()
        #expect(!before.contains { if case .matchEvent(_, let body) = $0, case .gameOver? = try? FourInARowServerMessage(body: body) { true } else { false } })
        await store.entered.wait()
        let stored = try #require(store.endings.withLockedValue { $0[matchID] })
        let state = try FourInARowState(bytes: ByteBuffer(bytes: stored))
        #expect(state.phase == .over)
        #expect(state.ending == FourInARowEnding(winnerSeat: 0, reason: .opponentLeft))
        #expect(state.moves.count == 1)

        await store.release.open()
        _ = try await first.nextFourInARowEvent(in: matchID, "GAME_OVER") { if case .gameOver = $0 { true } else { false } }
        try await server.stop()
    }

    /// Holds the first result written until ``release`` opens.
    private struct HeldResultStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let entered = Gate()
        let release = Gate()
        func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
            await self.entered.open()
            await self.release.wait()
            return try await self.inner.recordMatchFinished(matchID: matchID, endedAt: endedAt, result: result)
        }
    }

    /// Two players in a Disks match in play; then one leaves, which makes the other the winner:
    /// the game is over and its result being written.
    private func disksMatchWonByLeaving(
        _ server: RunningNativeServer, _ a: String, _ b: String
    ) async throws -> (winner: TestNativeConnection, winnerAuth: NativeAuthenticated, match: MatchIdentifier) {
        let (winner, winnerAuth) = try await server.login(a)
        let (loser, _) = try await server.login(b)
        let disks = try #require(try await winner.ask(.createMatch(mode: "disks", maxPlayers: 0, label: "")).joined).matchID
        _ = try #require(try await loser.ask(.joinMatch(disks)).joined)
        _ = try await winner.nextMessage(matching: "Disks in play") { message in
            guard case .matchEvent(disks, let body) = message, case .state(let state)? = try? DisksServerMessage(body: body) else { return false }
            return state.phase == .playing
        }
        #expect(try await loser.ask(.leaveMatch(disks)) == .success(.matchLeft(disks)))
        return (winner, winnerAuth, disks)
    }

    @Test func aPlayerWhoSignsInAgainKeepsItsSeatAndItsTurn() async throws {
        let server = try await RunningNativeServer.start()
        let pair = try await fourInARowPair(server, "again-a", "again-b")
        try await pair.first.playFourInARow(1, column: 0, in: pair.match)
        try await pair.second.playFourInARow(2, column: 1, in: pair.match)

        // The first player's app starts over and signs in with its device again.
        let (first, _) = try await server.login("again-a", secret: pair.secrets[0])
        #expect(try await pair.first.closingError().code == .sessionReplaced)
        guard case .matchResumed(let info) = try await first.nextMessage() else { throw TestClientError.unexpected("no MATCH_RESUMED") }
        #expect(info.matchID == pair.match)
        #expect(info.players == [.init(playerID: pair.players[0], presence: .connected), .init(playerID: pair.players[1], presence: .connected)])
        guard case .state(let state) = try await first.nextFourInARowEvent(in: pair.match, "STATE", where: { if case .state = $0 { true } else { false } })
        else { return }
        #expect(state.moveNumber == 3 && state.seatToMove == 0)

        // The game goes on: the opponent saw no one leave, and sees the next move.
        try await first.playFourInARow(3, column: 0, in: pair.match)
        let seen = try await pair.second.messagesSentBeforeARequestIsAnswered()
        #expect(seen.contains { message in
            guard case .matchEvent(pair.match, let body) = message, case .moved(let moved)? = try? FourInARowServerMessage(body: body) else { return false }
            return moved.moveNumber == 3
        })
        #expect(!seen.contains { if case .presence = $0 { true } else if case .matchEnded = $0 { true } else { false } }, "\(seen)")
        try await server.stop()
    }

    @Test func aPlayerWhoSignsInAgainWhileItsResultIsStoredIsToldOnItsNewSession() async throws {
        let store = HeldResultStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (winner, winnerAuth, disks) = try await self.disksMatchWonByLeaving(server, "held-a", "held-b")
        await store.entered.wait()

        // While the result is being written, the winner signs in again with its token.
        let again = try await server.handshake()
        try await again.send(.authenticate(.token(winnerAuth.sessionToken)))
        guard case .authenticated = try await again.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
        #expect(try await winner.closingError().code == .sessionReplaced)
        await store.release.open()
        let gameOver = try await again.nextMessage(matching: "GAME_OVER") { message in
            guard case .matchEvent(disks, let body) = message, case .gameOver? = try? DisksServerMessage(body: body) else { return false }
            return true
        }
        #expect(gameOver != .matchEnded(matchID: disks, reason: ""))
        let ended = try await again.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .matchEnded(disks, _) = ended else { throw TestClientError.unexpected("\(ended)") }
        try await server.stop()
    }

    @Test func aRealTimeResultIsStoredBeforeGameOverAndMatchEndedAreSent() async throws {
        let store = HeldResultStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (winner, winnerAuth, disks) = try await self.disksMatchWonByLeaving(server, "result-a", "result-b")
        let winnerID = winnerAuth.playerID
        await store.entered.wait()
        let before = try await winner.messagesSentBeforeARequestIsAnswered()
        #expect(!before.contains { if case .matchEvent(_, let body) = $0, case .gameOver? = try? DisksServerMessage(body: body) { true } else { false } })
        #expect(!before.contains { if case .matchEnded = $0 { true } else { false } })
        #expect(try await store.inner.match(id: disks)?.state == .running)

        await store.release.open()
        let gameOver = try await winner.nextMessage(matching: "GAME_OVER") { message in
            guard case .matchEvent(disks, let body) = message, case .gameOver? = try? DisksServerMessage(body: body) else { return false }
            return true
        }
        guard case .matchEvent(_, let body) = gameOver, case .gameOver(let over) = try DisksServerMessage(body: body) else {
            throw TestClientError.unexpected("\(gameOver)")
        }
        #expect(over.reason == .opponentsLeft && over.winners == [0])
        // By the time GAME_OVER is out, the result is committed; MATCH_ENDED follows it.
        let stored = try #require(try await store.inner.match(id: disks))
        guard case .finished(let result) = stored.state else { throw TestClientError.unexpected("\(stored.state)") }
        #expect(result.players.first { $0.outcome == .won }?.playerID == winnerID)
        let ended = try await winner.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .matchEnded(disks, _) = ended else { throw TestClientError.unexpected("\(ended)") }
        try await server.stop()
    }

    /// Fails every result with `error`.
    private struct ResultFailingStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let error: GameStoreError
        func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
            throw self.error
        }
    }

    @Test(arguments: [GameStoreError.storageFailed(reason: "disk full"), .invalidResult(1, reason: "refused")])
    func aResultTheDatabaseFailsIsToldAllTheSame(error: GameStoreError) async throws {
        let store = ResultFailingStore(error: error)
        let server = try await RunningNativeServer.start { $0.store = store }
        let (winner, _, disks) = try await self.disksMatchWonByLeaving(server, "failed-a", "failed-b")
        _ = try await winner.nextMessage(matching: "GAME_OVER") { message in
            guard case .matchEvent(disks, let body) = message, case .gameOver? = try? DisksServerMessage(body: body) else { return false }
            return true
        }
        let ended = try await winner.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .matchEnded(disks, let reason) = ended else { throw TestClientError.unexpected("\(ended)") }
        #expect(reason.hasPrefix("finished("))
        try await server.stop()
    }

    /// Stops `server` while `store` holds a Disks result: returns the stop, once it is under way
    /// (another player's match has been ended by it), and the winner and its match.
    private func stopWhileAResultIsBeingStored(
        _ server: RunningNativeServer, _ store: HeldResultStore, _ name: String
    ) async throws -> (closing: Task<Void, Never>, winner: TestNativeConnection, match: MatchIdentifier) {
        let (winner, _, disks) = try await self.disksMatchWonByLeaving(server, "\(name)-a", "\(name)-b")
        await store.entered.wait()
        let (bystander, _) = try await server.login("\(name)-c")
        let relay = try #require(try await bystander.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined).matchID
        let closing = Task { await server.listener.close() }
        _ = try await bystander.nextMessage(matching: "MATCH_ENDED") { $0 == .matchEnded(matchID: relay, reason: "abandoned(server shutting down)") }
        return (closing, winner, disks)
    }

    /// What `connection` hears of `match` until its session ends: GAME_OVER, MATCH_ENDED and the
    /// session's error, in order; `onGameOver` runs as GAME_OVER arrives.
    private func heardUntilTheSessionEnds(
        _ connection: TestNativeConnection, _ match: MatchIdentifier, onGameOver: () async throws -> Void = {}
    ) async throws -> [String] {
        var heard: [String] = []
        while heard.last != "\(NativeErrorCode.shuttingDown)" {
            switch try await connection.next() {
            case .error(let error):
                heard.append("\(error.code)")
            case .reliable(_, _, let message), .unreliable(let message):
                switch try NativeServerMessage(message: message) {
                case .matchEvent(match, let body):
                    if case .gameOver = try DisksServerMessage(body: body) {
                        heard.append("GAME_OVER")
                        try await onGameOver()
                    }
                case .matchEnded(match, _): heard.append("MATCH_ENDED")
                default: break
                }
            default: break
            }
        }
        return heard
    }

    @Test func aResultBeingStoredWhenTheServerStopsIsToldOnceCommittedBeforeTheSessionEnds() async throws {
        let store = HeldResultStore()
        // A wait no loaded test machine reaches before the result is released.
        let server = try await RunningNativeServer.start {
            $0.store = store
            $0.resultWaitAtShutdown = .seconds(120)
        }
        let (closing, winner, disks) = try await self.stopWhileAResultIsBeingStored(server, store, "stopping")
        // The stop waits for the result: the session still answers, and has been told nothing yet.
        let before = try await winner.messagesSentBeforeARequestIsAnswered()
        #expect(!before.contains { if case .matchEnded = $0 { true } else { false } }, "\(before)")
        await store.release.open()
        let heard = try await self.heardUntilTheSessionEnds(winner, disks) {
            guard case .finished? = try await store.inner.match(id: disks)?.state else { throw TestClientError.unexpected("told before stored") }
        }
        #expect(heard == ["GAME_OVER", "MATCH_ENDED", "\(NativeErrorCode.shuttingDown)"])
        await closing.value
        try await server.group.shutdownGracefully()
    }

    @Test func aResultTheDatabaseDoesNotAnswerAtShutdownIsToldAfterTheWaitAndStoredBeforeTheStopEnds() async throws {
        let store = HeldResultStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (closing, winner, disks) = try await self.stopWhileAResultIsBeingStored(server, store, "unanswered")
        // Told after `resultWaitAtShutdown` (2 s by default) with the write still held.
        let heard = try await self.heardUntilTheSessionEnds(winner, disks)
        #expect(heard == ["GAME_OVER", "MATCH_ENDED", "\(NativeErrorCode.shuttingDown)"])
        #expect(try await store.inner.match(id: disks)?.state == .running)
        // The stop still waits for the write before it ends.
        await store.release.open()
        await closing.value
        guard case .finished? = try await store.inner.match(id: disks)?.state else { throw TestClientError.unexpected("no result stored") }
        try await server.group.shutdownGracefully()
    }

    /// A restored game that ends before one of its players is back (the other came back and
    /// left) still tells that player, when it comes back, how the game ended: after another
    /// restart too, as what it is to hear is kept in the store, not only in the server that
    /// ended the game.
    @Test(arguments: [false, true])
    func aPlayerWhoNeverCameBackToARestoredGameHearsHowItEndedWhenItDoes(restartingBeforeItIsBack: Bool) async throws {
        let store = InMemoryGameStore()
        let before = try await RunningNativeServer.start { $0.store = store }
        let names = restartingBeforeItIsBack ? ["long-gone-a", "long-gone-b"] : ["gone-a", "gone-b"]
        let pair = try await fourInARowPair(before, names[0], names[1])
        try await pair.first.playFourInARow(1, column: 0, in: pair.match)
        try await before.stop()

        var after = try await RunningNativeServer.start { $0.store = store }
        let (first, _) = try await after.login(names[0], secret: pair.secrets[0])
        guard case .matchResumed = try await first.nextMessage() else {
            Issue.record("expected MATCH_RESUMED")
            return
        }
        #expect(try await first.ask(.leaveMatch(pair.match)) == .success(.matchLeft(pair.match)))
        if restartingBeforeItIsBack {
            try await after.stop()
            after = try await RunningNativeServer.start { $0.store = store }
        }
        let (second, _) = try await after.login(names[1], secret: pair.secrets[1])
        let ended = try await second.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        // Its seat was still waiting: nobody was left to win.
        #expect(ended == .matchEnded(matchID: pair.match, reason: "abandoned(both players are gone)"))
        #expect(try await second.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await after.stop()
        #expect(await store.endNotices().isEmpty)
    }

    /// A restored game whose result is still being written when the server stops (the player to
    /// move came back, and its turn ran out) is told to the player who is here, and left as a
    /// notice for the one who never came back: it is over, not put away like the games still
    /// running.
    @Test func playersAwayFromARestoredGameThatEndsAsTheServerStopsHearHowItEndedAfterTheRestart() async throws {
        let store = HeldResultStore()
        let before = try await RunningNativeServer.start { $0.store = store }
        let pair = try await fourInARowPair(before, "stopped-a", "stopped-b")
        try await pair.first.playFourInARow(1, column: 0, in: pair.match)
        try await before.stop()

        // The second player, to move, comes back, and its turn (started as it arrived) runs out;
        // the result is held. The first never comes back.
        let during = try await RunningNativeServer.start {
            $0.store = store
            $0.turnTimeLimit = .milliseconds(200)
        }
        let (mover, _) = try await during.login("stopped-b", secret: pair.secrets[1])
        await store.entered.wait()
        let (bystander, _) = try await during.login("stopped-c")
        let relay = try #require(try await bystander.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined).matchID
        let closing = Task { await during.listener.close() }
        // The stop has begun (matches are ending) while the result is still held.
        _ = try await bystander.nextMessage(matching: "MATCH_ENDED") { $0 == .matchEnded(matchID: relay, reason: "abandoned(server shutting down)") }
        await store.release.open()
        let moverTold = try await mover.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .matchEnded(pair.match, let moverReason) = moverTold else {
            throw TestClientError.unexpected("expected MATCH_ENDED for the game, got \(moverTold)")
        }
        #expect(moverReason.contains("won"), "\(moverReason)")
        await closing.value
        try await during.group.shutdownGracefully()
        guard case .finished? = try await store.inner.match(id: pair.match)?.state else {
            throw TestClientError.unexpected("no result stored")
        }

        let after = try await RunningNativeServer.start { $0.store = store }
        let (back, _) = try await after.login("stopped-a", secret: pair.secrets[0])
        let ended = try await back.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended == .matchEnded(matchID: pair.match, reason: moverReason))
        // The mover was told before the stop: nothing is left for it.
        let (moverBack, _) = try await after.login("stopped-b", secret: pair.secrets[1])
        #expect(try await moverBack.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await after.stop()
    }

    @Test func aGameStoredAsOverEndsWithItsResultWhenRestoredAndItsPlayersAreToldWhenTheyAreBack() async throws {
        let store = InMemoryGameStore()
        let before = try await RunningNativeServer.start { $0.store = store }
        let pair = try await fourInARowPair(before, "over-a", "over-b")
        try await pair.first.playFourInARow(1, column: 0, in: pair.match)
        try await before.stop()
        // As a crash leaves it after the end was stored and before the result: over, still running.
        var state = try FourInARowState(bytes: ByteBuffer(bytes: try #require(await store.activeTurnGames().first).state))
        state.finish(winnerSeat: 0, reason: .opponentLeft)
        try await store.replaceTurnState(matchID: pair.match, state: Array(state.encoded().readableBytesView))

        let after = try await RunningNativeServer.start { $0.store = store }
        let (first, _) = try await after.login("over-a", secret: pair.secrets[0])
        let ended = try await first.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .matchEnded(pair.match, let reason) = ended else {
            Issue.record("expected MATCH_ENDED for the game stored as over, got \(ended)")
            return
        }
        #expect(reason.hasPrefix("finished("))
        try await after.stop()
        guard case .finished(let result) = await store.match(id: pair.match)?.state else {
            Issue.record("the game's result is stored")
            return
        }
        #expect(result.players.map(\.outcome) == [.won, .lost])
    }

    /// A player back while the result of a game restored as over is being written hears of
    /// the end once: from its notice, not again when the result is committed.
    @Test func aPlayerBackWhileARestoredGamesResultIsWrittenIsToldOnce() async throws {
        let store = HeldResultStore()
        let before = try await RunningNativeServer.start { $0.store = store }
        let pair = try await fourInARowPair(before, "held-over-a", "held-over-b")
        try await pair.first.playFourInARow(1, column: 0, in: pair.match)
        try await before.stop()
        var state = try FourInARowState(bytes: ByteBuffer(bytes: try #require(await store.inner.activeTurnGames().first).state))
        state.finish(winnerSeat: 0, reason: .opponentLeft)
        try await store.inner.replaceTurnState(matchID: pair.match, state: Array(state.encoded().readableBytesView))

        let after = try await RunningNativeServer.start { $0.store = store }
        await store.entered.wait()
        let (first, _) = try await after.login("held-over-a", secret: pair.secrets[0])
        _ = try await first.nextMessage(matching: "MATCH_ENDED") { $0.isMatchEnded(pair.match) }
        await store.release.open()
        // The stop waits for the result, and anything it makes the server say comes before
        // the session's end.
        let closing = Task { await after.listener.close() }
        var more = 0
        while true {
            let frame = try await first.next()
            if case .error = frame { break }
            if case .reliable(_, _, let message) = frame, try NativeServerMessage(message: message).isMatchEnded(pair.match) { more += 1 }
        }
        await closing.value
        try await after.group.shutdownGracefully()
        #expect(more == 0, "told once")
    }

    @Test func aTurnBasedGameThatCannotBeRecordedEndsAndItsPlayersAreToldWhy() async throws {
        let key = [UInt8](repeating: 3, count: 32)
        let working = try await RunningNativeServer.start { $0.tokenSigningKey = key }
        let (_, a) = try await working.login("unsaved-a")
        let (_, b) = try await working.login("unsaved-b")
        try await working.stop()

        // Every write fails: the game's record as well as its moves.
        let failing = try await RunningNativeServer.start {
            $0.tokenSigningKey = key
            $0.store = FailingGameStore()
        }
        let first = try await failing.handshake()
        try await first.send(.authenticate(.token(a.sessionToken)))
        _ = try await first.next()
        let second = try await failing.handshake()
        try await second.send(.authenticate(.token(b.sessionToken)))
        _ = try await second.next()
        let created = try #require(try await first.ask(.createMatch(mode: "fourinarow", maxPlayers: 0, label: "")).joined)
        _ = try #require(try await second.ask(.joinMatch(created.matchID)).joined)
        for connection in [first, second] {
            let ended = try await connection.nextMessage(matching: "MATCH_ENDED") {
                if case .matchEnded = $0 { return true }
                if case .matchEvent(_, let body) = $0, case .moved? = try? FourInARowServerMessage(body: body) {
                    Issue.record("a move of a game that was never stored was acknowledged")
                }
                return false
            }
            #expect(ended == .matchEnded(matchID: created.matchID, reason: "abandoned(\(NativeWorld.notSavedReason))"))
        }
        try await failing.stop()
    }
}

/// A player who is away when its match ends has MATCH_ENDED waiting in its session; a stop or a
/// crash before it is back loses the session, so the end is in the store too until then.
@Suite struct AwayPlayerEndTests {
    /// Waits until the store's end notices are `expected` (they are written off the loop).
    private func notices(in store: InMemoryGameStore, become expected: [MatchID]) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while await store.endNotices().map(\.matchID) != expected {
            guard ContinuousClock.now < deadline else {
                throw TestClientError.unexpected("end notices \(await store.endNotices()), not \(expected)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The second player of a Four in a Row pair goes away; the first leaves, so the away
    /// player wins, and its MATCH_ENDED waits in its session. The store then holds the notices
    /// of `stored` and this match's.
    private func gameWonWhileAway(
        _ server: RunningNativeServer, store: InMemoryGameStore, _ a: String, _ b: String, stored: [MatchID] = []
    ) async throws -> (
        first: TestNativeConnection, second: TestNativeConnection, match: MatchIdentifier, auths: [NativeAuthenticated]
    ) {
        let pair = try await authenticatedFourInARowPair(server, a, b)
        try await pair.first.playFourInARow(1, column: 0, in: pair.match)
        await pair.second.close()
        _ = try await pair.first.nextMessage(matching: "PRESENCE away") { if case .presence = $0 { true } else { false } }
        #expect(try await pair.first.ask(.leaveMatch(pair.match)) == .success(.matchLeft(pair.match)))
        try await self.notices(in: store, become: stored + [pair.match])
        return pair
    }

    @Test func whatAPlayerWhoNeverCameBackLeftIsDroppedOnceOlderThanItsRetentionWhileTheServerRuns() async throws {
        let store = InMemoryGameStore()
        let clock = WallClock()
        let before = try await RunningNativeServer.start {
            $0.store = store
            $0.wallClock = clock
        }
        let gone = try await self.gameWonWhileAway(before, store: store, "gone-end-a", "gone-end-b")
        try await before.stop()
        // Restarted, the server holds the notice in memory for when the player is back.
        let server = try await RunningNativeServer.start {
            $0.store = store
            $0.wallClock = clock
        }
        let hour: Int64 = 3_600_000
        // The next notice kept, more than the prune interval later, drops none younger than the retention.
        clock.advance(by: .milliseconds(MatchEndNotice.retentionMilliseconds - 2 * hour))
        let kept = try await self.gameWonWhileAway(server, store: store, "kept-end-a", "kept-end-b", stored: [gone.match])
        // Older than the retention by an hour: the next one drops it, from the store and from memory.
        clock.advance(by: .milliseconds(3 * hour))
        _ = try await self.gameWonWhileAway(server, store: store, "later-end-a", "later-end-b", stored: [kept.match])
        let (goneBack, _) = try await server.login("gone-end-b", secret: gone.auths[1].deviceSecret)
        #expect(try await goneBack.drain().allSatisfy { !$0.isMatchEnded(gone.match) }, "dropped")
        let (keptBack, _) = try await server.login("kept-end-b", secret: kept.auths[1].deviceSecret)
        let ended = try await keptBack.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended.isMatchEnded(kept.match))
        try await server.stop()
    }

    @Test func anAwayPlayerWhoseGameEndedHearsOfItAfterTheServerStopsAndStartsAgain() async throws {
        let store = InMemoryGameStore()
        let before = try await RunningNativeServer.start { $0.store = store }
        let pair = try await self.gameWonWhileAway(before, store: store, "away-end-a", "away-end-b")
        try await before.stop()
        #expect(await store.endNotices().map(\.playerID) == [pair.auths[1].playerID])

        let after = try await RunningNativeServer.start { $0.store = store }
        let (back, _) = try await after.login("away-end-b", secret: pair.auths[1].deviceSecret)
        let ended = try await back.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .matchEnded(pair.match, let reason) = ended else { throw TestClientError.unexpected("\(ended)") }
        #expect(reason.hasPrefix("finished("), "\(reason)")
        #expect(try await back.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await after.stop()
        #expect(await store.endNotices().isEmpty)
    }

    @Test func anAwayPlayerWhoResumesGetsItFromItsSessionAndTheStoredCopyGoesOnceRead() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let pair = try await self.gameWonWhileAway(server, store: store, "resume-end-a", "resume-end-b")
        let resumed = try await server.handshake()
        try await resumed.send(.resume(sessionID: pair.auths[1].sessionID, resumeToken: pair.auths[1].resumeToken, lastReceived: 0))
        guard case .resumed = try await resumed.next() else { throw TestClientError.unexpected("no RESUMED") }
        let ended = try await resumed.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended.isMatchEnded(pair.match))
        try await resumed.send(.ack(resumed.lastReceived))
        // The stop ends the session, whose client has read it: the copy goes.
        try await server.stop()
        #expect(await store.endNotices().isEmpty)

        // Nothing is left to tell after a restart.
        let after = try await RunningNativeServer.start { $0.store = store }
        let (back, _) = try await after.login("resume-end-b", secret: pair.auths[1].deviceSecret)
        #expect(try await back.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await after.stop()
    }

    @Test func anAwayPlayerWhoResumesButLosesTheConnectionBeforeReadingItGetsItOnItsNextSession() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let pair = try await self.gameWonWhileAway(server, store: store, "lost-end-a", "lost-end-b")
        let resumed = try await server.handshake()
        try await resumed.send(.resume(sessionID: pair.auths[1].sessionID, resumeToken: pair.auths[1].resumeToken, lastReceived: 0))
        guard case .resumed = try await resumed.next() else { throw TestClientError.unexpected("no RESUMED") }
        // Gone again before acknowledging anything; the app then starts over with a new
        // sign-in, which ends that session and what waited in it.
        await resumed.close()
        let (back, _) = try await server.login("lost-end-b", secret: pair.auths[1].deviceSecret)
        let ended = try await back.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended.isMatchEnded(pair.match))
        try await back.send(.ack(back.lastReceived))
        try await self.notices(in: store, become: [])
        try await server.stop()
    }

    @Test func anAwayPlayerWhoSignsInAgainGetsItOnItsNewSession() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let pair = try await self.gameWonWhileAway(server, store: store, "again-end-a", "again-end-b")
        // A new sign-in (the app restarted) replaces the away session and what waited in it.
        let (back, _) = try await server.login("again-end-b", secret: pair.auths[1].deviceSecret)
        let ended = try await back.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended.isMatchEnded(pair.match))
        // DRAIN's request acknowledges it.
        #expect(try await back.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await self.notices(in: store, become: [])
        try await server.stop()
    }

    /// Many kept MATCH_ENDEDs go out a batch at a time, the next once the client has
    /// acknowledged those: a player away for long does not overflow `--max-backlog` (ending the
    /// session, and the next one the same way) as it signs in.
    @Test func manyKeptEndsGoOutABatchAtATimeAsTheClientAcknowledgesThem() async throws {
        let store = InMemoryGameStore()
        let first = try await RunningNativeServer.start { $0.store = store }
        let (_, issued) = try await first.login("many-ends")
        try await first.stop()
        // What a crash leaves: ten real-time matches running, which the next start abandons.
        for match: MatchID in 41...50 {
            try await store.recordMatchStarted(id: match, game: "disks", mode: "", players: [issued.playerID, "someone"], startedAt: 5)
        }
        let server = try await RunningNativeServer.start { $0.store = store }
        let (back, _) = try await server.login("many-ends", secret: issued.deviceSecret)
        var told: [MatchIdentifier] = []
        for _ in 0..<8 {
            guard case .matchEnded(let match, _) = try await back.nextMessage() else { throw TestClientError.unexpected("not MATCH_ENDED") }
            told.append(match)
        }
        #expect(told == Array(41...48))
        // Not acknowledged yet: nothing more comes before the answer to a PING sent now.
        try await back.send(.ping(7))
        var beforePong: [NativeFrame] = []
        while true {
            let frame = try await back.next()
            if case .pong = frame { break }
            if case .reliable = frame { beforePong.append(frame) }
        }
        #expect(beforePong.isEmpty, "\(beforePong)")
        // DRAIN's request acknowledges them: the other two come before its answer.
        #expect(try await back.drain() == [49, 50].map { .matchEnded(matchID: $0, reason: "abandoned(server restarted)") })
        #expect(try await back.drain().isEmpty)
        try await self.notices(in: store, become: [])
        try await server.stop()
    }

    /// A MATCH_ENDED heard as a session starts stays in the store until the client acknowledges
    /// it: a client whose connection was lost before then hears it again in its next session,
    /// and after a restart; once acknowledged, it leaves the store while the session goes on,
    /// and is told no more.
    @Test func anEndToldAsTheSessionStartsStaysStoredUntilTheClientAcknowledgesIt() async throws {
        let store = InMemoryGameStore()
        var server = try await RunningNativeServer.start { $0.store = store }
        let pair = try await self.gameWonWhileAway(server, store: store, "unacked-end-a", "unacked-end-b")
        let secret = pair.auths[1].deviceSecret
        for restarting in [false, true] {
            // Read and never acknowledged: the connection is lost, then the app signs in again.
            let (unread, _) = try await server.login("unacked-end-b", secret: secret)
            let ended = try await unread.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
            #expect(ended.isMatchEnded(pair.match))
            await unread.close()
            if restarting {
                try await server.stop()
                server = try await RunningNativeServer.start { $0.store = store }
            }
        }
        let (back, _) = try await server.login("unacked-end-b", secret: secret)
        let ended = try await back.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended.isMatchEnded(pair.match))
        try await back.send(.ack(back.lastReceived))
        try await self.notices(in: store, become: [])
        try await server.stop()

        let after = try await RunningNativeServer.start { $0.store = store }
        let (again, _) = try await after.login("unacked-end-b", secret: secret)
        #expect(try await again.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await after.stop()
    }

    /// RESUME's `lastReceived` acknowledges too: a client that read the MATCH_ENDED told as
    /// its session started, lost the connection before its ACK went out and resumed saying it
    /// had read it, is not told again, and the stored copy goes while the session goes on.
    @Test func anEndAcknowledgedByAResumesLastReceivedLeavesTheStoreAndIsNotToldAgain() async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let pair = try await self.gameWonWhileAway(server, store: store, "resume-ack-end-a", "resume-ack-end-b")
        let (lost, issued) = try await server.login("resume-ack-end-b", secret: pair.auths[1].deviceSecret)
        let ended = try await lost.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended.isMatchEnded(pair.match))
        let read = lost.lastReceived
        await lost.close()
        try await self.notices(in: store, become: [pair.match])

        let resumed = try await server.handshake()
        resumed.continueSequences(from: lost)
        try await resumed.send(.resume(sessionID: issued.sessionID, resumeToken: issued.resumeToken, lastReceived: read))
        guard case .resumed = try await resumed.next() else { throw TestClientError.unexpected("no RESUMED") }
        try await self.notices(in: store, become: [])
        #expect(try await resumed.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await server.stop()

        let after = try await RunningNativeServer.start { $0.store = store }
        let (again, _) = try await after.login("resume-ack-end-b", secret: pair.auths[1].deviceSecret)
        #expect(try await again.drain().allSatisfy { !$0.isMatchEnded(pair.match) }, "told once")
        try await after.stop()
    }
}

@Suite struct StoredRequestLimitTests {
    /// Holds every value read until released.
    private struct HeldReadStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let release = Gate()
        func readValue(playerID: PlayerID, key: String) async throws -> [UInt8]? {
            await self.release.wait()
            return try await self.inner.readValue(playerID: playerID, key: key)
        }
    }

    @Test func aSessionsRequestsWaitingForTheDatabaseAreBoundedAndTheRestRefusedAtOnce() async throws {
        let store = HeldReadStore()
        let server = try await RunningNativeServer.start {
            $0.store = store
            $0.maxPendingRequests = 4
        }
        let (player, _) = try await server.login("pending-a")
        let (other, _) = try await server.login("pending-b")
        var waiting: [UInt32] = []
        for _ in 0..<4 { waiting.append(try await player.request(.readValue(key: "k"))) }
        let refused = try await player.request(.readValue(key: "k"))
        let answer = try await player.nextMessage()
        guard case .requestError(refused, let error) = answer else { throw TestClientError.unexpected("\(answer)") }
        #expect(error.code == .tooManyRequests)
        // Only that session's requests count; requests the store is not asked for still pass.
        #expect(try await player.ask(.leaveMatch(1)).failure?.code == .notInMatch)
        let otherID = try await other.request(.readValue(key: "k"))

        await store.release.open()
        var answered: [UInt32] = []
        while answered.count < 4 {
            if case .response(let id, .value(key: "k", value: nil)) = try await player.nextMessage() { answered.append(id) }
        }
        #expect(answered == waiting)
        #expect(try await other.response(to: otherID) == .success(.value(key: "k", value: nil)))
        // Answered, they no longer count.
        #expect(try await player.ask(.readValue(key: "k")) == .success(.value(key: "k", value: nil)))
        try await server.stop()
    }
}

@Suite struct NativeStartupTests {
    @Test func aStoreThatFailsAtStartupKeepsTheListenerFromBinding() async throws {
        await #expect(throws: GameStoreError.storageFailed(reason: "disk on fire")) {
            _ = try await RunningNativeServer.start { $0.store = FailingGameStore(failsAtStartup: true) }
        }
    }
}

@Suite struct StoredResultTests {
    private func raceWith(_ players: [PlayerID]) -> Match<CatRaceGame> {
        let match = Match(
            id: 1, handler: CatRaceGame(options: CatRaceOptions(maxTapRate: 20)), encoders: [catRaceFrameEncoder],
            clock: ManualClock(), gracePeriod: .seconds(30), capacity: 4, logger: Logger(label: "test"))
        for player in players { _ = match.join(player, link: nil) }
        return match
    }

    @Test func catRaceStoresWhoWonTheMostRaces() {
        let match = self.raceWith(["a", "b", "c"])
        let tally = CatRaceTally()
        #expect(tally.ending(.abandoned(reason: "racer a left"), in: match) == .abandoned(reason: "racer a left"))
        tally.raceWon(by: "b")
        tally.raceWon(by: "a")
        tally.raceWon(by: "b")
        #expect(
            tally.ending(.abandoned(reason: "racer a left"), in: match)
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .lost, score: 1, summary: "won 1 race"),
                        PlayerResultRecord(playerID: "b", outcome: .won, score: 2, summary: "won 2 races"),
                        PlayerResultRecord(playerID: "c", outcome: .lost, score: 0, summary: "won 0 races"),
                    ])))
    }

    @Test func disksWinnersWinAndAGameNobodyScoredInIsADraw() throws {
        let match = Match(
            id: 2, handler: DisksGame(options: DisksGame.Options()), encoders: [], clock: ManualClock(), gracePeriod: .seconds(30),
            capacity: 4, logger: Logger(label: "test"))
        let scored = DisksResult(
            reason: .timeLimit,
            players: [
                .init(playerID: "a", seat: 0, score: 3, won: true, left: false),
                .init(playerID: "b", seat: 1, score: 1, won: false, left: true),
            ])
        #expect(
            StoredResults.disks(.finished(scored), in: match)
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: "a", outcome: .won, score: 3),
                        PlayerResultRecord(playerID: "b", outcome: .lost, score: 1, summary: "left"),
                    ])))
        let nobody = DisksResult(
            reason: .timeLimit,
            players: [.init(playerID: "a", seat: 0, score: 0, won: false, left: false), .init(playerID: "b", seat: 1, score: 0, won: false, left: false)])
        guard case .finished(let result) = StoredResults.disks(.finished(nobody), in: match) else {
            Issue.record("a finished game is stored finished")
            return
        }
        #expect(result.players.map(\.outcome) == [.draw, .draw])
    }

    @Test func aResultNamesExactlyTheRecordedPlayers() {
        let result = MatchResultRecord(players: [
            PlayerResultRecord(playerID: "tutorial-client", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .won),
        ])
        #expect(
            resultLines(result, for: ["a", "b"])
                == MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .lost), PlayerResultRecord(playerID: "b", outcome: .won)]))
    }
}
