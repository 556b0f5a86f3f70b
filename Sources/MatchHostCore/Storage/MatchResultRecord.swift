/// How one player came out of a finished match.
public enum PlayerOutcome: String, Sendable, Hashable, CaseIterable {
    /// The player won (several players may win, for team games).
    case won
    /// The player lost.
    case lost
    /// Nobody won against this player and this player won against nobody.
    case draw

    /// Won beats draw beats lost; pairwise ratings compare outcomes this way.
    package var strength: Int {
        switch self {
        case .lost: return 0
        case .draw: return 1
        case .won: return 2
        }
    }
}

/// One player's line in a match result.
public struct PlayerResultRecord: Sendable, Hashable {
    /// The player.
    public var playerID: PlayerID
    /// Won, lost or draw; this is what stats and ratings count.
    public var outcome: PlayerOutcome
    /// The game's score for the player, if it has one.
    public var score: Int64?
    /// A short text the game wants kept with the result ("3 lines", "resigned").
    public var summary: String?

    /// Creates a line.
    public init(playerID: PlayerID, outcome: PlayerOutcome, score: Int64? = nil, summary: String? = nil) {
        self.playerID = playerID
        self.outcome = outcome
        self.score = score
        self.summary = summary
    }
}

/// The result of a finished match: one line per player of the match, in seat order.
public struct MatchResultRecord: Sendable, Hashable {
    /// One line per player, in the match's seat order.
    public var players: [PlayerResultRecord]

    /// Creates a result.
    public init(players: [PlayerResultRecord]) {
        self.players = players
    }

    /// Checks that the result names each of the match's players exactly once, and returns
    /// its lines in the match's seat order (the order ratings and storage use).
    package func lines(forMatch id: MatchID, players: [PlayerID]) throws -> [PlayerResultRecord] {
        var byPlayer: [PlayerID: PlayerResultRecord] = [:]
        for line in self.players {
            guard byPlayer.updateValue(line, forKey: line.playerID) == nil else {
                throw GameStoreError.invalidResult(id, reason: "player \(line.playerID) appears twice in the result")
            }
        }
        let lines = players.compactMap { byPlayer[$0] }
        guard lines.count == players.count, byPlayer.count == players.count else {
            throw GameStoreError.invalidResult(id, reason: "the result must name exactly the match's players \(players)")
        }
        return lines
    }
}
