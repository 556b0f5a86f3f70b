import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/stats(game:playerID:)``.
    public func stats(game: String, playerID: PlayerID) async throws -> PlayerStats? {
        try await self.read { db in try Self.storedStats(db, game: game, playerID: playerID) }
    }

    /// See ``GameStore/leaderboard(game:limit:)``.
    public func leaderboard(game: String, limit: Int) async throws -> [LeaderboardEntry] {
        try await self.read { db in try Self.entries(db, game: game, from: 0, count: limit) }
    }

    /// See ``GameStore/leaderboard(game:around:count:)``.
    ///
    /// The player's position is the number of players ordered before it, counted on the
    /// leaderboard index; the count and the page (`OFFSET`) both step through the index up
    /// to the player, so the cost grows with the rank (about 5 ms at rank 25 000 measured
    /// on this project's machines). All three queries read one snapshot.
    public func leaderboard(game: String, around playerID: PlayerID, count: Int) async throws -> [LeaderboardEntry] {
        try await self.read { db in
            guard count > 0, let stats = try Self.storedStats(db, game: game, playerID: playerID) else { return [] }
            let position = try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM player_stats WHERE game = ? AND (rating > ? OR (rating = ? AND
                        (won > ? OR (won = ? AND player_id < ?))))
                    """,
                arguments: [game, stats.rating, stats.rating, stats.won, stats.won, playerID]) ?? 0
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player_stats WHERE game = ?", arguments: [game]) ?? 0
            let start = LeaderboardOrder.windowStart(around: position, count: count, total: total)
            return try Self.entries(db, game: game, from: start, count: count)
        }
    }

    static func storedStats(_ db: Database, game: String, playerID: PlayerID) throws -> PlayerStats? {
        try Row.fetchOne(
            db, sql: "SELECT played, won, lost, drawn, rating FROM player_stats WHERE game = ? AND player_id = ?",
            arguments: [game, playerID]
        ).map { row in
            PlayerStats(
                game: game, playerID: playerID, played: row["played"], won: row["won"], lost: row["lost"],
                drawn: row["drawn"], rating: row["rating"])
        }
    }

    /// `count` entries from position `start` (from 0), in ``LeaderboardEntry``'s order.
    private static func entries(_ db: Database, game: String, from start: Int, count: Int) throws -> [LeaderboardEntry] {
        guard count > 0 else { return [] }
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT s.player_id, p.alias, s.rating, s.won, s.played
                FROM player_stats s LEFT JOIN player p ON p.id = s.player_id
                WHERE s.game = ? ORDER BY s.rating DESC, s.won DESC, s.player_id LIMIT ? OFFSET ?
                """,
            arguments: [game, count, start])
        return rows.enumerated().map { offset, row in
            LeaderboardEntry(
                rank: start + offset + 1, playerID: row["player_id"], alias: row["alias"], rating: row["rating"],
                won: row["won"], played: row["played"])
        }
    }
}
