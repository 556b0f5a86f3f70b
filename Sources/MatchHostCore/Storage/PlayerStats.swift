/// One player's record in one game: counts of finished matches and a rating.
///
/// Only finished matches count; abandoned ones change nothing.
public struct PlayerStats: Sendable, Hashable {
    /// The game the numbers are for.
    public var game: String
    /// The player.
    public var playerID: PlayerID
    /// Finished matches played.
    public var played: Int
    /// Matches won.
    public var won: Int
    /// Matches lost.
    public var lost: Int
    /// Matches drawn.
    public var drawn: Int
    /// The Elo rating (``EloRating``); ``EloRating/initialRating`` before the first match.
    public var rating: Double

    /// Creates stats.
    public init(game: String, playerID: PlayerID, played: Int, won: Int, lost: Int, drawn: Int, rating: Double) {
        self.game = game
        self.playerID = playerID
        self.played = played
        self.won = won
        self.lost = lost
        self.drawn = drawn
        self.rating = rating
    }

    /// A player's stats before their first finished match in `game`.
    public static func initial(game: String, playerID: PlayerID) -> PlayerStats {
        PlayerStats(game: game, playerID: playerID, played: 0, won: 0, lost: 0, drawn: 0, rating: EloRating.initialRating)
    }

    /// These stats after one more match with `outcome`, ending at `rating`.
    package func adding(_ outcome: PlayerOutcome, rating: Double) -> PlayerStats {
        var next = self
        next.played += 1
        switch outcome {
        case .won: next.won += 1
        case .lost: next.lost += 1
        case .draw: next.drawn += 1
        }
        next.rating = rating
        return next
    }
}

/// One line of a leaderboard.
///
/// Leaderboards order players by rating (highest first), then by matches won (most first),
/// then by player id (UTF-8 byte order), so every player has exactly one rank.
public struct LeaderboardEntry: Sendable, Hashable {
    /// The position, from 1.
    public var rank: Int
    /// The player.
    public var playerID: PlayerID
    /// The player's alias, or nil when the id has no stored account (a Cat Race player).
    public var alias: String?
    /// The player's rating in the game.
    public var rating: Double
    /// Matches won in the game.
    public var won: Int
    /// Finished matches played in the game.
    public var played: Int

    /// Creates an entry.
    public init(rank: Int, playerID: PlayerID, alias: String?, rating: Double, won: Int, played: Int) {
        self.rank = rank
        self.playerID = playerID
        self.alias = alias
        self.rating = rating
        self.won = won
        self.played = played
    }
}
