/// A stored player account.
public struct PlayerRecord: Sendable, Hashable {
    /// The id the server issued.
    public var id: PlayerID
    /// The name other players see.
    public var alias: String
    /// When the account was created.
    public var createdAt: UnixMillis
    /// The last time the server marked the player as seen (``GameStore/touch(playerID:at:)``).
    public var lastSeenAt: UnixMillis
    /// The operator's ban, while the player is banned (``GameStore/setBan(playerID:ban:at:)``).
    public var ban: PlayerBan?
    /// Whether the operator fixed the alias (``GameStore/setAliasByOperator(playerID:alias:locked:)``):
    /// the player's own ``GameStore/setAlias(playerID:alias:)`` is refused until it is unlocked.
    public var aliasLocked: Bool

    /// Creates a record.
    public init(id: PlayerID, alias: String, createdAt: UnixMillis, lastSeenAt: UnixMillis, ban: PlayerBan? = nil, aliasLocked: Bool = false) {
        self.id = id
        self.alias = alias
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.ban = ban
        self.aliasLocked = aliasLocked
    }
}

/// An operator's ban of a player: while it lasts, the player cannot sign in (with a device or
/// a token) and has no session.
public struct PlayerBan: Sendable, Hashable {
    /// Why, as the operator put it; the player is told it.
    public var reason: String
    /// When the ban was made.
    public var since: UnixMillis
    /// When the ban ends by itself; nil: only when lifted. An ended ban stays stored (its
    /// player's record shows it) but refuses nothing.
    public var until: UnixMillis?

    /// Creates a ban.
    public init(reason: String, since: UnixMillis, until: UnixMillis? = nil) {
        self.reason = reason
        self.since = since
        self.until = until
    }

    /// Whether the ban still refuses its player at `now`.
    public func isInForce(at now: UnixMillis) -> Bool {
        self.until.map { now < $0 } ?? true
    }
}

/// A ban as the operator made it, kept once it is over: a player's record of its bans
/// (``GameStore/banRecords(playerID:limit:)``), which a lift or a later ban does not erase.
public struct PlayerBanRecord: Sendable, Hashable {
    /// How a ban stopped before its own end (or, for a ban until lifted, at all).
    public enum EndedEarly: Sendable, Hashable {
        /// The operator lifted it, at this time.
        case lifted(at: UnixMillis)
        /// The operator banned the player again, at this time: the new ban replaced it.
        case replaced(at: UnixMillis)
    }

    /// The banned player.
    public var playerID: PlayerID
    /// The ban as it was made.
    public var ban: PlayerBan
    /// How it stopped before `ban.until`; nil: it did not (it is in force, or ran out).
    public var endedEarly: EndedEarly?

    /// Creates a record.
    public init(playerID: PlayerID, ban: PlayerBan, endedEarly: EndedEarly? = nil) {
        self.playerID = playerID
        self.ban = ban
        self.endedEarly = endedEarly
    }

    /// Whether the ban still refuses its player at `now`.
    public func isInForce(at now: UnixMillis) -> Bool {
        self.endedEarly == nil && self.ban.isInForce(at: now)
    }

    /// Of each player's current ban in `bans` (``GameStore/bannedPlayers()``, or what a server
    /// holds from it), those in force at `now`, the latest made first (by `since`, then id).
    public static func inForce(_ bans: [PlayerID: PlayerBan], at now: UnixMillis) -> [PlayerBanRecord] {
        bans.filter { $0.value.isInForce(at: now) }
            .map { PlayerBanRecord(playerID: $0.key, ban: $0.value) }
            .sorted { ($0.ban.since, $0.playerID) > ($1.ban.since, $1.playerID) }
    }
}

/// A device that signs in as a player: its id and a hash of its secret.
public struct DeviceIdentityRecord: Sendable, Hashable {
    /// The id the device sends.
    public var deviceID: String
    /// The player the device signs in as.
    public var playerID: PlayerID
    /// A hash of the device's secret; the secret itself is never stored.
    public var secretHash: [UInt8]
    /// When the device became the player's: the player's creation for its first device, the
    /// link for a device added later (``GameStore/addDeviceIdentity(deviceID:secretHash:playerID:linkedAt:maximumDevices:)``).
    public var linkedAt: UnixMillis

    /// How many of a player's unlinked device ids a store remembers (the latest): bounds what
    /// linking and unlinking in a loop can store, while every device a player has lost lately
    /// is still told it was unlinked.
    public static let unlinkedKeptPerPlayer = 100

    /// Creates a record.
    public init(deviceID: String, playerID: PlayerID, secretHash: [UInt8], linkedAt: UnixMillis) {
        self.deviceID = deviceID
        self.playerID = playerID
        self.secretHash = secretHash
        self.linkedAt = linkedAt
    }
}

/// A link code as stored (``GameStore/putLinkCode(_:at:)``): the code handed to the player
/// lets one new device join it until it expires, and outlives a restart of the server.
public struct LinkCodeRecord: Sendable, Hashable {
    /// The player a device that presents the code joins.
    public var playerID: PlayerID
    /// What identifies the code: a keyed digest of it (the server's), never the code itself, so
    /// that a copy of the database links no device.
    public var digest: [UInt8]
    /// When the code stops linking.
    public var expiresAt: UnixMillis
    /// The device that claimed the code, once one has: only it may present the code again.
    public var claimedBy: String?

    /// Creates a record.
    public init(playerID: PlayerID, digest: [UInt8], expiresAt: UnixMillis, claimedBy: String? = nil) {
        self.playerID = playerID
        self.digest = digest
        self.expiresAt = expiresAt
        self.claimedBy = claimedBy
    }
}
