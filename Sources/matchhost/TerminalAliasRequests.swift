import MatchHostClient

/// The players whose aliases a terminal game wants to show, asked of the server (GET_PROFILE)
/// one after another, off the screen's loop: ``feed(from:as:into:)`` yields each answer as a
/// game event, for ``runInTerminal(startFeeds:draw:handle:close:)``.
struct TerminalAliasRequests: Sendable {
    private let wanted: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() {
        (self.wanted, self.continuation) = AsyncStream.makeStream()
    }

    /// Asks for the aliases of `playerIDs` (the caller asks for each once).
    func ask(_ playerIDs: [String]) {
        for playerID in playerIDs { self.continuation.yield(playerID) }
    }

    /// Asks `client` for each alias wanted; each answer goes to `yield` as `event(alias,
    /// playerID)`. A player the server does not answer for keeps the start of its id.
    func feed<Game: Sendable>(
        from client: MatchHostClient, as event: @escaping @Sendable (String, String) -> Game, into yield: @escaping @Sendable (Game) -> Void
    ) -> Task<Void, Never> {
        let wanted = self.wanted
        return Task {
            for await playerID in wanted {
                if let profile = try? await client.profile(of: playerID) { yield(event(profile.alias, playerID)) }
            }
        }
    }

    /// Asks for nothing more: the feed ends.
    func finish() {
        self.continuation.finish()
    }
}
