/// What a player who was away when a match of theirs ended is still to hear of it: kept in
/// the store (``GameStore/recordEndNotices(_:)``) until the player is back and told, so that a
/// second restart in the meantime does not lose it.
public struct MatchEndNotice: Sendable, Hashable {
    /// How long a notice is kept for a player who does not come back: a server drops older
    /// ones at startup (``GameStore/deleteEndNotices(endedBefore:)``), so that players who never
    /// return do not make every start read more.
    public static let retentionMilliseconds: Int64 = 30 * 24 * 3600 * 1000

    /// The player to tell.
    public var playerID: PlayerID
    /// The match that ended.
    public var matchID: MatchID
    /// How it ended, as the player is told (MATCH_ENDED's reason).
    public var reason: String
    /// When it ended.
    public var endedAt: UnixMillis

    /// Creates a notice.
    public init(playerID: PlayerID, matchID: MatchID, reason: String, endedAt: UnixMillis) {
        self.playerID = playerID
        self.matchID = matchID
        self.reason = reason
        self.endedAt = endedAt
    }
}
