#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Rating arithmetic: Elo with K = 32, every player starting at 1500.
///
/// Two players: standard Elo. More players: each pair of players is scored as a game of
/// its own (won beats draw beats lost; equal outcomes count as a draw), and each player's
/// change is K times the sum of (actual − expected) over their opponents, divided by the
/// number of opponents. So a match moves a rating at most K, as in a two-player game, and
/// the changes of all players sum to zero. Every expectation uses the ratings from before
/// the match.
public enum EloRating {
    /// The rating a player has before their first finished match in a game.
    public static let initialRating: Double = 1500
    /// The largest change one match can make.
    public static let kFactor: Double = 32

    /// The chance Elo gives a player rated `rating` of beating one rated `opponent`.
    public static func expectedScore(of rating: Double, against opponent: Double) -> Double {
        1 / (1 + pow(10, (opponent - rating) / 400))
    }

    /// New ratings after one match: `ratings[i]` and `outcomes[i]` belong to the same player.
    public static func updatedRatings(_ ratings: [Double], outcomes: [PlayerOutcome]) -> [Double] {
        precondition(ratings.count == outcomes.count, "one outcome per rating")
        let opponents = ratings.count - 1
        guard opponents > 0 else { return ratings }
        return ratings.indices.map { i in
            var difference = 0.0
            for j in ratings.indices where j != i {
                let actual: Double
                if outcomes[i].strength > outcomes[j].strength {
                    actual = 1
                } else if outcomes[i].strength < outcomes[j].strength {
                    actual = 0
                } else {
                    actual = 0.5
                }
                difference += actual - expectedScore(of: ratings[i], against: ratings[j])
            }
            return ratings[i] + kFactor * difference / Double(opponents)
        }
    }
}
