import MatchHostCore
import MatchHostWire

/// How a finished game ended.
public struct FourInARowEnding: Hashable, Sendable {
    /// The winning seat, or nil for a draw.
    public var winnerSeat: Int?
    /// Why it ended.
    public var reason: FourInARowEndReason
    /// The cells of the winning line(s), ascending; empty unless the reason is four in a row.
    public var winningCells: [Int]

    /// Creates an ending.
    public init(winnerSeat: Int?, reason: FourInARowEndReason, winningCells: [Int] = []) {
        self.winnerSeat = winnerSeat
        self.reason = reason
        self.winningCells = winningCells
    }
}

/// A whole game of Four in a Row: players, board, moves, whose turn and how it ended.
///
/// A pure value, with no time in it (the turn timer belongs to ``FourInARowGame``, and
/// restarts in full after a restore). It is what a ``TurnJournal`` stores after each move
/// and what a game is restored from; see ``encode(into:)`` and ``init(bytes:)``.
public struct FourInARowState: Hashable, Sendable {
    /// The discs on the board; always the result of replaying ``moves``.
    public private(set) var board = FourInARowBoard()
    /// The players' ids, in seat order (fewer than two while waiting).
    public private(set) var players: [PlayerID]
    /// The seat that makes move 1.
    public let firstSeat: Int
    /// The column of every move played, in order.
    public private(set) var moves: [Int] = []
    /// Where the game stands.
    public private(set) var phase: FourInARowPhase = .waiting
    /// How it ended, once ``phase`` is over.
    public private(set) var ending: FourInARowEnding?

    /// A game nobody has joined yet.
    /// - Parameter firstSeat: the seat that moves first, 0 or 1.
    public init(firstSeat: Int = 0) {
        precondition(firstSeat == 0 || firstSeat == 1, "seat 0 or 1 moves first")
        self.firstSeat = firstSeat
        self.players = []
    }

    /// The seat whose turn it is (while playing).
    public var seatToMove: Int { (self.firstSeat + self.moves.count) % 2 }
    /// The number the next move has: 1 before the first.
    public var moveNumber: Int { self.moves.count + 1 }

    /// Seats `player` in the next seat. At most two.
    public mutating func addPlayer(_ player: PlayerID) {
        precondition(self.players.count < 2 && self.phase == .waiting, "two players, seated before play")
        self.players.append(player)
    }

    /// Starts play once both seats are taken.
    public mutating func start() {
        precondition(self.phase == .waiting && self.players.count == 2, "a game starts once, with two players")
        self.phase = .playing
    }

    /// Plays the move of the seat to move into `column`; a line of four or a full board ends the game.
    public mutating func play(column: Int) -> Result<FourInARowDrop, FourInARowRefusal> {
        guard self.phase == .playing else { return .failure(.gameNotRunning) }
        let result = self.board.drop(seat: self.seatToMove, column: column)
        guard case .success(let drop) = result else { return result }
        let mover = self.seatToMove
        self.moves.append(column)
        switch drop.outcome {
        case .continues: break
        case .won(let cells): self.finish(FourInARowEnding(winnerSeat: mover, reason: .fourInARow, winningCells: cells))
        case .draw: self.finish(FourInARowEnding(winnerSeat: nil, reason: .draw))
        }
        return result
    }

    /// Ends the game for a reason that is not on the board (a turn timeout, a player leaving).
    public mutating func finish(winnerSeat: Int, reason: FourInARowEndReason) {
        precondition(winnerSeat == 0 || winnerSeat == 1, "seat 0 or 1 wins")
        self.finish(FourInARowEnding(winnerSeat: winnerSeat, reason: reason))
    }

    private mutating func finish(_ ending: FourInARowEnding) {
        precondition(self.phase == .playing, "only a game in play ends")
        self.phase = .over
        self.ending = ending
    }
}
