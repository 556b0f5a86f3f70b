import MatchHostWire

/// What one Four in a Row player knows about its game, folded from the server's messages.
///
/// Pure state, no I/O: feed it every ``FourInARowServerMessage`` with ``apply(_:at:)`` and
/// ask it whose turn it is, how long that turn has left, and how the game ended. The server
/// decides everything; the view only records what it said.
///
/// ```swift
/// var view = FourInARowView(myPlayerID: game.playerID)
/// while let event = try await game.nextEvent(timeout: nil), !view.isOver {
///     guard case .message(let message) = event else { continue }
///     view.apply(message, at: .now)
///     if view.isMyTurn { try await game.move(column: view.cells.openColumns[0]) }
/// }
/// ```
public struct FourInARowView: Sendable, Hashable {
    /// The local player's id, used to find its seat in STATE.
    public let myPlayerID: String
    /// Whether a STATE has arrived (before it, the view knows nothing of the game).
    public private(set) var hasState = false
    /// Where the game stands.
    public private(set) var phase: FourInARowPhase = .waiting
    /// The seated players, as the last STATE listed them.
    public private(set) var players: [FourInARowSnapshot.Player] = []
    /// The board.
    public private(set) var cells = FourInARowCells()
    /// The number the next MOVE must carry.
    public private(set) var nextMoveNumber: UInt16 = 1
    /// The seat whose turn it is; nil unless the game is playing.
    public private(set) var seatToMove: UInt8?
    /// When the current turn runs out, by the local clock (the server's time left, counted
    /// from when the message was applied); nil when no turn is running.
    public private(set) var turnDeadline: ContinuousClock.Instant?
    /// Whether the current turn's timer has not started: its player has not arrived since the
    /// server restarted (``FourInARowSnapshot/turnWaitsForArrival``).
    public private(set) var turnWaitsForArrival = false
    /// How the game ended (GAME_OVER, or STATE of a finished game).
    public private(set) var result: FourInARowGameOver?
    /// The last move played, while the view knows it (a STATE keeps it only when it is still
    /// the latest).
    public private(set) var lastMove: FourInARowMoved?
    /// The last MOVE_REFUSED, until the next move is played.
    public private(set) var lastRefusal: FourInARowMoveRefused?

    /// An empty view for player `myPlayerID`.
    public init(myPlayerID: String) {
        self.myPlayerID = myPlayerID
    }

    /// The local player's seat, once a STATE lists it.
    public var mySeat: UInt8? {
        self.players.first { $0.playerID == self.myPlayerID }?.seat
    }

    /// The seat of the other player, once the local player has a seat.
    public var opponentSeat: UInt8? {
        self.mySeat.map { 1 - $0 }
    }

    /// The player id at `seat`, if that seat is taken.
    public func playerID(seat: UInt8) -> String? {
        self.players.first { $0.seat == seat }?.playerID
    }

    /// Whether the game is playing and it is the local player's turn.
    public var isMyTurn: Bool {
        self.phase == .playing && self.seatToMove != nil && self.seatToMove == self.mySeat
    }

    /// Whether the game has ended.
    public var isOver: Bool {
        self.phase == .over
    }

    /// The winner's seat; nil while playing and after a draw.
    public var winnerSeat: UInt8? {
        self.result?.winnerSeat
    }

    /// Whether the game ended in a draw.
    public var isDraw: Bool {
        self.result != nil && self.result?.winnerSeat == nil
    }

    /// Whether the local player won.
    public var iWon: Bool {
        self.winnerSeat != nil && self.winnerSeat == self.mySeat
    }

    /// Why the game ended, once it has.
    public var endReason: FourInARowEndReason? {
        self.result?.reason
    }

    /// The cells of the winning line (empty unless the game was won by four in a row).
    public var winningCells: Set<Int> {
        Set(self.result?.winningCells.map(Int.init) ?? [])
    }

    /// Moves played so far.
    public var moveCount: Int {
        Int(self.nextMoveNumber) - 1
    }

    /// What is left of the current turn at `now`; nil when no turn is running.
    public func turnTimeLeft(at now: ContinuousClock.Instant) -> Duration? {
        self.turnDeadline.map { max(.zero, $0 - now) }
    }

    /// The last refusal in words (by its reason, not the server's text), until the next move.
    public var lastRefusalText: String? {
        self.lastRefusal.map { Self.describe($0.reason) }
    }

    /// A refusal reason in words, for players.
    public static func describe(_ reason: FourInARowRefusalReason) -> String {
        switch reason {
        case .notYourTurn: return "It is not your turn."
        case .columnFull: return "That column is full."
        case .columnOutOfRange: return "There is no such column."
        case .staleMoveNumber: return "The board had moved on; look again."
        case .gameNotRunning: return "The game is not running."
        case .moveBeingCommitted: return "The last move is still being saved; try again."
        case .couldNotBeSaved: return "The server could not save that move; it is still your turn."
        }
    }

    /// Folds in a server message received at `now`.
    public mutating func apply(_ message: FourInARowServerMessage, at now: ContinuousClock.Instant) {
        switch message {
        case .state(let snapshot): self.apply(snapshot, at: now)
        case .moved(let moved): self.apply(moved, at: now)
        case .moveRefused(let refused): self.lastRefusal = refused
        case .gameOver(let gameOver): self.finish(gameOver)
        }
    }

    private mutating func apply(_ snapshot: FourInARowSnapshot, at now: ContinuousClock.Instant) {
        self.hasState = true
        self.phase = snapshot.phase
        self.players = snapshot.players
        self.cells = FourInARowCells(snapshot.board)
        self.nextMoveNumber = snapshot.moveNumber
        self.seatToMove = snapshot.phase == .playing ? snapshot.seatToMove : nil
        self.setTurnTime(self.seatToMove == nil ? nil : snapshot.turnTimeLeftMilliseconds, at: now)
        self.result = snapshot.result
        if let last = self.lastMove, last.moveNumber &+ 1 != snapshot.moveNumber
            || self.cells[column: Int(last.column), row: Int(last.row)] != FourInARowCells.disc(ofSeat: last.seat)
        {
            self.lastMove = nil
        }
    }

    private mutating func apply(_ moved: FourInARowMoved, at now: ContinuousClock.Instant) {
        // A move the board already holds (one a STATE has covered) changes nothing.
        guard moved.moveNumber >= self.nextMoveNumber else { return }
        self.cells[column: Int(moved.column), row: Int(moved.row)] = FourInARowCells.disc(ofSeat: moved.seat)
        self.nextMoveNumber = moved.moveNumber &+ 1
        self.seatToMove = moved.nextSeat
        self.setTurnTime(moved.nextSeat == nil ? nil : moved.turnTimeMilliseconds, at: now)
        self.lastMove = moved
        self.lastRefusal = nil
        if self.phase == .waiting { self.phase = .playing }
    }

    private mutating func finish(_ gameOver: FourInARowGameOver) {
        self.phase = .over
        self.result = gameOver
        self.seatToMove = nil
        self.setTurnTime(nil, at: .now)
    }

    /// The turn's deadline from the server's time for it (nil: no turn).
    private mutating func setTurnTime(_ milliseconds: UInt32?, at now: ContinuousClock.Instant) {
        self.turnWaitsForArrival = milliseconds == FourInARowSnapshot.turnWaitsForArrival
        self.turnDeadline = milliseconds.flatMap { $0 == FourInARowSnapshot.turnWaitsForArrival ? nil : now + .milliseconds($0) }
    }

    /// The board as text, top row first: a header of column numbers 1-7, six rows of cells
    /// between bars, and a bottom edge. A disc is `X` (seat 0) or `O` (seat 1); the winning
    /// line's discs are in brackets (`[X]`), the last move's disc in parentheses (`(O)`).
    public func boardLines() -> [String] {
        let winning = self.winningCells
        let last = self.lastMove.map { FourInARowCells.index(column: Int($0.column), row: Int($0.row)) }
        var lines = ["  " + (1...FourInARowGrid.columns).map { String($0) }.joined(separator: "   ") + "  "]
        for row in (0..<FourInARowGrid.rows).reversed() {
            var line = "|"
            for column in 0..<FourInARowGrid.columns {
                let index = FourInARowCells.index(column: column, row: row)
                let symbol = Self.symbol(ofDisc: self.cells.cells[index])
                if winning.contains(index) {
                    line += "[\(symbol)]"
                } else if index == last {
                    line += "(\(symbol))"
                } else {
                    line += " \(symbol) "
                }
                line += "|"
            }
            lines.append(line)
        }
        lines.append("+" + String(repeating: "---+", count: FourInARowGrid.columns))
        return lines
    }

    /// `X` for seat 0's disc, `O` for seat 1's, a space for an empty cell.
    public static func symbol(ofDisc disc: UInt8) -> Character {
        switch disc {
        case 1: return "X"
        case 2: return "O"
        default: return " "
        }
    }

    /// `X` for seat 0, `O` for seat 1.
    public static func symbol(ofSeat seat: UInt8) -> Character {
        self.symbol(ofDisc: FourInARowCells.disc(ofSeat: seat))
    }
}
