import Foundation
import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/createPlayer(id:alias:createdAt:)``.
    public func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws {
        try await self.write { db in
            try Self.insertPlayer(db, id: id, alias: alias, createdAt: createdAt)
        }
    }

    /// See ``GameStore/createPlayerWithDevice(id:alias:deviceID:secretHash:createdAt:)``.
    public func createPlayerWithDevice(
        id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis
    ) async throws {
        try await self.write { db in
            try Self.insertPlayer(db, id: id, alias: alias, createdAt: createdAt)
            try Self.insertDevice(db, deviceID: deviceID, secretHash: secretHash, playerID: id, linkedAt: createdAt)
            let unlinked = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM unlinked_device WHERE device_id = ?)", arguments: [deviceID]) ?? false
            guard !unlinked else { throw GameStoreError.deviceUnlinked(deviceID: deviceID) }
        }
    }

    /// See ``GameStore/player(id:)``.
    public func player(id: PlayerID) async throws -> PlayerRecord? {
        try await self.read { db in
            try Row.fetchOne(
                db, sql: "SELECT id, \(Self.playerColumns) FROM player WHERE id = ?", arguments: [id]
            ).map(Self.player(in:))
        }
    }

    /// See ``GameStore/aliases(playerIDs:)``.
    public func aliases(playerIDs: [PlayerID]) async throws -> [PlayerID: String] {
        guard !playerIDs.isEmpty else { return [:] }
        return try await self.read { db in
            // One statement: the primary key's index answers each id.
            let marks = Array(repeating: "?", count: playerIDs.count).joined(separator: ", ")
            var aliases: [PlayerID: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, alias FROM player WHERE id IN (\(marks))", arguments: StatementArguments(playerIDs)) {
                aliases[row["id"]] = row["alias"]
            }
            return aliases
        }
    }

    /// What ``player(in:)`` reads, after the id.
    private static let playerColumns = "alias, created_at, last_seen_at, banned_at, ban_reason, ban_until, alias_locked"

    private static func player(in row: Row) -> PlayerRecord {
        PlayerRecord(
            id: row["id"], alias: row["alias"], createdAt: UnixMillis(milliseconds: row["created_at"]),
            lastSeenAt: UnixMillis(milliseconds: row["last_seen_at"]), ban: Self.ban(in: row), aliasLocked: row["alias_locked"])
    }

    /// See ``GameStore/setBan(playerID:ban:at:)``.
    public func setBan(playerID: PlayerID, ban: PlayerBan?, at: UnixMillis) async throws {
        try await self.write { db in
            try db.execute(
                sql: "UPDATE player SET banned_at = ?, ban_reason = ?, ban_until = ? WHERE id = ?",
                arguments: [ban?.since.milliseconds, ban?.reason, ban?.until?.milliseconds, playerID])
            guard db.changesCount > 0 else { throw GameStoreError.unknownPlayer(playerID) }
            // The ban in force, if any, ends here (one that ran out ended by itself).
            try db.execute(
                sql: """
                    UPDATE player_ban SET ended_early_at = ?, ended_how = ?
                    WHERE player_id = ? AND ended_early_at IS NULL AND (ban_until IS NULL OR ban_until > ?)
                    """,
                arguments: [at.milliseconds, ban == nil ? "lifted" : "replaced", playerID, at.milliseconds])
            if let ban {
                try db.execute(
                    sql: "INSERT INTO player_ban (player_id, banned_at, ban_until, reason) VALUES (?, ?, ?, ?)",
                    arguments: [playerID, ban.since.milliseconds, ban.until?.milliseconds, ban.reason])
            }
        }
    }

    /// See ``GameStore/banRecords(playerID:limit:)``.
    public func banRecords(playerID: PlayerID?, limit: Int) async throws -> [PlayerBanRecord] {
        try await self.read { db in
            let columns = "SELECT player_id, banned_at, ban_until, reason, ended_early_at, ended_how FROM player_ban"
            // The order they were made in, not their `since`: a clock set back does not put a
            // replaced ban above the one that replaced it.
            let order = "ORDER BY rowid DESC LIMIT ?"
            let rows =
                if let playerID {
                    try Row.fetchAll(db, sql: "\(columns) WHERE player_id = ? \(order)", arguments: [playerID, max(0, limit)])
                } else {
                    try Row.fetchAll(db, sql: "\(columns) \(order)", arguments: [max(0, limit)])
                }
            return rows.map { row in
                let until: Int64? = row["ban_until"]
                let endedAt: Int64? = row["ended_early_at"]
                let endedHow: String? = row["ended_how"]
                return PlayerBanRecord(
                    playerID: row["player_id"],
                    ban: PlayerBan(
                        reason: row["reason"], since: UnixMillis(milliseconds: row["banned_at"]),
                        until: until.map(UnixMillis.init(milliseconds:))),
                    endedEarly: endedAt.map { at in
                        endedHow == "lifted" ? .lifted(at: UnixMillis(milliseconds: at)) : .replaced(at: UnixMillis(milliseconds: at))
                    })
            }
        }
    }

    /// See ``GameStore/bannedPlayers()``.
    public func bannedPlayers() async throws -> [PlayerID: PlayerBan] {
        try await self.read { db in
            // The partial index `player_banned` holds exactly these rows: no scan of every player.
            var bans: [PlayerID: PlayerBan] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, banned_at, ban_reason, ban_until FROM player WHERE banned_at IS NOT NULL") {
                bans[row["id"]] = Self.ban(in: row)
            }
            return bans
        }
    }

    private static func ban(in row: Row) -> PlayerBan? {
        guard let since: Int64 = row["banned_at"] else { return nil }
        let until: Int64? = row["ban_until"]
        return PlayerBan(reason: row["ban_reason"] ?? "", since: UnixMillis(milliseconds: since), until: until.map(UnixMillis.init(milliseconds:)))
    }

    /// The ids of the players whose id starts with `prefix`, in order, at most `limit`: for the
    /// command line, where people type the first characters of an id (a player's alias is the
    /// first 8 until a game sets one).
    public func playerIDs(startingWith prefix: String, limit: Int) async throws -> [PlayerID] {
        try await self.read { db in
            // A range, so the primary key's index answers it (ids compare byte by byte).
            try String.fetchAll(
                db, sql: "SELECT id FROM player WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                arguments: [prefix, prefix + "\u{10FFFF}", limit])
        }
    }

    /// See ``GameStore/setAlias(playerID:alias:)``.
    public func setAlias(playerID: PlayerID, alias: String) async throws {
        try await self.write { db in
            try db.execute(sql: "UPDATE player SET alias = ? WHERE id = ? AND alias_locked = 0", arguments: [alias, playerID])
            guard db.changesCount == 0 else { return }
            throw try Self.playerExists(db, playerID) ? GameStoreError.aliasLocked(playerID) : GameStoreError.unknownPlayer(playerID)
        }
    }

    /// See ``GameStore/setAliasByOperator(playerID:alias:locked:)``.
    public func setAliasByOperator(playerID: PlayerID, alias: String?, locked: Bool?) async throws -> PlayerRecord {
        try await self.write { db in
            try db.execute(
                sql: "UPDATE player SET alias = COALESCE(?, alias), alias_locked = COALESCE(?, alias_locked) WHERE id = ?",
                arguments: [alias, locked, playerID])
            guard db.changesCount > 0,
                let player = try Row.fetchOne(db, sql: "SELECT id, \(Self.playerColumns) FROM player WHERE id = ?", arguments: [playerID])
            else { throw GameStoreError.unknownPlayer(playerID) }
            return Self.player(in: player)
        }
    }

    /// See ``GameStore/touch(playerID:at:)``.
    public func touch(playerID: PlayerID, at: UnixMillis) async throws {
        try await self.write { db in
            try db.execute(
                sql: "UPDATE player SET last_seen_at = MAX(last_seen_at, ?) WHERE id = ?", arguments: [at.milliseconds, playerID])
            guard db.changesCount > 0 else { throw GameStoreError.unknownPlayer(playerID) }
        }
    }

    /// See ``GameStore/addDeviceIdentity(deviceID:secretHash:playerID:linkedAt:maximumDevices:)``.
    public func addDeviceIdentity(
        deviceID: String, secretHash: [UInt8], playerID: PlayerID, linkedAt: UnixMillis, maximumDevices: Int
    ) async throws {
        try await self.write { db in
            guard try Self.playerExists(db, playerID) else { throw GameStoreError.unknownPlayer(playerID) }
            // As the memory store checks: a device stored already is that, whatever the count.
            guard try !Self.deviceExists(db, deviceID) else { throw GameStoreError.deviceExists(deviceID: deviceID) }
            guard try Self.deviceCount(db, playerID) < maximumDevices else {
                throw GameStoreError.tooManyDevices(playerID, limit: maximumDevices)
            }
            try Self.insertDevice(db, deviceID: deviceID, secretHash: secretHash, playerID: playerID, linkedAt: linkedAt)
            try db.execute(sql: "DELETE FROM unlinked_device WHERE device_id = ?", arguments: [deviceID])
        }
    }

    /// See ``GameStore/deviceIdentity(deviceID:)``.
    public func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? {
        try await self.read { db in
            try Row.fetchOne(
                db, sql: "SELECT device_id, player_id, secret_hash, linked_at FROM device_identity WHERE device_id = ?", arguments: [deviceID]
            ).map(Self.device(in:))
        }
    }

    /// See ``GameStore/devices(playerID:)``.
    public func devices(playerID: PlayerID) async throws -> [DeviceIdentityRecord] {
        try await self.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT device_id, player_id, secret_hash, linked_at FROM device_identity
                    WHERE player_id = ? ORDER BY linked_at, device_id
                    """,
                arguments: [playerID]
            ).map(Self.device(in:))
        }
    }

    /// See ``GameStore/removeDeviceIdentity(deviceID:playerID:at:)``.
    public func removeDeviceIdentity(deviceID: String, playerID: PlayerID, at: UnixMillis) async throws -> UInt64 {
        try await self.write { db in
            let owner = try String.fetchOne(db, sql: "SELECT player_id FROM device_identity WHERE device_id = ?", arguments: [deviceID])
            guard owner == playerID else { throw GameStoreError.unknownDevice(deviceID: deviceID) }
            guard try Self.deviceCount(db, playerID) > 1 else { throw GameStoreError.lastDevice(playerID) }
            return try Self.forget([deviceID], of: playerID, at: at, in: db)
        }
    }

    /// See ``GameStore/removeAllDeviceIdentities(playerID:at:)``.
    public func removeAllDeviceIdentities(playerID: PlayerID, at: UnixMillis) async throws -> (generation: UInt64, removed: [String]) {
        try await self.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM player WHERE id = ?", arguments: [playerID]) != nil else {
                throw GameStoreError.unknownPlayer(playerID)
            }
            let removed = try String.fetchAll(
                db, sql: "SELECT device_id FROM device_identity WHERE player_id = ? ORDER BY device_id", arguments: [playerID])
            return (try Self.forget(removed, of: playerID, at: at, in: db), removed)
        }
    }

    /// Removes `deviceIDs`, remembers them as unlinked (the player's newest
    /// ``DeviceIdentityRecord/unlinkedKeptPerPlayer``), and moves the player's token generation
    /// on: what every unlink does. Returns the new generation.
    private static func forget(_ deviceIDs: [String], of playerID: PlayerID, at: UnixMillis, in db: Database) throws -> UInt64 {
        for deviceID in deviceIDs {
            try db.execute(sql: "DELETE FROM device_identity WHERE device_id = ?", arguments: [deviceID])
            try db.execute(
                sql: "INSERT OR REPLACE INTO unlinked_device (device_id, player_id, unlinked_at) VALUES (?, ?, ?)",
                arguments: [deviceID, playerID, at.milliseconds])
        }
        try db.execute(
            sql: """
                DELETE FROM unlinked_device WHERE player_id = ? AND device_id NOT IN (
                    SELECT device_id FROM unlinked_device WHERE player_id = ? ORDER BY unlinked_at DESC, device_id DESC LIMIT ?)
                """,
            arguments: [playerID, playerID, DeviceIdentityRecord.unlinkedKeptPerPlayer])
        try db.execute(sql: "UPDATE player SET token_generation = token_generation + 1 WHERE id = ?", arguments: [playerID])
        try db.execute(sql: "DELETE FROM link_code WHERE player_id = ?", arguments: [playerID])
        let generation = try Int64.fetchOne(db, sql: "SELECT token_generation FROM player WHERE id = ?", arguments: [playerID]) ?? 0
        return UInt64(clamping: generation)
    }

    /// See ``GameStore/tokenGenerations()``.
    public func tokenGenerations() async throws -> [PlayerID: UInt64] {
        try await self.read { db in
            // The partial index `player_token_generation` holds exactly these rows.
            var generations: [PlayerID: UInt64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, token_generation FROM player WHERE token_generation > 0") {
                generations[row["id"]] = UInt64(clamping: row["token_generation"] as Int64)
            }
            return generations
        }
    }

    /// See ``GameStore/putLinkCode(_:at:)``.
    public func putLinkCode(_ code: LinkCodeRecord, at now: UnixMillis) async throws {
        try await self.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM player WHERE id = ?", arguments: [code.playerID]) != nil else {
                throw GameStoreError.unknownPlayer(code.playerID)
            }
            try db.execute(sql: "DELETE FROM link_code WHERE expires_at <= ?", arguments: [now.milliseconds])
            // Replaces the player's code, and any other row with the same digest.
            try db.execute(
                sql: "INSERT OR REPLACE INTO link_code (player_id, digest, expires_at, claimed_by) VALUES (?, ?, ?, ?)",
                arguments: [code.playerID, Data(code.digest), code.expiresAt.milliseconds, code.claimedBy])
        }
    }

    /// See ``GameStore/forgetLinkCode(playerID:)``.
    public func forgetLinkCode(playerID: PlayerID) async throws {
        try await self.write { db in try db.execute(sql: "DELETE FROM link_code WHERE player_id = ?", arguments: [playerID]) }
    }

    /// See ``GameStore/claimLinkCode(digest:by:)``.
    public func claimLinkCode(digest: [UInt8], by deviceID: String) async throws {
        try await self.write { db in
            try db.execute(
                sql: "UPDATE link_code SET claimed_by = ? WHERE digest = ? AND claimed_by IS NULL", arguments: [deviceID, Data(digest)])
        }
    }

    /// See ``GameStore/linkCodes(validAt:)``.
    public func linkCodes(validAt now: UnixMillis) async throws -> [LinkCodeRecord] {
        try await self.read { db in
            try Row.fetchAll(
                db, sql: "SELECT player_id, digest, expires_at, claimed_by FROM link_code WHERE expires_at > ? ORDER BY player_id",
                arguments: [now.milliseconds]
            ).map { row in
                LinkCodeRecord(
                    playerID: row["player_id"], digest: [UInt8](row["digest"] as Data), expiresAt: UnixMillis(milliseconds: row["expires_at"]),
                    claimedBy: row["claimed_by"])
            }
        }
    }

    private static func device(in row: Row) -> DeviceIdentityRecord {
        DeviceIdentityRecord(
            deviceID: row["device_id"], playerID: row["player_id"], secretHash: [UInt8](row["secret_hash"] as Data),
            linkedAt: UnixMillis(milliseconds: row["linked_at"]))
    }

    private static func deviceCount(_ db: Database, _ playerID: PlayerID) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device_identity WHERE player_id = ?", arguments: [playerID]) ?? 0
    }

    /// See ``GameStore/createPlayerWithExternalIdentity(id:alias:identity:createdAt:)``.
    public func createPlayerWithExternalIdentity(
        id: PlayerID, alias: String, identity: ExternalIdentity, createdAt: UnixMillis
    ) async throws {
        try await self.write { db in
            try Self.insertPlayer(db, id: id, alias: alias, createdAt: createdAt)
            let taken = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM external_identity WHERE kind = ? AND external_id = ?)",
                arguments: [identity.kind.rawValue, identity.externalID]) ?? false
            guard !taken else { throw GameStoreError.externalIdentityExists(identity) }
            try db.execute(
                sql: "INSERT INTO external_identity (kind, external_id, player_id) VALUES (?, ?, ?)",
                arguments: [identity.kind.rawValue, identity.externalID, id])
        }
    }

    /// See ``GameStore/player(externalIdentity:)``.
    public func player(externalIdentity identity: ExternalIdentity) async throws -> PlayerRecord? {
        try await self.read { db in try Self.player(db, externalIdentity: identity) }
    }

    /// See ``GameStore/findOrCreatePlayers(_:at:)``.
    public func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] {
        try await self.write { db in
            try claims.map { claim in
                if let known = try Self.player(db, externalIdentity: claim.identity) {
                    // The client's alias, unless the operator locked the stored one.
                    try db.execute(
                        sql: "UPDATE player SET last_seen_at = MAX(last_seen_at, ?), alias = CASE WHEN alias_locked THEN alias ELSE ? END WHERE id = ?",
                        arguments: [at.milliseconds, claim.alias, known.id])
                    var player = known
                    if !known.aliasLocked { player.alias = claim.alias }
                    player.lastSeenAt = max(known.lastSeenAt, at)
                    return player
                }
                try Self.insertPlayer(db, id: claim.newPlayerID, alias: claim.alias, createdAt: at)
                try db.execute(
                    sql: "INSERT INTO external_identity (kind, external_id, player_id) VALUES (?, ?, ?)",
                    arguments: [claim.identity.kind.rawValue, claim.identity.externalID, claim.newPlayerID])
                return PlayerRecord(id: claim.newPlayerID, alias: claim.alias, createdAt: at, lastSeenAt: at)
            }
        }
    }

    private static func player(_ db: Database, externalIdentity identity: ExternalIdentity) throws -> PlayerRecord? {
        try Row.fetchOne(
            db,
            sql: """
                SELECT player.id, \(Self.playerColumns) FROM external_identity
                JOIN player ON player.id = external_identity.player_id WHERE kind = ? AND external_id = ?
                """,
            arguments: [identity.kind.rawValue, identity.externalID]
        ).map(Self.player(in:))
    }

    static func playerExists(_ db: Database, _ id: PlayerID) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM player WHERE id = ?)", arguments: [id]) ?? false
    }

    private static func insertPlayer(_ db: Database, id: PlayerID, alias: String, createdAt: UnixMillis) throws {
        guard try !Self.playerExists(db, id) else { throw GameStoreError.playerExists(id) }
        try db.execute(
            sql: "INSERT INTO player (id, alias, created_at, last_seen_at) VALUES (?, ?, ?, ?)",
            arguments: [id, alias, createdAt.milliseconds, createdAt.milliseconds])
    }

    private static func deviceExists(_ db: Database, _ deviceID: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM device_identity WHERE device_id = ?)", arguments: [deviceID]) ?? false
    }

    private static func insertDevice(_ db: Database, deviceID: String, secretHash: [UInt8], playerID: PlayerID, linkedAt: UnixMillis) throws {
        guard try !Self.deviceExists(db, deviceID) else { throw GameStoreError.deviceExists(deviceID: deviceID) }
        try db.execute(
            sql: "INSERT INTO device_identity (device_id, player_id, secret_hash, linked_at) VALUES (?, ?, ?, ?)",
            arguments: [deviceID, playerID, Data(secretHash), linkedAt.milliseconds])
    }
}
