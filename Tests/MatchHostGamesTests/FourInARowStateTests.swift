import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import Testing

/// The pure rules (board, state) and the state's stored form.
@Suite struct FourInARowStateTests {
    /// A full game with no line of four: seat 0 makes the odd moves.
    static let drawnGame = [
        5, 3, 2, 3, 1, 5, 3, 1, 0, 1, 4, 1, 2, 5, 0, 5, 6, 6, 2, 0, 6, 0, 4, 2, 3, 0, 3, 4, 2, 3, 2, 6, 0, 4, 1, 1, 5, 4,
        4, 5, 6, 6,
    ]

    private func playing(_ columns: [Int] = [], firstSeat: Int = 0) -> FourInARowState {
        var state = FourInARowState(firstSeat: firstSeat)
        state.addPlayer("alice")
        state.addPlayer("bob")
        state.start()
        for column in columns {
            guard case .success = state.play(column: column) else {
                Issue.record("column \(column) could not be played")
                return state
            }
        }
        return state
    }

    // MARK: Board

    @Test func discsFallToTheLowestEmptyRow() throws {
        var board = FourInARowBoard()
        #expect(try board.drop(seat: 0, column: 3).get() == FourInARowDrop(column: 3, row: 0, outcome: .continues))
        #expect(try board.drop(seat: 1, column: 3).get() == FourInARowDrop(column: 3, row: 1, outcome: .continues))
        #expect(board.cells[3] == 1)
        #expect(board.cells[10] == 2)
        #expect(board.seat(column: 3, row: 1) == 1)
        #expect(board.seat(column: 3, row: 2) == nil)
        #expect(board.cells.filter { $0 != 0 }.count == 2)
    }

    @Test func aFullColumnAndAColumnOffTheBoardAreRefused() {
        var board = FourInARowBoard()
        for row in 0..<6 { #expect((try? board.drop(seat: row % 2, column: 0).get())?.row == row) }
        #expect(board.drop(seat: 0, column: 0) == .failure(.columnFull))
        #expect(board.drop(seat: 0, column: 7) == .failure(.columnOutOfRange))
        #expect(board.drop(seat: 0, column: -1) == .failure(.columnOutOfRange))
        #expect(board.landingRow(column: 0) == nil)
        #expect(board.landingRow(column: 1) == 0)
    }

    @Test func everyDirectionWins() throws {
        // Across, up, up-right, down-right: seat 0's discs, others' discs in between as needed.
        var across = FourInARowBoard()
        for column in [0, 1, 3] { _ = across.drop(seat: 0, column: column) }
        #expect(try across.drop(seat: 0, column: 2).get().outcome == .won(cells: [0, 1, 2, 3]))

        var up = FourInARowBoard()
        _ = up.drop(seat: 1, column: 4)
        for _ in 0..<3 { _ = up.drop(seat: 0, column: 4) }
        #expect(try up.drop(seat: 0, column: 4).get().outcome == .won(cells: [11, 18, 25, 32]))

        var upRight = FourInARowBoard()
        for (column, height) in [(1, 1), (2, 2), (3, 3)] {
            for _ in 0..<height { _ = upRight.drop(seat: 1, column: column) }
        }
        for column in [0, 1, 3] { _ = upRight.drop(seat: 0, column: column) }
        #expect(try upRight.drop(seat: 0, column: 2).get().outcome == .won(cells: [0, 8, 16, 24]))

        var downRight = FourInARowBoard()
        for (column, height) in [(3, 3), (4, 2), (5, 1)] {
            for _ in 0..<height { _ = downRight.drop(seat: 1, column: column) }
        }
        for column in [3, 4, 6] { _ = downRight.drop(seat: 0, column: column) }
        #expect(try downRight.drop(seat: 0, column: 5).get().outcome == .won(cells: [6, 12, 18, 24]))
    }

    @Test func threeInARowAndBrokenLinesDoNotWin() throws {
        var board = FourInARowBoard()
        for column in [0, 1, 2] { #expect(try board.drop(seat: 0, column: column).get().outcome == .continues) }
        _ = board.drop(seat: 1, column: 3)
        #expect(try board.drop(seat: 0, column: 4).get().outcome == .continues)
        #expect(try board.drop(seat: 0, column: 5).get().outcome == .continues)
    }

    @Test func aLineOfFiveReportsAllItsCells() throws {
        var board = FourInARowBoard()
        for column in [0, 1, 3, 4] { _ = board.drop(seat: 1, column: column) }
        #expect(try board.drop(seat: 1, column: 2).get().outcome == .won(cells: [0, 1, 2, 3, 4]))
    }

    @Test func aFullBoardWithoutALineIsADraw() {
        var state = self.playing(Array(Self.drawnGame.dropLast()))
        #expect(state.phase == .playing)
        #expect(state.play(column: Self.drawnGame.last!) == .success(FourInARowDrop(column: 6, row: 5, outcome: .draw)))
        #expect(state.board.isFull)
        #expect(state.phase == .over)
        #expect(state.ending == FourInARowEnding(winnerSeat: nil, reason: .draw))
        #expect(state.play(column: 0) == .failure(.gameNotRunning))
    }

    // MARK: State

    @Test func turnsAlternateFromTheFirstSeat() {
        var state = self.playing(firstSeat: 1)
        #expect(state.seatToMove == 1)
        #expect(state.moveNumber == 1)
        _ = state.play(column: 0)
        #expect(state.seatToMove == 0)
        #expect(state.moveNumber == 2)
        #expect(state.board.seat(column: 0, row: 0) == 1)
        var notStarted = FourInARowState()
        #expect(notStarted.play(column: 0) == .failure(.gameNotRunning))
    }

    @Test func theStoredFormRoundTrips() throws {
        var waiting = FourInARowState(firstSeat: 1)
        waiting.addPlayer("ålice")
        var timedOut = self.playing([3, 3, 4])
        timedOut.finish(winnerSeat: 0, reason: .turnTimeout)
        var left = self.playing([])
        left.finish(winnerSeat: 1, reason: .opponentLeft)
        let states = [
            FourInARowState(), waiting, self.playing(), self.playing([3, 3, 4], firstSeat: 1),
            self.playing([0, 0, 1, 1, 2, 2, 3]), self.playing(Self.drawnGame), timedOut, left,
        ]
        for state in states {
            let decoded = try FourInARowState(bytes: state.encoded())
            #expect(decoded == state)
            #expect(decoded.encoded() == state.encoded())
        }
        #expect(try FourInARowState(bytes: self.playing([0, 0, 1, 1, 2, 2, 3]).encoded()).ending?.winningCells == [0, 1, 2, 3])
    }

    @Test func theStoredFormIsCompact() {
        // version, phase, first seat, count, 2 × (2 + 5), move count, 3 moves.
        #expect(
            Array(self.playing([3, 3, 4]).encoded().readableBytesView)
                == [1, 1, 0, 2, 0, 5] + Array("alice".utf8) + [0, 3] + Array("bob".utf8) + [3, 3, 3, 4])
    }

    @Test func garbageIsRejectedWithATypedError() {
        let good = Array(self.playing([3, 3, 4]).encoded().readableBytesView)
        func decode(_ bytes: [UInt8]) throws(FourInARowStateError) { _ = try FourInARowState(bytes: ByteBuffer(bytes: bytes)) }
        func with(_ index: Int, _ value: UInt8) -> [UInt8] {
            var bytes = good
            bytes[index] = value
            return bytes
        }

        #expect(throws: FourInARowStateError.truncated(field: "version")) { try decode([]) }
        #expect(throws: FourInARowStateError.unsupportedVersion(2)) { try decode(with(0, 2)) }
        #expect(throws: FourInARowStateError.invalidValue(field: "phase", value: 3)) { try decode(with(1, 3)) }
        #expect(throws: FourInARowStateError.invalidValue(field: "firstSeat", value: 2)) { try decode(with(2, 2)) }
        #expect(throws: FourInARowStateError.inconsistent("3 players in a game that is playing")) { try decode(with(3, 3)) }
        #expect(throws: FourInARowStateError.invalidPlayerID(index: 0)) { try decode(with(6, 0xFF)) }
        #expect(throws: FourInARowStateError.illegalMove(index: 1, column: 9)) { try decode(with(18, 9)) }
        #expect(throws: FourInARowStateError.trailingBytes(count: 1)) { try decode(good + [0]) }
        #expect(throws: FourInARowStateError.inconsistent("moves in a game that has not started")) {
            try decode([1, 0, 0, 1, 0, 1, 0x61, 1, 3])
        }
        // A stored id longer than any player id.
        #expect(throws: FourInARowStateError.invalidPlayerID(index: 0)) {
            try decode([1, 0, 0, 1, 1, 0] + [UInt8](repeating: 0x61, count: 256) + [0])
        }
        // Every proper prefix is truncated.
        for length in 0..<good.count {
            do {
                try decode(Array(good.prefix(length)))
                Issue.record("a prefix of \(length) bytes decoded")
            } catch {
                if case .truncated = error { continue }
                Issue.record("a prefix of \(length) bytes gave \(error)")
            }
        }

        // Fields that contradict the replayed board.
        let won = Array(self.playing([0, 0, 1, 1, 2, 2, 3]).encoded().readableBytesView)
        var wonAsPlaying = Array(won.dropLast(2))
        wonAsPlaying[1] = FourInARowPhase.playing.rawValue
        #expect(throws: FourInARowStateError.inconsistent("the moves end the game but it is saved as playing")) {
            try decode(wonAsPlaying)
        }
        var wonAsTimeout = won
        wonAsTimeout[wonAsTimeout.count - 1] = FourInARowEndReason.turnTimeout.rawValue
        #expect(throws: FourInARowStateError.inconsistent("the board ended the game, not turn timeout")) { try decode(wonAsTimeout) }
        var wrongWinner = won
        wrongWinner[wrongWinner.count - 2] = 1
        #expect(throws: FourInARowStateError.inconsistent("saved as ended by four in a row but the board does not say so")) {
            try decode(wrongWinner)
        }
        var afterTheEnd = self.playing([0, 0, 1, 1, 2, 2]).encoded()
        afterTheEnd.setInteger(UInt8(8), at: 16)  // move count: 6 → 8, with 3 and 6 appended
        let extraMoves = Array(afterTheEnd.readableBytesView) + [3, 6]
        #expect(throws: FourInARowStateError.inconsistent("move 8 comes after the game ended")) { try decode(extraMoves) }
        var timeoutOfTheWinner = self.playing([3])
        timeoutOfTheWinner.finish(winnerSeat: 0, reason: .opponentLeft)
        var ownTimeout = Array(timeoutOfTheWinner.encoded().readableBytesView)
        ownTimeout[ownTimeout.count - 1] = FourInARowEndReason.turnTimeout.rawValue
        ownTimeout[ownTimeout.count - 2] = 1  // seat 1 is to move: it cannot win on its own timeout
        #expect(throws: FourInARowStateError.inconsistent("the seat to move cannot win on its own timeout")) { try decode(ownTimeout) }
    }
}
