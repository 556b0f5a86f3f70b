import MatchHostWire
import NIOCore

extension MatchHostClient {
    /// A player's profile: alias, when it was created and last seen, and its stats per game.
    /// - Parameter playerID: the player; empty (the default) for this client's own player.
    /// - Throws: `NO_SUCH_PLAYER` for an id the server does not know.
    public func profile(of playerID: String = "") async throws -> NativeProfile {
        let response = try await self.request(.getProfile(playerID: playerID))
        guard case .profile(let profile) = response else {
            throw MatchHostClientError.protocolViolation("expected PROFILE, got \(response)")
        }
        return profile
    }

    /// The aliases of these players, by id: what to show for a match's players, asked at once
    /// (GET_ALIASES, one request per ``NativePlayerAlias/maximumPerRequest`` ids). A player the
    /// server does not know is left out.
    public func aliases(of playerIDs: some Sequence<String>) async throws -> [String: String] {
        var unique: [String] = []
        var seen = Set<String>()
        // An id over a string field's 255 bytes is no player's, and would cost the connection.
        for playerID in playerIDs where playerID.utf8.count <= NativeLimits.identifier && seen.insert(playerID).inserted {
            unique.append(playerID)
        }
        var aliases: [String: String] = [:]
        var start = 0
        while start < unique.count {
            let batch = Array(unique[start..<min(start + NativePlayerAlias.maximumPerRequest, unique.count)])
            start += batch.count
            let response = try await self.request(.getAliases(playerIDs: batch))
            guard case .aliases(let answered) = response else {
                throw MatchHostClientError.protocolViolation("expected ALIASES, got \(response)")
            }
            for entry in answered { aliases[entry.playerID] = entry.alias }
        }
        return aliases
    }

    /// A player's most recent matches, newest first.
    /// - Parameters:
    ///   - playerID: the player; empty (the default) for this client's own player.
    ///   - limit: how many at most; 0 takes the server's default (20), more than 100 gives 100.
    /// - Throws: `NO_SUCH_PLAYER` for an id with neither an account nor a match.
    public func matchHistory(of playerID: String = "", limit: UInt8 = 0) async throws -> [NativeMatchSummary] {
        let response = try await self.request(.getMatchHistory(playerID: playerID, limit: limit))
        guard case .matchHistory(_, let matches) = response else {
            throw MatchHostClientError.protocolViolation("expected MATCH_HISTORY, got \(response)")
        }
        return matches
    }

    /// Part of a game's leaderboard, best first: its top players, or the entries around one
    /// player (empty when that player has no finished match in the game).
    /// - Parameters:
    ///   - game: the game's mode name (`fourinarow`, `disks`, `catrace`).
    ///   - playerID: the player to centre on; empty (the default) for the top of the board.
    ///   - limit: how many entries; 0 takes the server's default (10), more than 100 gives 100.
    public func leaderboard(game: String, around playerID: String = "", limit: UInt8 = 0) async throws -> [NativeLeaderboardEntry] {
        guard game.utf8.count <= NativeLimits.mode else { throw MatchHostClientError.invalidArgument("game names are at most 64 bytes") }
        let response = try await self.request(.getLeaderboard(game: game, around: playerID, limit: limit))
        guard case .leaderboard(_, let entries) = response else {
            throw MatchHostClientError.protocolViolation("expected LEADERBOARD, got \(response)")
        }
        return entries
    }

    /// This player's value under `key`, or nil when there is none.
    /// - Throws: `INVALID_KEY` for an empty key.
    public func readValue(key: String) async throws -> [UInt8]? {
        let response = try await self.request(.readValue(key: key))
        guard case .value(_, let value) = response else {
            throw MatchHostClientError.protocolViolation("expected VALUE, got \(response)")
        }
        return value.map { Array($0.readableBytesView) }
    }

    /// Stores `value` under `key` for this player, replacing what was there. Committed to the
    /// server's database when this returns.
    /// - Throws: `INVALID_KEY` (empty, or longer than the server's limit, 128 bytes by default),
    ///   `VALUE_TOO_LARGE` (16 KiB by default), `TOO_MANY_KEYS` (64 by default).
    public func writeValue(_ value: [UInt8], key: String) async throws {
        try Self.expectDone(await self.request(.writeValue(key: key, value: ByteBuffer(bytes: value))), "WRITE_VALUE")
    }

    /// Removes this player's `key`; nothing happens if it is not there.
    public func deleteValue(key: String) async throws {
        try Self.expectDone(await self.request(.deleteValue(key: key)), "DELETE_VALUE")
    }

    /// Sets this player's alias: what profiles and leaderboards show for it. Committed to the
    /// server's database when this returns.
    /// - Throws: `BAD_ARGUMENT` (with the reason) for an alias the server's rules refuse: empty,
    ///   longer than its limit (32 Unicode scalars by default), with spaces at either end, or
    ///   holding line breaks or invisible characters other than those that join emoji;
    ///   `ALIAS_LOCKED` when the server's operator locked this player's alias;
    ///   ``MatchHostClientError/invalidArgument(_:)`` for one over the field's 255 bytes or
    ///   holding a control character (which no native string may carry).
    public func setAlias(_ alias: String) async throws {
        guard alias.utf8.count <= NativeLimits.identifier else {
            throw MatchHostClientError.invalidArgument("an alias is at most \(NativeLimits.identifier) bytes of UTF-8")
        }
        // The string writer would send each as a space: an alias other than the one asked for.
        guard !alias.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw MatchHostClientError.invalidArgument("an alias may not hold control characters")
        }
        try Self.expectDone(await self.request(.setAlias(alias)), "SET_ALIAS")
    }

    /// A code that links a new device to this player, and when it stops working (Unix
    /// milliseconds; 10 minutes from now by default). Show it to the player, who types it on
    /// the new device, whose client signs in with ``MatchHostWire/NativeCredentials/link(code:deviceID:secret:)``.
    /// A code links one device; asking again replaces it.
    /// - Throws: `TOO_MANY_DEVICES` when the player has the server's most devices (10 by default).
    public func createLinkCode() async throws -> (code: String, expiresAt: UInt64) {
        let response = try await self.request(.createLinkCode)
        guard case .linkCode(let code, let expiresAt) = response else {
            throw MatchHostClientError.protocolViolation("expected LINK_CODE, got \(response)")
        }
        return (code, expiresAt)
    }

    /// This player's devices, the longest linked first.
    public func devices() async throws -> [NativeDevice] {
        let response = try await self.request(.listDevices)
        guard case .devices(let devices) = response else {
            throw MatchHostClientError.protocolViolation("expected DEVICES, got \(response)")
        }
        return devices
    }

    /// Removes one of this player's devices (a lost or sold phone): it can no longer sign in,
    /// and every session token the player holds is revoked, so the device cannot come back with
    /// one either. This session goes on; the player's other devices sign in with their secrets
    /// when they next connect (this client does so by itself).
    /// - Throws: `NO_SUCH_DEVICE` for a device that is not this player's, `LAST_DEVICE` for its only one.
    public func unlinkDevice(_ deviceID: String) async throws {
        try Self.expectDone(await self.request(.unlinkDevice(deviceID: deviceID)), "UNLINK_DEVICE")
    }

    private static func expectDone(_ response: NativeResponse, _ request: String) throws {
        guard case .done = response else { throw MatchHostClientError.protocolViolation("\(request) answered with \(response)") }
    }
}
