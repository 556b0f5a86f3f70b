import Foundation
import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/readValue(playerID:key:)``.
    public func readValue(playerID: PlayerID, key: String) async throws -> [UInt8]? {
        try await self.read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM player_value WHERE player_id = ? AND key = ?", arguments: [playerID, key])
                .map { [UInt8]($0) }
        }
    }

    /// See ``GameStore/writeValue(playerID:key:value:)``.
    public func writeValue(playerID: PlayerID, key: String, value: [UInt8]) async throws {
        try self.limits.check(key: key)
        try self.limits.check(value: value)
        let maximumKeys = self.limits.maximumKeysPerPlayer
        try await self.write { db in
            guard try Self.playerExists(db, playerID) else { throw GameStoreError.unknownPlayer(playerID) }
            let otherKeys = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM player_value WHERE player_id = ? AND key <> ?", arguments: [playerID, key]) ?? 0
            guard otherKeys < maximumKeys else { throw GameStoreError.tooManyKeys(playerID, limit: maximumKeys) }
            try db.execute(
                sql: """
                    INSERT INTO player_value (player_id, key, value) VALUES (?, ?, ?)
                    ON CONFLICT (player_id, key) DO UPDATE SET value = excluded.value
                    """,
                arguments: [playerID, key, Data(value)])
        }
    }

    /// See ``GameStore/deleteValue(playerID:key:)``.
    @discardableResult
    public func deleteValue(playerID: PlayerID, key: String) async throws -> Bool {
        try await self.write { db in
            try db.execute(sql: "DELETE FROM player_value WHERE player_id = ? AND key = ?", arguments: [playerID, key])
            return db.changesCount > 0
        }
    }
}
