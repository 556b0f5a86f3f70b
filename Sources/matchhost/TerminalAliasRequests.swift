import MatchHostClient

/// The players whose aliases a terminal game wants to show, asked of the server (GET_ALIASES)
/// one batch after another, off the screen's loop: ``feed(from:as:into:)`` yields each answer
/// as a game event, for ``runInTerminal(startFeeds:draw:handle:close:)``.
struct TerminalAliasRequests: Sendable {
    /// How many times a batch is asked before its players keep the start of their ids, and
    /// how long the feed waits between two tries (a server that has many requests waiting, or
    /// a connection being resumed, refuses for a moment).
    static let attempts = 3
    static let retryDelay = Duration.seconds(1)

    private let wanted: AsyncStream<[String]>
    private let continuation: AsyncStream<[String]>.Continuation

    init() {
        (self.wanted, self.continuation) = AsyncStream.makeStream()
    }

    /// Asks for the aliases of `playerIDs`, in one request (the caller asks for each once).
    func ask(_ playerIDs: [String]) {
        guard !playerIDs.isEmpty else { return }
        self.continuation.yield(playerIDs)
    }

    /// Asks `client` for each batch of aliases wanted; each answer goes to `yield` as
    /// `event(alias, playerID)`. A player the server does not answer for keeps the start of its id.
    func feed<Game: Sendable>(
        from client: MatchHostClient, as event: @escaping @Sendable (String, String) -> Game, into yield: @escaping @Sendable (Game) -> Void
    ) -> Task<Void, Never> {
        let wanted = self.wanted
        return Task {
            for await playerIDs in wanted {
                for attempt in 1...Self.attempts {
                    if let aliases = try? await client.aliases(of: playerIDs) {
                        for playerID in playerIDs { if let alias = aliases[playerID] { yield(event(alias, playerID)) } }
                        break
                    }
                    if attempt < Self.attempts { try? await Task.sleep(for: Self.retryDelay) }
                }
            }
        }
    }

    /// Asks for nothing more: the feed ends.
    func finish() {
        self.continuation.finish()
    }
}
