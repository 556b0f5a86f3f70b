/// Why the matchmaker refused a ticket.
public enum MatchmakerError: Error, Sendable, Hashable {
    /// A ticket needs at least one player.
    case noPlayers
    /// The same player is listed twice in one party.
    case duplicatePlayer(PlayerID)
    /// `minPlayers` and `maxPlayers` must lie in 2...16 with min ≤ max.
    case invalidPlayerCounts(min: Int, max: Int)
    /// The party has `maxPlayers` players or more: no room is left for another ticket, and a
    /// group needs two.
    case partyTooLarge(players: Int, maxPlayers: Int)
    /// The mode name is empty.
    case emptyMode
    /// More properties or query clauses than allowed, a NaN number, or a range with min > max.
    case invalidProperties(String)
    /// The player already waits in a ticket for this mode (so no group can hold a player twice).
    case alreadyQueued(player: PlayerID, mode: String)
    /// The player already has the most tickets allowed.
    case tooManyTickets(player: PlayerID, limit: Int)
    /// The matchmaker holds as many tickets as it may.
    case full(capacity: Int)
}
