import MatchHostClient
import MatchHostWire
import Testing

/// ``FourInARowView``, ``FourInARowCells`` and ``FourInARowStrategy`` without sockets: the
/// messages are built by hand, time is an instant plus offsets.
@Suite struct FourInARowViewTests {
    static let ann = "ann-0123456789abcdef0123456789ab"
    static let bo = "bo-00123456789abcdef0123456789ab"
    static let players: [FourInARowSnapshot.Player] = [.init(seat: 0, playerID: ann), .init(seat: 1, playerID: bo)]

    /// A board with `discs` at (column, row, disc).
    static func board(_ discs: [(Int, Int, UInt8)]) -> [UInt8] {
        var cells = FourInARowCells()
        for (column, row, disc) in discs {
            cells[column: column, row: row] = disc
        }
        return cells.cells
    }

    static func playing(_ board: [UInt8], next: UInt16, toMove: UInt8, timeLeftMs: UInt32) -> FourInARowServerMessage {
        .state(
            FourInARowSnapshot(
                phase: .playing, players: players, board: board, moveNumber: next, seatToMove: toMove,
                turnTimeLeftMilliseconds: timeLeftMs, result: nil))
    }

    @Test func stateTellsSeatTurnAndTimeLeft() {
        let start = ContinuousClock.now
        var ann = FourInARowView(myPlayerID: Self.ann)
        var bo = FourInARowView(myPlayerID: Self.bo)
        #expect(!ann.hasState && ann.mySeat == nil && !ann.isMyTurn)

        let board = Self.board([(3, 0, 1), (3, 1, 2)])
        let state = Self.playing(board, next: 3, toMove: 0, timeLeftMs: 27_500)
        ann.apply(state, at: start)
        bo.apply(state, at: start)
        #expect(ann.hasState && ann.phase == .playing)
        #expect(ann.mySeat == 0 && ann.opponentSeat == 1)
        #expect(bo.mySeat == 1 && bo.opponentSeat == 0)
        #expect(ann.isMyTurn && !bo.isMyTurn)
        #expect(ann.nextMoveNumber == 3 && ann.moveCount == 2)
        #expect(ann.cells[column: 3, row: 0] == 1 && ann.cells[column: 3, row: 1] == 2 && ann.cells.discCount == 2)
        #expect(ann.playerID(seat: 1) == Self.bo)
        // The countdown runs from when the STATE was applied, and stops at zero.
        #expect(ann.turnTimeLeft(at: start) == .milliseconds(27_500))
        #expect(ann.turnTimeLeft(at: start + .seconds(10)) == .milliseconds(17_500))
        #expect(ann.turnTimeLeft(at: start + .seconds(40)) == .zero)
        #expect(ann.result == nil && !ann.isOver && !ann.isDraw && !ann.iWon)
    }

    @Test func waitingStateHasNoTurn() {
        var ann = FourInARowView(myPlayerID: Self.ann)
        ann.apply(
            .state(
                FourInARowSnapshot(
                    phase: .waiting, players: [.init(seat: 0, playerID: Self.ann)], board: FourInARowCells().cells,
                    moveNumber: 1, seatToMove: nil, turnTimeLeftMilliseconds: 0, result: nil)),
            at: .now)
        #expect(ann.phase == .waiting && ann.mySeat == 0 && ann.opponentSeat == 1)
        #expect(!ann.isMyTurn && ann.seatToMove == nil && ann.turnTimeLeft(at: .now) == nil)
        #expect(ann.playerID(seat: 1) == nil)
    }

    @Test func aTurnWaitingForItsPlayerHasNoCountdownUntilItStarts() {
        let start = ContinuousClock.now
        var ann = FourInARowView(myPlayerID: Self.ann)
        ann.apply(Self.playing(FourInARowCells().cells, next: 1, toMove: 1, timeLeftMs: FourInARowSnapshot.turnWaitsForArrival), at: start)
        #expect(ann.seatToMove == 1 && ann.turnWaitsForArrival)
        #expect(ann.turnTimeLeft(at: start) == nil)
        ann.apply(Self.playing(FourInARowCells().cells, next: 1, toMove: 1, timeLeftMs: 30_000), at: start + .seconds(50))
        #expect(!ann.turnWaitsForArrival)
        #expect(ann.turnTimeLeft(at: start + .seconds(51)) == .seconds(29))
        // Bo moves; ann's own turn then waits for nobody.
        ann.apply(.moved(FourInARowMoved(seat: 1, column: 0, row: 0, moveNumber: 1, nextSeat: 0, turnTimeMilliseconds: 30_000)), at: start + .seconds(52))
        #expect(ann.isMyTurn && !ann.turnWaitsForArrival)
        // A MOVED whose next player has not arrived says so too.
        ann.apply(
            .moved(FourInARowMoved(seat: 0, column: 1, row: 0, moveNumber: 2, nextSeat: 1, turnTimeMilliseconds: FourInARowSnapshot.turnWaitsForArrival)),
            at: start + .seconds(53))
        #expect(ann.turnWaitsForArrival && ann.turnTimeLeft(at: start + .seconds(53)) == nil)
    }

    @Test func movedDropsTheDiscAndPassesTheTurn() {
        let start = ContinuousClock.now
        var bo = FourInARowView(myPlayerID: Self.bo)
        bo.apply(Self.playing(FourInARowCells().cells, next: 1, toMove: 0, timeLeftMs: 30_000), at: start)
        let moved = FourInARowMoved(seat: 0, column: 4, row: 0, moveNumber: 1, nextSeat: 1, turnTimeMilliseconds: 30_000)
        bo.apply(.moved(moved), at: start + .seconds(2))
        #expect(bo.cells[column: 4, row: 0] == 1)
        #expect(bo.nextMoveNumber == 2 && bo.moveCount == 1)
        #expect(bo.isMyTurn && bo.seatToMove == 1)
        #expect(bo.lastMove == moved)
        #expect(bo.turnTimeLeft(at: start + .seconds(3)) == .seconds(29))

        // The same MOVED again (or one a STATE already covered) changes nothing.
        bo.apply(.moved(moved), at: start + .seconds(5))
        #expect(bo.cells.discCount == 1 && bo.nextMoveNumber == 2)
        #expect(bo.turnTimeLeft(at: start + .seconds(3)) == .seconds(29))
    }

    @Test func refusalIsKeptUntilTheNextMove() {
        var ann = FourInARowView(myPlayerID: Self.ann)
        ann.apply(Self.playing(FourInARowCells().cells, next: 1, toMove: 1, timeLeftMs: 30_000), at: .now)
        ann.apply(.moveRefused(FourInARowMoveRefused(moveNumber: 1, reason: .notYourTurn, text: "it is seat 1's turn")), at: .now)
        #expect(ann.lastRefusal?.reason == .notYourTurn)
        #expect(ann.lastRefusalText == "It is not your turn.")
        // A refusal changes nothing else.
        #expect(ann.nextMoveNumber == 1 && ann.cells.discCount == 0 && ann.seatToMove == 1)
        ann.apply(
            .moved(FourInARowMoved(seat: 1, column: 0, row: 0, moveNumber: 1, nextSeat: 0, turnTimeMilliseconds: 30_000)),
            at: .now)
        #expect(ann.lastRefusal == nil && ann.lastRefusalText == nil)
        #expect(FourInARowView.describe(.columnFull) == "That column is full.")
    }

    @Test func gameOverNamesTheWinnerAndItsLine() {
        let start = ContinuousClock.now
        var ann = FourInARowView(myPlayerID: Self.ann)
        var bo = FourInARowView(myPlayerID: Self.bo)
        // X on row 0 columns 1-3, O on row 1 above them: X's move 7 into column 4 wins.
        let board = Self.board([(1, 0, 1), (2, 0, 1), (3, 0, 1), (1, 1, 2), (2, 1, 2), (3, 1, 2)])
        let winning = FourInARowMoved(seat: 0, column: 4, row: 0, moveNumber: 7, nextSeat: nil, turnTimeMilliseconds: 0)
        let over = FourInARowGameOver(winnerSeat: 0, reason: .fourInARow, winningCells: [1, 2, 3, 4])
        for index in [0, 1] {
            var view = index == 0 ? ann : bo
            view.apply(Self.playing(board, next: 7, toMove: 0, timeLeftMs: 30_000), at: start)
            view.apply(.moved(winning), at: start)
            #expect(view.seatToMove == nil && view.turnTimeLeft(at: start) == nil && !view.isMyTurn)
            #expect(view.phase == .playing)  // until GAME_OVER says how it ended
            view.apply(.gameOver(over), at: start)
            if index == 0 { ann = view } else { bo = view }
        }
        #expect(ann.isOver && ann.iWon && !ann.isDraw && ann.winnerSeat == 0 && ann.endReason == .fourInARow)
        #expect(bo.isOver && !bo.iWon && bo.winnerSeat == 0)
        #expect(ann.winningCells == [1, 2, 3, 4])
        #expect(ann.moveCount == 7)
        #expect(
            ann.boardLines() == [
                "  1   2   3   4   5   6   7  ",
                "|   |   |   |   |   |   |   |",
                "|   |   |   |   |   |   |   |",
                "|   |   |   |   |   |   |   |",
                "|   |   |   |   |   |   |   |",
                "|   | O | O | O |   |   |   |",
                "|   |[X]|[X]|[X]|[X]|   |   |",
                "+---+---+---+---+---+---+---+",
            ])
    }

    @Test func lastMoveIsMarkedUntilTheGameEnds() {
        var bo = FourInARowView(myPlayerID: Self.bo)
        bo.apply(Self.playing(FourInARowCells().cells, next: 1, toMove: 0, timeLeftMs: 30_000), at: .now)
        bo.apply(
            .moved(FourInARowMoved(seat: 0, column: 6, row: 0, moveNumber: 1, nextSeat: 1, turnTimeMilliseconds: 30_000)),
            at: .now)
        #expect(bo.boardLines()[6] == "|   |   |   |   |   |   |(X)|")
        // A STATE that agrees with it keeps the mark; one further on drops it.
        bo.apply(Self.playing(bo.cells.cells, next: 2, toMove: 1, timeLeftMs: 20_000), at: .now)
        #expect(bo.lastMove != nil)
        bo.apply(Self.playing(Self.board([(6, 0, 1), (0, 0, 2), (6, 1, 1)]), next: 4, toMove: 1, timeLeftMs: 20_000), at: .now)
        #expect(bo.lastMove == nil)
        #expect(bo.boardLines()[6] == "| O |   |   |   |   |   | X |")
    }

    @Test func drawAndFinishedState() {
        var ann = FourInARowView(myPlayerID: Self.ann)
        ann.apply(.gameOver(FourInARowGameOver(winnerSeat: nil, reason: .draw)), at: .now)
        #expect(ann.isOver && ann.isDraw && !ann.iWon && ann.winnerSeat == nil && ann.winningCells.isEmpty)

        // Coming back to a game that ended: STATE carries the result.
        var bo = FourInARowView(myPlayerID: Self.bo)
        bo.apply(
            .state(
                FourInARowSnapshot(
                    phase: .over, players: Self.players, board: Self.board([(0, 0, 1)]), moveNumber: 2, seatToMove: nil,
                    turnTimeLeftMilliseconds: 0, result: FourInARowGameOver(winnerSeat: 1, reason: .turnTimeout))),
            at: .now)
        #expect(bo.isOver && bo.iWon && bo.endReason == .turnTimeout && bo.turnTimeLeft(at: .now) == nil)
    }

    // MARK: Cells

    @Test func cellsLandAndFindLines() {
        var cells = FourInARowCells()
        #expect(cells.landingRow(column: 2) == 0)
        #expect(cells.landingRow(column: 7) == nil && cells.landingRow(column: -1) == nil)
        for row in 0..<6 {
            #expect(cells.drop(row % 2 == 0 ? 1 : 2, column: 2) == row)
        }
        #expect(cells.landingRow(column: 2) == nil)
        #expect(cells.drop(1, column: 2) == nil)
        #expect(cells.openColumns == [0, 1, 3, 4, 5, 6])
        #expect(!cells.isFull && cells.discCount == 6)

        // A diagonal of X from (0,0) to (3,3), and a fifth disc making the row 0 line 0-3 too.
        var diagonal = FourInARowCells()
        for (column, row) in [(0, 0), (1, 1), (2, 2), (3, 3), (1, 0), (2, 0), (3, 0)] {
            diagonal[column: column, row: row] = 1
        }
        #expect(diagonal.linesOfFour(through: 0) == [0, 1, 2, 3, 8, 16, 24])
        #expect(diagonal.linesOfFour(through: 8) == [0, 8, 16, 24])
        #expect(diagonal.linesOfFour(through: 40) == [])  // empty cell
        var three = FourInARowCells()
        for column in 0..<3 { three.drop(2, column: column) }
        #expect(three.dropWins(2, column: 3) && !three.dropWins(1, column: 3) && !three.dropWins(2, column: 5))
    }

    // MARK: Strategy

    @Test func strategyWinsThenBlocksThenAvoidsGivingAWin() throws {
        var generator = FourInARowBotRandom(seed: 1)
        // X has three across row 0 (columns 0-2), O has columns 5 and 6 at the right: X wins at column 3.
        var cells = FourInARowCells()
        for column in 0..<3 { cells.drop(1, column: column) }
        for column in [6, 6, 5] { cells.drop(2, column: column) }
        for _ in 0..<20 {
            #expect(FourInARowStrategy.chooseColumn(in: cells, disc: 1, using: &generator) == 3)
        }
        // O cannot win at once, so it blocks X at column 3.
        for _ in 0..<20 {
            #expect(FourInARowStrategy.chooseColumn(in: cells, disc: 2, using: &generator) == 3)
        }
        // O has row 1 at columns 1-3 and could complete it at (0,1) now: X blocks column 0.
        var trap = FourInARowCells()
        for (column, row, disc) in [(0, 0, 1), (1, 0, 1), (2, 0, 2), (3, 0, 1), (1, 1, 2), (2, 1, 2), (3, 1, 2)] as [(Int, Int, UInt8)] {
            trap[column: column, row: row] = disc
        }
        #expect(FourInARowStrategy.chooseColumn(in: trap, disc: 1, using: &generator) == 0)
        // With (0,1) blocked, (4,1) is still O's: X never drops into column 4 (row 0) under it.
        trap.drop(1, column: 0)
        trap.drop(2, column: 6)
        var chosen = Set<Int>()
        for _ in 0..<100 {
            chosen.insert(try #require(FourInARowStrategy.chooseColumn(in: trap, disc: 1, using: &generator)))
        }
        #expect(!chosen.contains(4))
        #expect(chosen.count >= 4)  // still random among the safe columns
    }

    @Test func strategyIsSeededAndFavorsTheCenter() {
        let empty = FourInARowCells()
        var first = FourInARowBotRandom(seed: 42)
        var second = FourInARowBotRandom(seed: 42)
        let a = (0..<50).map { _ in FourInARowStrategy.chooseColumn(in: empty, disc: 1, using: &first) }
        let b = (0..<50).map { _ in FourInARowStrategy.chooseColumn(in: empty, disc: 1, using: &second) }
        #expect(a == b)
        var generator = FourInARowBotRandom(seed: 7)
        var counts = Array(repeating: 0, count: 7)
        for _ in 0..<2000 {
            counts[FourInARowStrategy.chooseColumn(in: empty, disc: 1, using: &generator)!] += 1
        }
        #expect(counts.allSatisfy { $0 > 0 })
        #expect(counts[3] > counts[2] && counts[2] > counts[1] && counts[1] > counts[0])
        #expect(counts[3] > counts[4] && counts[4] > counts[5] && counts[5] > counts[6])

        var full = FourInARowCells()
        for column in 0..<7 {
            for row in 0..<6 { full[column: column, row: row] = UInt8((column + row / 2) % 2 + 1) }
        }
        #expect(full.isFull)
        #expect(FourInARowStrategy.chooseColumn(in: full, disc: 1, using: &generator) == nil)
    }
}
