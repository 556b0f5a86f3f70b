/// The link codes a server has handed out (`CREATE_LINK_CODE`), each of which lets one new
/// device join its player (`AUTHENTICATE` method 3) until it expires. Held in memory only: a
/// code is good for minutes, and a player who loses one to a restart asks for another.
///
/// A pure value on the wall clock it is given, so its rules are tested without sockets or
/// waiting. A player holds at most one code: a new one replaces it, so the codes held are
/// bounded by the players who asked within a lifetime, and expired ones are swept as codes are
/// issued.
public struct DeviceLinkCodes: Sendable {
    /// What a code was issued for.
    public struct Grant: Sendable, Hashable {
        /// The player a device that redeems the code joins.
        public var playerID: PlayerID
        /// When the code stops linking.
        public var expiresAt: UnixMillis
        /// The device that claimed the code, once one has: the same device may present the
        /// code again until it expires (a retry whose answer was lost), no other may.
        public var claimedBy: String?
    }

    /// Why a code does not link a device.
    public enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// No such code (never issued, replaced, or forgotten by a restart).
        case unknown
        /// The code's time ran out.
        case expired
        /// Another device claimed the code already.
        case claimed

        /// A sentence for the client.
        public var description: String {
            switch self {
            case .unknown: return "no such link code: ask one of the player's devices for a new one"
            case .expired: return "the link code has expired: ask one of the player's devices for a new one"
            case .claimed: return "the link code was used by another device already: a code links one device"
            }
        }
    }

    /// How long a code links, from when it is issued.
    public let lifetime: Duration
    private var grants: [String: Grant] = [:]
    private var codeOfPlayer: [PlayerID: String] = [:]
    /// How many codes were held after the last sweep: the next sweep waits until that doubles,
    /// so sweeping costs a constant per code issued.
    private var sweptAt = 0

    /// - Parameter lifetime: how long each code links (the server's `--link-code-lifetime`).
    public init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    /// How many codes are held (expired ones not yet swept included).
    public var count: Int { self.grants.count }

    /// A new code for `playerID`, replacing the one it held; `code` makes a random code, and is
    /// asked again while it makes one that is held.
    public mutating func issue(for playerID: PlayerID, now: UnixMillis, code makeCode: () -> String) -> (code: String, expiresAt: UnixMillis) {
        if let old = self.codeOfPlayer.removeValue(forKey: playerID) { self.grants[old] = nil }
        if self.grants.count >= max(64, 2 * self.sweptAt) { self.sweep(now: now) }
        var code = makeCode()
        while self.grants[code] != nil { code = makeCode() }
        let expiresAt = now.adding(self.lifetime)
        self.grants[code] = Grant(playerID: playerID, expiresAt: expiresAt)
        self.codeOfPlayer[playerID] = code
        return (code, expiresAt)
    }

    /// The player `code` (in any case) links `deviceID` to, if it does at `now`; the code is
    /// then `deviceID`'s: claimed before the link is stored, so that two devices presenting it
    /// at once cannot both be linked. The device that claimed it may present it again (its link
    /// failed, or its answer was lost) until it expires.
    public mutating func claim(_ code: String, by deviceID: String, now: UnixMillis) -> Result<PlayerID, Refusal> {
        let key = InviteCode.normalized(code)
        guard let grant = self.grants[key] else { return .failure(.unknown) }
        guard now < grant.expiresAt else { return .failure(.expired) }
        if let device = grant.claimedBy, device != deviceID { return .failure(.claimed) }
        self.grants[key]?.claimedBy = deviceID
        return .success(grant.playerID)
    }

    /// Forgets the player's code, if it holds one (its devices were changed; a code from before
    /// must not link another).
    public mutating func revoke(for playerID: PlayerID) {
        if let code = self.codeOfPlayer.removeValue(forKey: playerID) { self.grants[code] = nil }
    }

    /// Forgets every code that has expired at `now`.
    public mutating func sweep(now: UnixMillis) {
        for (code, grant) in self.grants where grant.expiresAt <= now {
            self.grants[code] = nil
            if self.codeOfPlayer[grant.playerID] == code { self.codeOfPlayer[grant.playerID] = nil }
        }
        self.sweptAt = self.grants.count
    }
}
