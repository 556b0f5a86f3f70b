/// A turn-based match as stored: everything needed to continue it after a restart.
public struct TurnGameRecord: Sendable, Hashable {
    /// The match.
    public var matchID: MatchID
    /// The game played.
    public var game: String
    /// The game's mode.
    public var mode: String
    /// The players in seat order.
    public var players: [PlayerID]
    /// When the match started.
    public var startedAt: UnixMillis
    /// The game's whole state after the last accepted move, in the game's own encoding.
    public var state: [UInt8]
    /// How many moves have been accepted; the next move is number `moveCount + 1`.
    public var moveCount: Int
    /// When the last move was accepted (the start, before any move); turn timers restart from it.
    public var lastMoveAt: UnixMillis

    /// Creates a record.
    public init(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis,
        state: [UInt8], moveCount: Int, lastMoveAt: UnixMillis
    ) {
        self.matchID = matchID
        self.game = game
        self.mode = mode
        self.players = players
        self.startedAt = startedAt
        self.state = state
        self.moveCount = moveCount
        self.lastMoveAt = lastMoveAt
    }
}

/// One accepted move of a turn-based match.
public struct TurnMoveRecord: Sendable, Hashable {
    /// The move's number, from 1, without gaps.
    public var moveNumber: Int
    /// The move in the game's own encoding.
    public var move: [UInt8]
    /// When the move was accepted.
    public var playedAt: UnixMillis

    /// Creates a record.
    public init(moveNumber: Int, move: [UInt8], playedAt: UnixMillis) {
        self.moveNumber = moveNumber
        self.move = move
        self.playedAt = playedAt
    }
}
