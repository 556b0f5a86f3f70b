/// The link codes a server has handed out (`CREATE_LINK_CODE`), each of which lets one new
/// device join its player (`AUTHENTICATE` method 3) until it expires. Each is stored as it is
/// issued and claimed (``GameStore/putLinkCode(_:at:)``, ``GameStore/claimLinkCode(digest:by:)``),
/// so a restart keeps it (``restore(_:now:)``); this value is what the running server decides by.
///
/// Codes are held by a keyed digest (the `digest` given), never as typed: the store holds only
/// that, so a copy of the database links no device. A pure value on the wall clock it is given,
/// so its rules are tested without sockets or waiting. A player holds at most one code: a new
/// one replaces it, so the codes held are bounded by the players who asked within a lifetime,
/// and expired ones are swept as codes are issued.
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

    /// A code a device claimed.
    public struct Claim: Sendable, Hashable {
        /// The player the code links the device to.
        public var playerID: PlayerID
        /// The code's digest, to store the claim by (``GameStore/claimLinkCode(digest:by:)``).
        public var digest: [UInt8]

        /// Creates a claim.
        public init(playerID: PlayerID, digest: [UInt8]) {
            self.playerID = playerID
            self.digest = digest
        }
    }

    /// Why a code does not link a device.
    public enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// No such code (never issued, or replaced).
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
    /// The keyed digest of a code (in upper case) that it is held and stored by.
    private let digest: @Sendable (String) -> [UInt8]
    private var grants: [[UInt8]: Grant] = [:]
    private var codeOfPlayer: [PlayerID: [UInt8]] = [:]
    /// How many codes were held after the last sweep: the next sweep waits until that doubles,
    /// so sweeping costs a constant per code issued.
    private var sweptAt = 0

    /// - Parameters:
    ///   - lifetime: how long each code links (the server's `--link-code-lifetime`).
    ///   - digest: the keyed digest codes are held and stored by (the server's: a code's
    ///     digest under another key finds nothing).
    public init(lifetime: Duration, digest: @escaping @Sendable (String) -> [UInt8]) {
        self.lifetime = lifetime
        self.digest = digest
    }

    /// How many codes are held (expired ones not yet swept included).
    public var count: Int { self.grants.count }

    /// Whether `playerID` holds a code (an expired one not yet swept included).
    public func holdsCode(for playerID: PlayerID) -> Bool {
        self.codeOfPlayer[playerID] != nil
    }

    /// Takes the codes the store kept (``GameStore/linkCodes(validAt:)``), at start.
    public mutating func restore(_ codes: [LinkCodeRecord], now: UnixMillis) {
        for code in codes where code.expiresAt > now {
            if let old = self.codeOfPlayer.updateValue(code.digest, forKey: code.playerID) { self.grants[old] = nil }
            self.grants[code.digest] = Grant(playerID: code.playerID, expiresAt: code.expiresAt, claimedBy: code.claimedBy)
        }
        self.sweptAt = self.grants.count
    }

    /// A new code for `playerID`, replacing the one it held, and what to store of it; `code`
    /// makes a random code, and is asked again while it makes one that is held.
    public mutating func issue(for playerID: PlayerID, now: UnixMillis, code makeCode: () -> String) -> (code: String, stored: LinkCodeRecord) {
        self.revoke(for: playerID)
        if self.grants.count >= max(64, 2 * self.sweptAt) { self.sweep(now: now) }
        var code: String
        var key: [UInt8]
        repeat {
            code = InviteCode.normalized(makeCode())
            key = self.digest(code)
        } while self.grants[key] != nil
        let expiresAt = now.adding(self.lifetime)
        self.grants[key] = Grant(playerID: playerID, expiresAt: expiresAt)
        self.codeOfPlayer[playerID] = key
        return (code, LinkCodeRecord(playerID: playerID, digest: key, expiresAt: expiresAt))
    }

    /// The player `code` (in any case) links `deviceID` to, if it does at `now`, and the code's
    /// digest; the code is then `deviceID`'s: claimed before the link is
    /// stored, so that two devices presenting it at once cannot both be linked. The device that
    /// claimed it may present it again (its link failed, or its answer was lost) until it expires.
    public mutating func claim(_ code: String, by deviceID: String, now: UnixMillis) -> Result<Claim, Refusal> {
        let key = self.digest(InviteCode.normalized(code))
        guard let grant = self.grants[key] else { return .failure(.unknown) }
        guard now < grant.expiresAt else { return .failure(.expired) }
        if let device = grant.claimedBy, device != deviceID { return .failure(.claimed) }
        self.grants[key]?.claimedBy = deviceID
        return .success(Claim(playerID: grant.playerID, digest: key))
    }

    /// Forgets the player's code, if it holds one (its devices were changed; a code from before
    /// must not link another).
    public mutating func revoke(for playerID: PlayerID) {
        if let key = self.codeOfPlayer.removeValue(forKey: playerID) { self.grants[key] = nil }
    }

    /// Forgets the code with `digest` if it is still the one its player holds (it could not be
    /// stored, so it was never handed out).
    public mutating func revoke(_ digest: [UInt8], of playerID: PlayerID) {
        guard self.codeOfPlayer[playerID] == digest else { return }
        self.revoke(for: playerID)
    }

    /// Forgets every code that has expired at `now`.
    public mutating func sweep(now: UnixMillis) {
        for (key, grant) in self.grants where grant.expiresAt <= now {
            self.grants[key] = nil
            if self.codeOfPlayer[grant.playerID] == key { self.codeOfPlayer[grant.playerID] = nil }
        }
        self.sweptAt = self.grants.count
    }
}
