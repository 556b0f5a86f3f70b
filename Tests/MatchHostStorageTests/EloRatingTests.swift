import MatchHostCore
import Testing

@Suite("Elo ratings and leaderboard windows")
struct EloRatingTests {
    @Test func twoPlayersIsStandardElo() {
        #expect(EloRating.updatedRatings([1500, 1500], outcomes: [.won, .lost]) == [1516, 1484])
        let upset = EloRating.updatedRatings([1400, 1600], outcomes: [.won, .lost])
        // Expected score of 1400 against 1600 is 1 / (1 + 10^0.5) = 0.240253...
        #expect(abs(upset[0] - 1424.3119016527346) < 1e-9)
        #expect(abs(upset[1] - 1575.6880983472654) < 1e-9)
    }

    @Test func manyPlayersAveragePairwiseAndSumToZero() {
        let ratings: [Double] = [1500, 1500, 1500, 1500]
        let after = EloRating.updatedRatings(ratings, outcomes: [.won, .won, .lost, .lost])
        // Each winner draws the other winner and beats two losers: 32 × (0 + 0.5 + 0.5) / 3.
        #expect(abs(after[0] - (1500 + 32.0 / 3)) < 1e-9)
        #expect(abs(after[3] - (1500 - 32.0 / 3)) < 1e-9)
        let uneven = EloRating.updatedRatings([1600, 1450, 1520], outcomes: [.lost, .won, .draw])
        #expect(abs(uneven.reduce(0, +) - 4570) < 1e-9)
        #expect(EloRating.updatedRatings([1700], outcomes: [.won]) == [1700])
    }

    @Test func windowsStayInsideTheBoard() {
        #expect(LeaderboardOrder.windowStart(around: 0, count: 5, total: 8) == 0)
        #expect(LeaderboardOrder.windowStart(around: 4, count: 3, total: 8) == 3)
        #expect(LeaderboardOrder.windowStart(around: 7, count: 5, total: 8) == 3)
        #expect(LeaderboardOrder.windowStart(around: 2, count: 10, total: 8) == 0)
    }
}
