import MatchHostWire

extension MatchHostClient {
    /// Creates a private match: left out of the lobby, joined with the invite code in the
    /// returned info's ``NativeMatchInfo/inviteCode`` (share it; others call ``joinMatch(code:)``).
    public func createPrivateMatch(mode: String, maxPlayers: UInt8 = 0, label: String = "") async throws -> NativeMatchInfo {
        try await self.createMatch(mode: mode, maxPlayers: maxPlayers, label: label, isPrivate: true)
    }

    /// Seats this player in the match with this invite code (case does not matter).
    public func joinMatch(code: String) async throws -> NativeMatchInfo {
        guard code.utf8.count <= NativeLimits.identifier else { throw MatchHostClientError.invalidArgument("invite codes are short") }
        return try Self.matchInfo(from: await self.request(.joinByCode(code)))
    }

    /// One page of a mode's lobby: its open public matches in creation order.
    /// - Returns: the entries, and the cursor to pass as `query.after` for the next page (0 at
    ///   the end). The server looks at no more than 1,000 matches a page, so with a filter a
    ///   page can have fewer than `query.limit` entries, or none, before the end.
    public func listMatches(_ query: NativeLobbyQuery) async throws -> (entries: [NativeLobbyEntry], next: MatchIdentifier) {
        let response = try await self.request(.listMatches(query))
        guard case .matchList(let entries, let next) = response else {
            throw MatchHostClientError.protocolViolation("expected MATCH_LIST, got \(response)")
        }
        return (entries, next)
    }

    /// Follows a mode's lobby: ``Event/lobbyUpdate(mode:changes:)`` events follow, first one
    /// `added` per open match (a page at a time as this client acknowledges; fewer than the
    /// returned count if some end before their page), then every change as it happens.
    /// - Returns: how many matches were open when the subscription started.
    @discardableResult
    public func subscribeLobby(mode: String) async throws -> Int {
        let response = try await self.request(.subscribeLobby(mode: mode))
        guard case .lobbySubscribed(_, let count) = response else {
            throw MatchHostClientError.protocolViolation("expected LOBBY_SUBSCRIBED, got \(response)")
        }
        return Int(count)
    }

    /// Stops a mode's lobby updates.
    public func unsubscribeLobby(mode: String) async throws {
        try Self.expectDone(await self.request(.unsubscribeLobby(mode: mode)))
    }

    /// Queues this player (or, with `ticket.partyID`, the whole party it leads) for matchmaking.
    /// When a group forms, ``Event/matched(ticketID:match:)`` arrives: the player is already
    /// seated in the match.
    /// - Returns: the ticket's id, for ``cancelTicket(_:)``.
    public func matchmake(_ ticket: NativeTicketRequest) async throws -> String {
        let response = try await self.request(.matchmake(ticket))
        guard case .ticketQueued(let id) = response else {
            throw MatchHostClientError.protocolViolation("expected TICKET_QUEUED, got \(response)")
        }
        return id
    }

    /// Takes a ticket out of the queue. Throws `NO_SUCH_TICKET` if it was matched or cancelled already.
    public func cancelTicket(_ ticketID: String) async throws {
        try Self.expectDone(await self.request(.cancelTicket(ticketID)))
    }

    /// Creates a party led by this player; share its ``NativePartyInfo/partyID`` with friends.
    public func createParty(maxSize: UInt8 = 0) async throws -> NativePartyInfo {
        try Self.party(from: await self.request(.createParty(maxSize: maxSize)))
    }

    /// Joins a friend's party by its id; the other members get ``Event/partyUpdate(_:)``.
    public func joinParty(_ partyID: String) async throws -> NativePartyInfo {
        try Self.party(from: await self.request(.joinParty(partyID)))
    }

    /// Leaves a party; if this player leads it, the party is disbanded.
    public func leaveParty(_ partyID: String) async throws {
        try Self.expectDone(await self.request(.leaveParty(partyID)))
    }

    private static func party(from response: NativeResponse) throws -> NativePartyInfo {
        guard case .party(let party) = response else {
            throw MatchHostClientError.protocolViolation("expected PARTY, got \(response)")
        }
        return party
    }

    private static func expectDone(_ response: NativeResponse) throws {
        guard case .done = response else { throw MatchHostClientError.protocolViolation("expected DONE, got \(response)") }
    }
}
