import MatchHostCore
import MatchHostWire

/// How a Disks match finished: why, and every player's final score and whether they won.
public struct DisksResult: Sendable, Hashable, CustomStringConvertible {
    /// One player's outcome.
    public struct Player: Sendable, Hashable {
        /// The player.
        public var playerID: PlayerID
        /// The player's seat in the match.
        public var seat: Int
        /// The final score.
        public var score: UInt16
        /// Whether the player is among the winners.
        public var won: Bool
        /// Whether the player had left before the end (a player who left never wins).
        public var left: Bool

        /// Creates an entry.
        public init(playerID: PlayerID, seat: Int, score: UInt16, won: Bool, left: Bool) {
            self.playerID = playerID
            self.seat = seat
            self.score = score
            self.won = won
            self.left = left
        }
    }

    /// Why the game ended.
    public var reason: DisksGameOverReason
    /// Every player who took a seat, in seat order.
    public var players: [Player]

    /// Creates a result.
    public init(reason: DisksGameOverReason, players: [Player]) {
        self.reason = reason
        self.players = players
    }

    /// The winners' ids, in seat order (several on a tie, none if nobody scored).
    public var winners: [PlayerID] {
        self.players.filter(\.won).map(\.playerID)
    }

    /// The outcome of `player`, if it took a seat.
    public func player(_ player: PlayerID) -> Player? {
        self.players.first { $0.playerID == player }
    }

    /// A short text for logs and MATCH_ENDED, such as `time limit; won by a, b`.
    public var description: String {
        let why: String
        switch self.reason {
        case .scoreLimit: why = "score limit"
        case .timeLimit: why = "time limit"
        case .opponentsLeft: why = "opponents left"
        }
        let winners = self.winners
        return winners.isEmpty ? "\(why); nobody won" : "\(why); won by \(winners.joined(separator: ", "))"
    }
}
