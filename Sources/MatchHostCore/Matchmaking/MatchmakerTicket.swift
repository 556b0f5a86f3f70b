import NIOCore

/// A request to be matched: one player, or a party kept together, waiting for a game.
///
/// The matchmaker assigns ``id`` and ``enqueuedAt`` when the ticket is added.
public struct MatchmakerTicket: Sendable, Hashable {
    /// Unique among the matchmaker's tickets; what the client cancels by.
    public let id: String
    /// The players, placed together in one group: one for a solo ticket, 2 to 16 for a party.
    public let players: [PlayerID]
    /// The game to be matched for; only tickets with the same mode are grouped.
    public let mode: String
    /// The fewest players of a match this ticket accepts once it has waited the relaxation time.
    public let minPlayers: Int
    /// The most players of a match this ticket accepts; until relaxation it waits for exactly this many.
    public let maxPlayers: Int
    /// String properties that other tickets' queries test.
    public let stringProperties: [String: String]
    /// Number properties that other tickets' queries test.
    public let numberProperties: [String: Double]
    /// What this ticket asks of every other ticket in its group.
    public let query: MatchmakerQuery
    /// When the ticket was added; age decides who is matched first and when it relaxes.
    public let enqueuedAt: NIODeadline

    /// Creates a ticket value; tickets that wait are made by ``Matchmaker/add(players:mode:minPlayers:maxPlayers:stringProperties:numberProperties:query:)``.
    public init(
        id: String, players: [PlayerID], mode: String, minPlayers: Int, maxPlayers: Int,
        stringProperties: [String: String] = [:], numberProperties: [String: Double] = [:],
        query: MatchmakerQuery = .any, enqueuedAt: NIODeadline
    ) {
        self.id = id
        self.players = players
        self.mode = mode
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.stringProperties = stringProperties
        self.numberProperties = numberProperties
        self.query = query
        self.enqueuedAt = enqueuedAt
    }

    /// Whether this ticket's query accepts `other`'s properties.
    public func accepts(_ other: MatchmakerTicket) -> Bool {
        self.query.accepts(stringProperties: other.stringProperties, numberProperties: other.numberProperties)
    }

    /// Whether the two tickets may be in one group: same mode, and each one's query accepts
    /// the other's properties.
    public func isCompatible(with other: MatchmakerTicket) -> Bool {
        self.mode == other.mode && self.accepts(other) && other.accepts(self)
    }

    /// How many players a group must reach for this ticket at `now`: ``maxPlayers`` until it
    /// has waited `relaxAfter`, then ``minPlayers``.
    public func requiredPlayers(at now: NIODeadline, relaxAfter: TimeAmount) -> Int {
        now >= self.enqueuedAt + relaxAfter ? self.minPlayers : self.maxPlayers
    }
}
