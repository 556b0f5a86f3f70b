import NIOCore

/// How a ``Matchmaker`` behaves and what it allows.
public struct MatchmakerConfiguration: Sendable, Hashable {
    /// How often ``Matchmaker/start(onGroups:)`` runs a pass.
    public var interval: TimeAmount
    /// How long a ticket waits for a full group (its `maxPlayers`) before it accepts its `minPlayers`.
    public var relaxAfter: TimeAmount
    /// The most tickets one player may be in at once (a party ticket counts for each member).
    public var maxTicketsPerPlayer: Int
    /// The most tickets waiting at once; adding beyond it fails with ``MatchmakerError/full(capacity:)``.
    public var capacity: Int
    /// The most string plus number properties one ticket may carry (at most 255).
    public var maxProperties: Int
    /// The most clauses one query may have (at most 255).
    public var maxQueryClauses: Int
    /// The most group extensions one ticket's search may try in a pass. A search that runs
    /// out leaves the ticket for the next pass; it bounds the cost of a pathological pool.
    public var searchBudget: Int
    /// The longest a pass run by ``Matchmaker/start(onGroups:)`` holds its event loop at once:
    /// past it, the pass stops after the search in hand and goes on at the loop's next turn,
    /// once the loop has read its sockets and run its due timers, so that a pass over many
    /// tickets never stalls the matches on the same loop. Zero: one search per slice.
    public var sliceDuration: TimeAmount

    /// Creates a configuration; the defaults follow Nakama's (1 s passes, 3 tickets per player).
    public init(
        interval: TimeAmount = .seconds(1), relaxAfter: TimeAmount = .seconds(10), maxTicketsPerPlayer: Int = 3,
        capacity: Int = 100_000, maxProperties: Int = 32, maxQueryClauses: Int = 32, searchBudget: Int = 4096,
        sliceDuration: TimeAmount = .milliseconds(2)
    ) {
        precondition(interval > .zero, "the matchmaker interval must be positive")
        precondition(relaxAfter >= .zero, "relaxAfter must not be negative")
        precondition(maxTicketsPerPlayer >= 1 && capacity >= 1 && searchBudget >= 1, "limits must be positive")
        precondition(sliceDuration >= .zero, "the slice duration must not be negative")
        precondition((0...255).contains(maxProperties) && (0...255).contains(maxQueryClauses), "limits must be 0-255")
        self.interval = interval
        self.relaxAfter = relaxAfter
        self.maxTicketsPerPlayer = maxTicketsPerPlayer
        self.capacity = capacity
        self.maxProperties = maxProperties
        self.maxQueryClauses = maxQueryClauses
        self.searchBudget = searchBudget
        self.sliceDuration = sliceDuration
    }
}
