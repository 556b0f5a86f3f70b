/// Tickets the matchmaker put together; the server creates one match for them.
public struct MatchmakerGroup: Sendable, Hashable {
    /// The game of every ticket in the group.
    public let mode: String
    /// The tickets, oldest first. They have left the matchmaker.
    public let tickets: [MatchmakerTicket]
    /// Other tickets of the group's players (for other modes), withdrawn because their
    /// players are now matched: the server tells those players they are gone.
    public let withdrawnTicketIDs: [String]

    /// Creates a group.
    public init(mode: String, tickets: [MatchmakerTicket], withdrawnTicketIDs: [String] = []) {
        self.mode = mode
        self.tickets = tickets
        self.withdrawnTicketIDs = withdrawnTicketIDs
    }

    /// Every player of the group, ticket by ticket (a party's players together).
    public var players: [PlayerID] { self.tickets.flatMap(\.players) }

    /// How many players the group has.
    public var playerCount: Int { self.tickets.reduce(0) { $0 + $1.players.count } }
}
