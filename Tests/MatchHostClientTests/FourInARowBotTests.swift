import Foundation
import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

/// Four in a Row over real sockets: ``FourInARowClient`` and ``FourInARowBot`` against an
/// in-process native server on port 0.
@Suite(.serialized) struct FourInARowBotTests {
    /// Reads `game`'s events, folding its messages into `view`, until `stop` holds for an
    /// event and the view after it; returns the events read.
    @discardableResult
    static func read(
        _ game: FourInARowClient, into view: inout FourInARowView,
        until stop: (FourInARowEvent, FourInARowView) -> Bool
    ) async throws -> [FourInARowEvent] {
        var events: [FourInARowEvent] = []
        while true {
            guard let event = try await game.nextEvent(timeout: .seconds(10)) else {
                throw TimedOut(what: "an event (the client closed)")
            }
            if case .message(let message) = event {
                view.apply(message, at: .now)
            }
            events.append(event)
            if stop(event, view) { return events }
        }
    }

    /// Reads until the move numbered `number` has been played (MOVED, or a STATE past it).
    static func readUntilMoved(_ number: UInt16, _ game: FourInARowClient, into view: inout FourInARowView) async throws {
        try await self.read(game, into: &view) { _, view in view.nextMoveNumber > number }
    }

    /// Reads until a MOVE_REFUSED (STATE may come before it, MOVED must not) and returns it.
    static func refusal(_ game: FourInARowClient, into view: inout FourInARowView) async throws -> FourInARowMoveRefused? {
        let events = try await self.read(game, into: &view) { event, _ in
            switch event {
            case .message(.moveRefused), .message(.moved), .message(.gameOver): return true
            default: return false
            }
        }
        if case .message(.moveRefused(let refusal)) = events.last { return refusal }
        Issue.record("expected MOVE_REFUSED, got \(String(describing: events.last))")
        return nil
    }

    /// Ann creates a match, Bo joins it (by id), and both read until play has started.
    static func startGame(
        _ server: TestServer, isPrivate: Bool = false, bo adjust: (inout MatchHostClient.Configuration) -> Void = { _ in }
    ) async throws -> (ann: FourInARowClient, annView: FourInARowView, bo: FourInARowClient, boView: FourInARowView) {
        let annClient = makeClient(port: server.port)
        let boClient = makeClient(port: server.port, adjust)
        try await annClient.connect()
        try await boClient.connect()
        let ann = try await FourInARowClient.createMatch(on: annClient, isPrivate: isPrivate, label: "test")
        let bo = try await FourInARowClient.joinMatch(ann.matchID, on: boClient)
        var annView = FourInARowView(myPlayerID: ann.playerID)
        var boView = FourInARowView(myPlayerID: bo.playerID)
        try await self.read(ann, into: &annView) { _, view in view.phase == .playing }
        try await self.read(bo, into: &boView) { _, view in view.phase == .playing }
        return (ann, annView, bo, boView)
    }

    @Test func twoBotsPlayWholeGames() async throws {
        let server = try await TestServer.start()
        var options = FourInARowBot.Options()
        options.port = server.port
        options.games = 3
        options.seed = 20_240_601
        let reported = FourInARowResults()
        let results = try await FourInARowBot.run(options) { reported.append($0) }

        #expect(results.map(\.game) == [0, 1, 2])
        #expect(Set(results.map(\.matchID)).count == 3)
        for result in results {
            if let seat = result.winnerSeat {
                #expect(result.reason == .fourInARow)
                // Seat 0 moves first, so X wins on an odd move and O on an even one.
                #expect(result.moves >= 7 && result.moves <= 42)
                #expect(result.moves % 2 == (seat == 0 ? 1 : 0))
                #expect(result.winnerID?.count == 32)  // a server-issued player id
            } else {
                #expect(result.reason == .draw && result.moves == 42)
            }
        }
        #expect(Set(reported.values) == Set(results))
        // Every game ended its match on the server.
        #expect(try await server.listener.counts().matches == 0)
        await server.stop()
    }

    @Test func aBotJoinsAPrivateGameByItsInviteCode() async throws {
        let server = try await TestServer.start()
        let annClient = makeClient(port: server.port)
        try await annClient.connect()
        let ann = try await FourInARowClient.createMatch(on: annClient, isPrivate: true)
        let code = try #require(ann.inviteCode)
        #expect(ann.match.inviteCode == code && ann.match.mode == "fourinarow" && ann.match.capacity == 2)
        #expect(ann.match.players.map(\.playerID) == [ann.playerID])

        // A wrong code finds nothing.
        let strayClient = makeClient(port: server.port)
        try await strayClient.connect()
        await expectNativeError(.noSuchMatch) { _ = try await FourInARowClient.joinMatch(code: "NOSUCHCODE", on: strayClient) }

        var options = FourInARowBot.Options()
        options.port = server.port
        options.inviteCode = code.lowercased()  // codes are not case-sensitive
        options.seed = 99
        async let botResults = FourInARowBot.run(options)

        // Ann plays the leftmost open column whenever it is her turn.
        var view = FourInARowView(myPlayerID: ann.playerID)
        var sent: UInt16 = 0
        var opponentJoined = false
        var thirdPlayerTurnedAway = false
        while !view.isOver {
            let events = try await Self.read(ann, into: &view) { _, _ in true }
            if case .presence(let id, .joined, _) = events[0], id != ann.playerID { opponentJoined = true }
            if view.phase == .playing, !thirdPlayerTurnedAway {
                // The match is full: its code turns a third player away.
                await #expect(throws: NativeError.self) { _ = try await FourInARowClient.joinMatch(code: code, on: strayClient) }
                thirdPlayerTurnedAway = true
            }
            if view.isMyTurn, view.nextMoveNumber != sent {
                sent = try await ann.move(column: try #require(view.cells.openColumns.first))
            }
        }
        let results = try await botResults
        #expect(opponentJoined)
        #expect(results.count == 1)
        let result = try #require(results.first)
        #expect(result.matchID == ann.matchID)
        #expect(result.winnerSeat == view.winnerSeat.map(Int.init))
        #expect(result.moves == view.moveCount)
        #expect(view.mySeat == 0 && view.playerID(seat: 1) != nil)
        if let winner = view.winnerSeat {
            #expect(result.winnerID == view.playerID(seat: winner))
            #expect(view.winningCells.count >= 4)
        }
        #expect(thirdPlayerTurnedAway)

        await ann.close()
        await strayClient.close()
        await server.stop()
    }

    @Test func illegalMovesAreRefusedWithTheirReason() async throws {
        let server = try await TestServer.start()
        let game = try await Self.startGame(server)
        let (ann, bo) = (game.ann, game.bo)
        var (annView, boView) = (game.annView, game.boView)
        #expect(annView.mySeat == 0 && annView.isMyTurn && boView.mySeat == 1 && !boView.isMyTurn)
        #expect(try await bo.nextMoveNumber == 1)

        // Bo moves out of turn.
        try await bo.move(column: 3)
        let outOfTurn = try #require(try await Self.refusal(bo, into: &boView))
        #expect(outOfTurn.moveNumber == 1 && outOfTurn.reason == .notYourTurn && outOfTurn.text == "it is seat 0's turn")
        #expect(boView.lastRefusalText == "It is not your turn.")

        // Both fill column 0: six moves.
        for number in UInt16(1)...6 {
            let mover = number % 2 == 1 ? ann : bo
            #expect(try await mover.move(column: 0) == number)
            try await Self.readUntilMoved(number, ann, into: &annView)
            try await Self.readUntilMoved(number, bo, into: &boView)
        }
        #expect(annView.cells.landingRow(column: 0) == nil)
        #expect(annView.isMyTurn && annView.nextMoveNumber == 7)

        // A full column, a column that does not exist, a stale move number.
        try await ann.move(column: 0)
        let full = try #require(try await Self.refusal(ann, into: &annView))
        #expect(full.moveNumber == 7 && full.reason == .columnFull && full.text == "column 0 is full")
        try await ann.move(column: 7)
        #expect(try await Self.refusal(ann, into: &annView)?.reason == .columnOutOfRange)
        let stale = FourInARowClientMessage.move(FourInARowMove(moveNumber: 3, column: 1)).encoded()
        try await ann.client.sendInput(stale, in: ann.matchID)
        let staleRefusal = try #require(try await Self.refusal(ann, into: &annView))
        #expect(staleRefusal.moveNumber == 3 && staleRefusal.reason == .staleMoveNumber)
        await #expect(throws: MatchHostClientError.self) { try await ann.move(column: 300) }

        // Nothing changed: move 7 is still Ann's, and the next thing Bo hears of is that move
        // (the refusals went to Ann only).
        #expect(try await ann.move(column: 1) == 7)
        try await Self.readUntilMoved(7, ann, into: &annView)
        let boEvents = try await Self.read(bo, into: &boView) { event, _ in
            if case .message(.moved) = event { return true }
            return false
        }
        #expect(!boEvents.contains { if case .message(.moveRefused) = $0 { return true } else { return false } })
        #expect(
            boEvents.last
                == .message(.moved(FourInARowMoved(seat: 0, column: 1, row: 0, moveNumber: 7, nextSeat: 1, turnTimeMilliseconds: 30_000)))
        )
        #expect(boView.cells == annView.cells && boView.cells.discCount == 7)

        await ann.close()
        await bo.close()
        await server.stop()
    }

    @Test func aDroppedPlayerComesBackToTheSameBoardAndTheGameGoesOn() async throws {
        let server = try await TestServer.start()
        // Bo waits 300 ms before reconnecting, so that Ann's move below is played while it is away.
        let game = try await Self.startGame(server) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(300), maximumDelay: .seconds(1), jitter: 0)
        }
        let (ann, bo) = (game.ann, game.bo)
        var (annView, boView) = (game.annView, game.boView)
        let boSession = await bo.client.authenticated?.sessionID
        // Ann builds up column 3, Bo column 4.
        for number in UInt16(1)...4 {
            try await (number % 2 == 1 ? ann : bo).move(column: number % 2 == 1 ? 3 : 4)
            try await Self.readUntilMoved(number, ann, into: &annView)
            try await Self.readUntilMoved(number, bo, into: &boView)
        }

        await bo.client.dropConnection()
        try await Self.read(ann, into: &annView) { event, _ in event == .presence(playerID: bo.playerID, change: .disconnected, reason: .none) }
        // Move 5, while Bo is away.
        try await ann.move(column: 3)
        try await Self.readUntilMoved(5, ann, into: &annView)
        try await Self.read(ann, into: &annView) { event, _ in event == .presence(playerID: bo.playerID, change: .reconnected, reason: .none) }

        // Bo is back in the same session: it gets what it missed and a fresh STATE.
        let missed = try await Self.read(bo, into: &boView) { event, _ in
            if case .message(.state) = event { return true }
            return false
        }
        guard case .message(.state(let state)) = missed.last else { throw TimedOut(what: "STATE after the resume") }
        #expect(state.moveNumber == 6 && state.seatToMove == 1 && state.phase == .playing)
        #expect(state.board == annView.cells.cells)
        #expect(state.turnTimeLeftMilliseconds > 0 && state.turnTimeLeftMilliseconds <= 30_000)
        let movesSeen = missed.filter {
            if case .message(.moved(let moved)) = $0 { return moved.moveNumber == 5 }
            return false
        }
        // Move 5 was played while Bo was away: resent once on the resume, before the STATE.
        #expect(movesSeen.count == 1)
        #expect(boView.cells == annView.cells && boView.isMyTurn && boView.nextMoveNumber == 6)
        #expect(await bo.client.authenticated?.sessionID == boSession)

        // The game goes on: Bo's move 6 in column 4, then Ann's fourth disc in column 3 wins.
        #expect(try await bo.move(column: 4) == 6)
        try await Self.readUntilMoved(6, ann, into: &annView)
        #expect(try await ann.move(column: 3) == 7)
        try await Self.read(ann, into: &annView) { _, view in view.isOver }
        try await Self.read(bo, into: &boView) { _, view in view.isOver }
        let expected = FourInARowGameOver(winnerSeat: 0, reason: .fourInARow, winningCells: [3, 10, 17, 24])
        #expect(annView.result == expected && boView.result == expected)
        #expect(annView.iWon && !boView.iWon && boView.moveCount == 7)
        // Then the match ends for both.
        for (game, view) in [(ann, annView), (bo, boView)] {
            var view = view
            let ending = try await Self.read(game, into: &view) { event, _ in
                if case .matchEnded = event { return true }
                return false
            }
            #expect(ending.count == 1)
        }

        await ann.close()
        await bo.close()
        await server.stop()
    }

    @Test func joiningAnotherModeIsRefusedAndOptionsAreChecked() async throws {
        let server = try await TestServer.start()
        let owner = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        try await owner.connect()
        try await guest.connect()
        let relay = try await owner.createMatch(mode: "relay", maxPlayers: 2)
        await #expect(throws: MatchHostClientError.self) { _ = try await FourInARowClient.joinMatch(relay.matchID, on: guest) }
        await owner.close()
        await guest.close()
        await server.stop()

        var options = FourInARowBot.Options()
        try options.validate()
        options.games = 0
        #expect(throws: FourInARowBotError.self) { try options.validate() }
        options.games = 2
        options.matchID = 7
        #expect(throws: FourInARowBotError.self) { try options.validate() }  // joining is 1 game
        options.games = 1
        try options.validate()
        options.inviteCode = "ABC"
        #expect(throws: FourInARowBotError.self) { try options.validate() }  // both an id and a code
        #expect(options.botsPerGame == 1)
    }
}

/// Results reported from any task.
final class FourInARowResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [FourInARowBot.GameResult] = []

    func append(_ result: FourInARowBot.GameResult) {
        self.lock.withLock { self.stored.append(result) }
    }

    var values: [FourInARowBot.GameResult] {
        self.lock.withLock { self.stored }
    }
}
