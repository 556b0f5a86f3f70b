/// Counts from one matchmaker pass, for metrics and the benchmark.
public struct MatchmakerPassReport: Sendable, Hashable {
    /// Groups formed.
    public var groups = 0
    /// Tickets placed in groups.
    public var ticketsMatched = 0
    /// Players placed in groups.
    public var playersMatched = 0
    /// Tickets searched from.
    public var searches = 0
    /// Tickets not searched: nothing that could help them changed since their last search.
    public var skipped = 0
    /// Searches that ran out of budget; their tickets are searched again next pass.
    public var exhaustedSearches = 0
    /// How many slices the pass ran in (see ``MatchmakerConfiguration/sliceDuration``).
    public var slices = 0
    /// Tickets still waiting after the pass.
    public var waiting = 0

    /// An empty report.
    public init() {}
}
