import MatchHostWire

// What every game adapter (Cat Race, Disks, Four in a Row) does to take a seat.
extension MatchHostClient {
    /// The authenticated player's id; ``MatchHostClientError/notConnected`` before ``connect()``.
    func authenticatedPlayerID() async throws -> String {
        guard let authenticated = await self.authenticated else { throw MatchHostClientError.notConnected }
        return authenticated.playerID
    }

    /// `match`, if it plays `mode`; otherwise the player leaves it again and
    /// ``MatchHostClientError/invalidArgument(_:)`` says why.
    func requireMode(_ mode: String, of match: NativeMatchInfo) async throws -> NativeMatchInfo {
        guard match.mode == mode else {
            try? await self.leaveMatch(match.matchID)
            throw MatchHostClientError.invalidArgument("match \(match.matchID) is a \"\(match.mode)\" match, not \"\(mode)\"")
        }
        return match
    }
}
