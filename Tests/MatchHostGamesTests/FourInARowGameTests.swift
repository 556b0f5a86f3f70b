import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import Testing

/// The game on the match runtime: seats, turns, timers, presence and the journal, on a manual clock.
@Suite struct FourInARowGameTests {
    // MARK: Seats and start

    @Test func playStartsWhenBothSeatsExistAndBothGetState() throws {
        let fixture = FourInARowFixture()
        _ = fixture.match.join("alice", link: fixture.links[0])
        let waiting = try #require(fixture.links[0].take().first?.state)
        #expect(waiting.phase == .waiting)
        #expect(waiting.players == [.init(seat: 0, playerID: "alice")])
        #expect(waiting.seatToMove == nil)

        _ = fixture.match.join("bob", link: fixture.links[1])
        for link in fixture.links {
            let messages = link.take()
            #expect(messages.count == 1)
            let state = try #require(messages.first?.state)
            #expect(state.phase == .playing)
            #expect(state.players == [.init(seat: 0, playerID: "alice"), .init(seat: 1, playerID: "bob")])
            #expect(state.board == [UInt8](repeating: 0, count: 42))
            #expect(state.moveNumber == 1)
            #expect(state.seatToMove == 0)
            #expect(state.turnTimeLeftMilliseconds == 30_000)
        }
    }

    @Test func aThirdPlayerIsRefused() {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        #expect(fixture.match.join("carol", link: FourInARowLink()) == .failure(.refusedByGame("the game has already started")))
        #expect(fixture.match.seats.count == 2)
    }

    @Test func reservedSeatsStartTheGameAndTheTimerWaitsForThePlayerToMove() throws {
        let fixture = FourInARowFixture()
        _ = fixture.match.join("alice", link: nil)
        _ = fixture.match.join("bob", link: nil)
        #expect(fixture.game.state.phase == .playing)
        #expect(fixture.game.turnDeadline == nil)
        #expect(fixture.game.turnWaitsForArrival)
        #expect(fixture.clock.pendingCount == 2, "only the two seats' grace timers")
        fixture.clock.advance(by: .seconds(4))
        fixture.match.connect(seat: 1, link: fixture.links[1])
        let state = try #require(fixture.links[1].take().first?.state)
        #expect(state.phase == .playing)
        #expect(state.seatToMove == 0)
        #expect(state.turnTimeLeftMilliseconds == FourInARowSnapshot.turnWaitsForArrival)

        // Longer than a turn: alice's turn has not begun while she is not here.
        fixture.clock.advance(by: .seconds(40))
        #expect(!fixture.match.isEnded)
        fixture.match.connect(seat: 0, link: fixture.links[0])
        #expect(fixture.game.turnDeadline == fixture.clock.now + .seconds(30))
        for link in fixture.links {
            #expect(link.take().map(\.state?.turnTimeLeftMilliseconds) == [30_000], "both players see her turn start")
        }
        fixture.clock.advance(by: .milliseconds(29_999))
        #expect(!fixture.match.isEnded)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(fixture.result?.winner == "bob")
        #expect(fixture.result?.reason == .turnTimeout)
    }

    @Test func aPlayerToMoveWhoNeverArrivesLosesWhenItsSeatGraceRunsOut() throws {
        let fixture = FourInARowFixture(grace: .seconds(45))
        _ = fixture.match.join("alice", link: nil)
        _ = fixture.match.join("bob", link: nil)
        fixture.match.connect(seat: 1, link: fixture.links[1])
        fixture.takeAll()
        fixture.clock.advance(by: .milliseconds(44_999))
        #expect(!fixture.match.isEnded)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(fixture.links[1].take() == [.gameOver(FourInARowGameOver(winnerSeat: 1, reason: .opponentLeft))])
        #expect(fixture.result?.winner == "bob")
        #expect(fixture.clock.pendingCount == 0)
    }

    @Test func theSecondSeatCanMoveFirst() throws {
        let fixture = FourInARowFixture(options: FourInARowOptions(firstSeat: 1))
        fixture.seatBoth()
        fixture.move(2, seat: 0)
        #expect(fixture.links[0].take().first?.refused?.reason == .notYourTurn)
        fixture.move(2, seat: 1)
        let moved = try #require(fixture.links[0].take().first?.moved)
        #expect(moved == FourInARowMoved(seat: 1, column: 2, row: 0, moveNumber: 1, nextSeat: 0, turnTimeMilliseconds: 30_000))
        #expect(fixture.game.state.board.cells[2] == 2)
    }

    // MARK: Moves and endings

    @Test func aMoveIsAcknowledgedToBothPlayersAndTheTurnPasses() throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.clock.advance(by: .seconds(10))
        fixture.move(3)
        let expected = FourInARowMoved(seat: 0, column: 3, row: 0, moveNumber: 1, nextSeat: 1, turnTimeMilliseconds: 30_000)
        #expect(fixture.links[0].take() == [.moved(expected)])
        #expect(fixture.links[1].take() == [.moved(expected)])
        #expect(fixture.game.state.seatToMove == 1)
        #expect(fixture.game.turnDeadline == fixture.clock.now + .seconds(30))
        fixture.move(3)
        #expect(fixture.links[0].take().first?.moved?.row == 1)
    }

    @Test(arguments: [
        ([0, 0, 1, 1, 2, 2, 3], 0, [0, 1, 2, 3] as [UInt8]),  // across
        ([6, 0, 6, 0, 5, 0, 6, 0], 1, [0, 7, 14, 21]),  // up, won by seat 1
        ([0, 1, 1, 2, 2, 3, 2, 3, 3, 5, 3], 0, [0, 8, 16, 24]),  // up-right
        ([6, 5, 5, 4, 4, 3, 4, 3, 3, 1, 3], 0, [6, 12, 18, 24]),  // down-right
    ])
    func fourInARowWinsInEveryDirection(columns: [Int], winner: Int, cells: [UInt8]) throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.play(columns)
        let over = FourInARowGameOver(winnerSeat: UInt8(winner), reason: .fourInARow, winningCells: cells)
        for link in fixture.links {
            let messages = link.take()
            #expect(messages.count == columns.count + 1)
            #expect(messages.last == .gameOver(over))
            #expect(messages.dropLast().last?.moved?.nextSeat == nil)
            #expect(messages.dropLast().last?.moved?.turnTimeMilliseconds == 0)
        }
        #expect(fixture.match.isEnded)
        #expect(
            fixture.result
                == FourInARowResult(
                    winner: FourInARowFixture.players[winner], loser: FourInARowFixture.players[1 - winner], winnerSeat: winner,
                    reason: .fourInARow, moveCount: columns.count))
        #expect(fixture.clock.pendingCount == 0)
    }

    @Test func aFullBoardIsADraw() throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.play(FourInARowStateTests.drawnGame)
        let messages = fixture.links[1].take()
        #expect(messages.compactMap(\.moved).count == 42)
        #expect(messages.last == .gameOver(FourInARowGameOver(winnerSeat: nil, reason: .draw)))
        #expect(fixture.result == FourInARowResult(winner: nil, loser: nil, winnerSeat: nil, reason: .draw, moveCount: 42))
    }

    @Test func illegalMovesAreRefusedToTheMoverWithTheirReason() throws {
        let fixture = FourInARowFixture()
        _ = fixture.match.join("alice", link: fixture.links[0])
        _ = fixture.links[0].take()

        func refusal(_ column: Int, seat: Int, number: Int) throws -> FourInARowMoveRefused {
            fixture.move(column, seat: seat, number: number)
            let messages = fixture.links[seat].take()
            #expect(messages.count == 1)
            #expect(fixture.links[1 - seat].received.isEmpty, "a refusal goes to the mover only")
            return try #require(messages.first?.refused)
        }

        #expect(
            try refusal(3, seat: 0, number: 1)
                == FourInARowMoveRefused(moveNumber: 1, reason: .gameNotRunning, text: "the game has not started"))
        _ = fixture.match.join("bob", link: fixture.links[1])
        fixture.takeAll()

        #expect(try refusal(3, seat: 1, number: 1).reason == .notYourTurn)
        #expect(try refusal(7, seat: 0, number: 1).reason == .columnOutOfRange)
        #expect(try refusal(255, seat: 0, number: 1).reason == .columnOutOfRange)
        #expect(try refusal(3, seat: 0, number: 2).reason == .staleMoveNumber)
        #expect(try refusal(3, seat: 0, number: 0).reason == .staleMoveNumber)
        for _ in 0..<6 { fixture.move(0) }
        fixture.takeAll()
        #expect(try refusal(0, seat: 0, number: 7) == FourInARowMoveRefused(moveNumber: 7, reason: .columnFull, text: "column 0 is full"))
        // The same MOVE sent twice: the copy is stale, not a second move.
        fixture.move(1, seat: 0, number: 7)
        fixture.takeAll()
        #expect(try refusal(1, seat: 0, number: 7).reason == .staleMoveNumber)
        #expect(fixture.game.state.moves == [0, 0, 0, 0, 0, 0, 1])

        // After the game is over (the match then takes no inputs, so ask the game itself).
        fixture.play([6, 2, 6, 3])
        #expect(fixture.result?.winner == "alice")
        fixture.takeAll()
        fixture.game.receive(.move(FourInARowMove(moveNumber: 13, column: 4)), fromSeat: 1, in: fixture.match)
        #expect(
            fixture.links[1].take()
                == [.moveRefused(FourInARowMoveRefused(moveNumber: 13, reason: .gameNotRunning, text: "the game is over"))])
    }

    // MARK: Turn timer and presence

    @Test func runningOutOfTimeLoses() throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.move(3)
        fixture.takeAll()
        fixture.clock.advance(by: .milliseconds(29_999))
        #expect(!fixture.match.isEnded)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(fixture.links[0].take() == [.gameOver(FourInARowGameOver(winnerSeat: 0, reason: .turnTimeout))])
        #expect(fixture.result == FourInARowResult(winner: "alice", loser: "bob", winnerSeat: 0, reason: .turnTimeout, moveCount: 1))
        // What MATCH_ENDED's reason says, in English.
        #expect(fixture.result?.description.hasSuffix(" after 1 move") == true, "\(String(describing: fixture.result))")
    }

    @Test func theTurnTimerKeepsRunningWhileThePlayerToMoveIsAway() throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.clock.advance(by: .seconds(5))
        fixture.match.disconnect(seat: 0, link: fixture.links[0])
        fixture.clock.advance(by: .seconds(24))
        #expect(!fixture.match.isEnded)
        fixture.clock.advance(by: .seconds(1))
        #expect(fixture.links[1].take() == [.gameOver(FourInARowGameOver(winnerSeat: 1, reason: .turnTimeout))])
        #expect(fixture.result?.winner == "bob")
        #expect(fixture.links[0].received.isEmpty, "an away player's bare connection gets nothing")
    }

    @Test func aReturningPlayerGetsTheBoardAsItIs() throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.play([3, 4])
        fixture.match.disconnect(seat: 1, link: fixture.links[1])
        fixture.move(3)
        fixture.clock.advance(by: .milliseconds(12_500))
        fixture.takeAll()
        let returning = FourInARowLink()
        fixture.match.connect(seat: 1, link: returning)
        let state = try #require(returning.take().first?.state)
        var board = [UInt8](repeating: 0, count: 42)
        board[3] = 1
        board[4] = 2
        board[10] = 1
        #expect(state.board == board)
        #expect(state.phase == .playing)
        #expect(state.moveNumber == 4)
        #expect(state.seatToMove == 1)
        #expect(state.turnTimeLeftMilliseconds == 17_500)
        #expect(fixture.links[0].received.isEmpty)
        fixture.move(4, seat: 1)
        #expect(returning.take().first?.moved?.moveNumber == 4)
    }

    @Test(arguments: [LeaveReason.left, .graceExpired, .sessionEnded])
    func theOpponentOfAPlayerWhoLeavesWins(reason: LeaveReason) throws {
        let fixture = FourInARowFixture()
        fixture.seatBoth()
        fixture.play([3, 3])
        fixture.takeAll()
        fixture.match.leave(seat: 0, reason: reason)
        #expect(fixture.links[1].take() == [.gameOver(FourInARowGameOver(winnerSeat: 1, reason: .opponentLeft))])
        #expect(fixture.result == FourInARowResult(winner: "bob", loser: "alice", winnerSeat: 1, reason: .opponentLeft, moveCount: 2))
        #expect(fixture.clock.pendingCount == 0)
    }

    @Test func anAwayOpponentStillWinsWhenTheOtherGraceRunsOut() {
        let fixture = FourInARowFixture(grace: .seconds(20))
        fixture.seatBoth()
        fixture.match.disconnect(seat: 1, link: fixture.links[1])
        fixture.clock.advance(by: .seconds(5))
        fixture.match.disconnect(seat: 0, link: fixture.links[0])
        fixture.clock.advance(by: .seconds(15))  // bob's grace runs out first
        #expect(fixture.result?.winner == "alice")
        #expect(fixture.result?.reason == .opponentLeft)
    }

    @Test func aGameNobodyArrivedAtIsAbandoned() {
        let fixture = FourInARowFixture(grace: .seconds(10))
        _ = fixture.match.join("alice", link: nil)
        _ = fixture.match.join("bob", link: nil)
        fixture.clock.advance(by: .seconds(10))
        #expect(fixture.abandonedReason == "both players are gone")
        #expect(fixture.clock.pendingCount == 0)
    }

    @Test func aLonePlayerLeavingBeforeTheStartAbandonsTheMatch() {
        let fixture = FourInARowFixture()
        _ = fixture.match.join("alice", link: fixture.links[0])
        fixture.match.leave(seat: 0)
        #expect(fixture.abandonedReason == "every player left before the game started")
    }

    // MARK: Journal

    @Test func movedIsSentOnlyOnceTheJournalHasTheMove() throws {
        let journal = RecordingJournal()
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.move(3)
        #expect(fixture.links.allSatisfy { $0.received.isEmpty })
        #expect(fixture.game.isCommitting)
        #expect(fixture.game.state.moves.isEmpty, "the committed state waits for the journal")
        let commit = try #require(journal.commits.first)
        #expect(commit.matchID == 77)
        #expect(commit.moveNumber == 1)
        #expect(try FourInARowClientMessage(body: commit.move) == .move(FourInARowMove(moveNumber: 1, column: 3)))
        let saved = try journal.latestState()
        #expect(saved.moves == [3])
        #expect(saved.players == ["alice", "bob"])

        journal.completeNext()
        #expect(!fixture.game.isCommitting)
        #expect(fixture.game.state == saved)
        for link in fixture.links {
            #expect(
                link.take()
                    == [.moved(FourInARowMoved(seat: 0, column: 3, row: 0, moveNumber: 1, nextSeat: 1, turnTimeMilliseconds: 30_000))])
        }
    }

    @Test func aFailedCommitRefusesTheMoveAndKeepsTheState() throws {
        let journal = RecordingJournal()
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.clock.advance(by: .seconds(10))
        fixture.move(3)
        fixture.clock.advance(by: .seconds(60))  // the turn timer waits for the journal
        #expect(!fixture.match.isEnded)
        journal.completeNext(RecordingJournal.StoreFailed())
        let refused = try #require(fixture.links[0].take().first?.refused)
        #expect(refused.moveNumber == 1)
        #expect(refused.reason == .couldNotBeSaved)
        #expect(fixture.links[1].received.isEmpty)
        #expect(fixture.game.state.moves.isEmpty)
        #expect(fixture.game.state.board == FourInARowBoard())
        // The mover goes on with the 20 s it had left.
        #expect(fixture.game.turnDeadline == fixture.clock.now + .seconds(20))
        fixture.move(5)
        journal.completeNext()
        #expect(fixture.links[1].take().first?.moved?.column == 5)
    }

    @Test func movesWhileACommitIsPendingAreRefused() throws {
        let journal = RecordingJournal()
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.move(3)
        fixture.move(4, seat: 1, number: 2)
        fixture.move(3, seat: 0, number: 1)
        #expect(fixture.links[1].take().first?.refused?.reason == .moveBeingCommitted)
        #expect(fixture.links[0].take().first?.refused?.reason == .moveBeingCommitted)
        #expect(journal.commits.count == 1)
        // A returning player sees the committed board, not the pending move.
        let returning = FourInARowLink()
        fixture.match.connect(seat: 1, link: returning)
        #expect(returning.take().first?.state?.board == [UInt8](repeating: 0, count: 42))
        journal.completeNext()
        fixture.move(4, seat: 1, number: 2)
        #expect(journal.commits.count == 2)
    }

    @Test func aJournalMayCompleteBeforeCommitReturns() throws {
        let journal = RecordingJournal()
        journal.completesAtOnce = true
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.play([0, 0, 1, 1, 2, 2, 3])
        #expect(journal.commits.map(\.moveNumber) == Array(1...7))
        #expect(fixture.result?.winner == "alice")
        #expect(try journal.latestState().phase == .over)
    }

    @Test func aCompletionAfterTheMatchEndedChangesNothing() {
        let journal = RecordingJournal()
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.move(3)
        fixture.match.end(.abandoned(reason: "server stopping"))
        #expect(fixture.abandonedReason == "server stopping")
        fixture.takeAll()
        journal.completeNext()
        #expect(fixture.links[0].received.isEmpty)
        #expect(fixture.game.state.moves.isEmpty)
    }

    /// Alice's first move waits in the journal while Bob leaves (what each side was sent before
    /// is taken).
    private static func bobLeavesWhileAlicesFirstMoveIsSaved() -> (RecordingJournal, FourInARowFixture) {
        let journal = RecordingJournal()
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.move(3)
        fixture.takeAll()
        fixture.match.leave(seat: 1)
        return (journal, fixture)
    }

    /// The move's write is queued ahead of the ending's, so it is stored whatever happens: the
    /// game plays it first (MOVED), then ends with it on the board, so that the stored log and
    /// the final state agree.
    @Test func anEndOffTheBoardWhileAMoveIsSavedComesAfterTheMove() throws {
        let (journal, fixture) = Self.bobLeavesWhileAlicesFirstMoveIsSaved()
        #expect(fixture.result == nil && fixture.abandonedReason == nil, "waits for the move")
        #expect(journal.endings.isEmpty)
        #expect(fixture.links[0].received.isEmpty)

        journal.completeNext()
        let told = fixture.links[0].take()
        #expect(told.first?.moved?.moveNumber == 1)
        #expect(told.last?.gameOver == FourInARowGameOver(winnerSeat: 0, reason: .opponentLeft, winningCells: []))
        #expect(fixture.result?.reason == .opponentLeft)
        #expect(fixture.result?.moveCount == 1)
        let saved = try FourInARowState(bytes: try #require(journal.endings.first).state)
        #expect(saved.moves.count == 1)
        #expect(saved.ending == FourInARowEnding(winnerSeat: 0, reason: .opponentLeft))
    }

    /// As with no move being saved, the first to leave loses, whoever leaves next.
    @Test func theFirstLeaveWhileAMoveIsSavedDecidesEvenIfTheOtherLeavesToo() throws {
        let (journal, fixture) = Self.bobLeavesWhileAlicesFirstMoveIsSaved()
        fixture.match.leave(seat: 0)
        #expect(fixture.result == nil && fixture.abandonedReason == nil, "waits for the move")
        journal.completeNext()
        #expect(fixture.result?.reason == .opponentLeft)
        #expect(fixture.result?.winner == "alice")
        #expect(fixture.result?.moveCount == 1)
    }

    @Test func anEndOffTheBoardWhileAMoveFailsToBeSavedEndsWithoutIt() throws {
        let (journal, fixture) = Self.bobLeavesWhileAlicesFirstMoveIsSaved()
        journal.completeNext(RecordingJournal.StoreFailed())
        let told = fixture.links[0].take()
        #expect(told.first?.refused?.reason == .couldNotBeSaved)
        #expect(told.last?.gameOver?.reason == .opponentLeft)
        #expect(fixture.result?.moveCount == 0)
        #expect(try FourInARowState(bytes: try #require(journal.endings.first).state).moves.isEmpty)
    }

    @Test func anEndOffTheBoardIsCommittedBeforeAnyoneIsToldOfIt() throws {
        let journal = RecordingJournal()
        journal.completesAtOnce = true
        journal.endingsWait = true
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.move(3)
        fixture.takeAll()
        fixture.clock.advance(by: .seconds(30))
        // Bob's turn ran out: the final state goes to the journal, and nobody hears of it yet.
        let ending = try #require(journal.endings.first)
        let saved = try FourInARowState(bytes: ending.state)
        #expect(saved.phase == .over)
        #expect(saved.ending == FourInARowEnding(winnerSeat: 0, reason: .turnTimeout))
        #expect(saved.moves.count == 1)
        #expect(fixture.links.allSatisfy { $0.received.isEmpty })
        #expect(!fixture.match.isEnded)
        // Over for the rules already: a move is refused, a leaving player changes nothing.
        fixture.move(4, seat: 1, number: 2)
        #expect(fixture.links[1].take().map(\.refused?.reason) == [.gameNotRunning])
        fixture.match.leave(seat: 0)
        #expect(journal.endings.count == 1)
        #expect(!fixture.match.isEnded)

        journal.completeEnding()
        #expect(fixture.links[1].take() == [.gameOver(FourInARowGameOver(winnerSeat: 0, reason: .turnTimeout))])
        #expect(fixture.result == FourInARowResult(winner: "alice", loser: "bob", winnerSeat: 0, reason: .turnTimeout, moveCount: 1))
    }

    @Test func anEndThatCannotBeSavedIsStillTold() throws {
        let journal = RecordingJournal()
        journal.endingsWait = true
        let fixture = FourInARowFixture(options: FourInARowOptions(journal: journal))
        fixture.seatBoth()
        fixture.takeAll()
        fixture.match.leave(seat: 1)
        #expect(fixture.links[0].received.isEmpty)
        journal.completeEnding(RecordingJournal.StoreFailed())
        #expect(fixture.links[0].take() == [.gameOver(FourInARowGameOver(winnerSeat: 0, reason: .opponentLeft))])
        #expect(fixture.result?.reason == .opponentLeft)
    }

    // MARK: Restore

    @Test func aRestoredGameGoesOnWithAFullTurn() throws {
        let journal = RecordingJournal()
        journal.completesAtOnce = true
        let first = FourInARowFixture(options: FourInARowOptions(journal: journal))
        first.seatBoth()
        first.play([3, 3, 4])
        first.clock.advance(by: .seconds(25))
        let saved = try journal.latestState()

        // The server restarts: a new match from the saved state, both seats reserved again.
        let restored = FourInARowFixture(options: FourInARowOptions(turnTimeLimit: .seconds(20), restoredState: saved))
        #expect(restored.match.join("bob", link: nil) == .failure(.refusedByGame("this saved game has alice in seat 0")))
        _ = restored.match.join("alice", link: nil)
        _ = restored.match.join("bob", link: nil)
        restored.match.connect(seat: 1, link: restored.links[1])
        let state = try #require(restored.links[1].take().first?.state)
        #expect(state.phase == .playing)
        #expect(state.moveNumber == 4)
        #expect(state.seatToMove == 1)
        #expect(state.turnTimeLeftMilliseconds == 20_000)
        #expect(state.board == saved.board.cells)

        restored.clock.advance(by: .milliseconds(19_999))
        restored.move(4, seat: 1, number: 4)
        // Alice is not back yet: her turn's timer waits for her.
        #expect(
            restored.links[1].take().first?.moved
                == FourInARowMoved(
                    seat: 1, column: 4, row: 1, moveNumber: 4, nextSeat: 0, turnTimeMilliseconds: FourInARowSnapshot.turnWaitsForArrival))
        restored.clock.advance(by: .seconds(25))
        #expect(!restored.match.isEnded)
        restored.match.connect(seat: 0, link: restored.links[0])
        #expect(restored.links[0].take().first?.state?.turnTimeLeftMilliseconds == 20_000)
        #expect(restored.links[1].take().first?.state?.turnTimeLeftMilliseconds == 20_000)
        restored.clock.advance(by: .seconds(20))
        #expect(restored.result == FourInARowResult(winner: "bob", loser: "alice", winnerSeat: 1, reason: .turnTimeout, moveCount: 4))
    }

    @Test func aRestoredGameTimesOutAfterAFullTurn() {
        var saved = FourInARowState()
        saved.addPlayer("alice")
        saved.addPlayer("bob")
        saved.start()
        _ = saved.play(column: 2)
        let fixture = FourInARowFixture(options: FourInARowOptions(restoredState: try! FourInARowState(bytes: saved.encoded())))
        fixture.seatBoth()
        fixture.clock.advance(by: .milliseconds(29_999))
        #expect(!fixture.match.isEnded)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(fixture.result?.winner == "alice")
        #expect(fixture.result?.reason == .turnTimeout)
    }

    @Test func aRestoredFinishedGameEndsWithItsResult() throws {
        var saved = FourInARowState()
        saved.addPlayer("alice")
        saved.addPlayer("bob")
        saved.start()
        _ = saved.play(column: 2)
        saved.finish(winnerSeat: 0, reason: .turnTimeout)
        let fixture = FourInARowFixture(options: FourInARowOptions(restoredState: saved))
        fixture.seatBoth()
        #expect(fixture.result == FourInARowResult(winner: "alice", loser: "bob", winnerSeat: 0, reason: .turnTimeout, moveCount: 1))
        #expect(fixture.clock.pendingCount == 0)
    }
}
