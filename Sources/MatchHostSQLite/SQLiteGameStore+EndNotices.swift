import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/recordEndNotices(_:)``.
    public func recordEndNotices(_ notices: [MatchEndNotice]) async throws {
        for notice in notices { _ = try Self.storedID(notice.matchID) }
        try await self.write { db in try Self.insertEndNotices(db, notices) }
    }

    /// See ``GameStore/endNotices()``.
    public func endNotices() async throws -> [MatchEndNotice] {
        try await self.read { db in
            try Row.fetchAll(
                db, sql: "SELECT player_id, match_id, reason, ended_at FROM match_end_notice ORDER BY ended_at, match_id, player_id"
            ).map { row in
                let matchID: Int64 = row["match_id"]
                return MatchEndNotice(
                    playerID: row["player_id"], matchID: MatchID(matchID), reason: row["reason"],
                    endedAt: UnixMillis(milliseconds: row["ended_at"]))
            }
        }
    }

    /// See ``GameStore/deleteEndNotices(playerID:matchIDs:)``.
    public func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) async throws {
        // An id no match can have has no notice either.
        let stored = matchIDs.compactMap { Int64(exactly: $0) }
        try await self.write { db in
            for id in stored {
                try db.execute(sql: "DELETE FROM match_end_notice WHERE player_id = ? AND match_id = ?", arguments: [playerID, id])
            }
        }
    }

    /// See ``GameStore/deleteEndNotices(endedBefore:)``.
    @discardableResult
    public func deleteEndNotices(endedBefore: UnixMillis) async throws -> Int {
        try await self.write { db in
            try db.execute(sql: "DELETE FROM match_end_notice WHERE ended_at < ?", arguments: [endedBefore.milliseconds])
            return db.changesCount
        }
    }

    /// Keeps `notices`, but for a player and match with one kept already.
    static func insertEndNotices(_ db: Database, _ notices: [MatchEndNotice]) throws {
        for notice in notices {
            try db.execute(
                sql: """
                    INSERT INTO match_end_notice (player_id, match_id, reason, ended_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (player_id, match_id) DO NOTHING
                    """,
                arguments: [notice.playerID, try Self.storedID(notice.matchID), notice.reason, notice.endedAt.milliseconds])
        }
    }

    /// `id` as stored: match ids are 63-bit in the database.
    private static func storedID(_ id: MatchID) throws -> Int64 {
        guard let stored = Int64(exactly: id) else {
            throw GameStoreError.invalidMatch(id, reason: "match ids are stored as 63-bit numbers")
        }
        return stored
    }
}
