import MatchHostCore
import MatchHostWire

/// What a finished Four in a Row match reports: who won, who lost, why, after how many moves.
public struct FourInARowResult: Hashable, Sendable, CustomStringConvertible {
    /// The winner's player id; nil for a draw.
    public var winner: PlayerID?
    /// The loser's player id; nil for a draw.
    public var loser: PlayerID?
    /// The winner's seat; nil for a draw.
    public var winnerSeat: Int?
    /// Why the game ended.
    public var reason: FourInARowEndReason
    /// How many moves were played.
    public var moveCount: Int

    /// Creates a result.
    public init(winner: PlayerID?, loser: PlayerID?, winnerSeat: Int?, reason: FourInARowEndReason, moveCount: Int) {
        self.winner = winner
        self.loser = loser
        self.winnerSeat = winnerSeat
        self.reason = reason
        self.moveCount = moveCount
    }

    /// The result of a finished `state`, or nil if it is not finished.
    public init?(_ state: FourInARowState) {
        guard let ending = state.ending else { return nil }
        self.winnerSeat = ending.winnerSeat
        self.winner = ending.winnerSeat.map { state.players[$0] }
        self.loser = ending.winnerSeat.map { state.players[1 - $0] }
        self.reason = ending.reason
        self.moveCount = state.moves.count
    }

    /// How many moves the game had, in words: "1 move", "7 moves".
    public var movesPlayed: String {
        self.moveCount == 1 ? "1 move" : "\(self.moveCount) moves"
    }

    /// A short text for logs.
    public var description: String {
        if let winner { return "\(winner) won by \(self.reason) after \(self.movesPlayed)" }
        return "draw after \(self.movesPlayed)"
    }
}
