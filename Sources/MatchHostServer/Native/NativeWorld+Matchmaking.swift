import MatchHostCore
import MatchHostWire

/// Matchmaking on the native port: MATCHMAKE and CANCEL_TICKET, the groups the
/// ``Matchmaker`` forms, and the tickets that die with a party change or a session.
extension NativeWorld {
    /// Queues a ticket for the asking player, or for the whole party it leads.
    func matchmake(_ request: NativeTicketRequest, for session: Session) -> Result<NativeResponse, NativeError> {
        guard let mode = self.modes[request.mode] else { return .failure(self.unknownMode(request.mode)) }
        let low = Int(request.minPlayers)
        let high = Int(request.maxPlayers)
        guard low <= high, mode.capacities.contains(low), mode.capacities.contains(high) else {
            let range = mode.capacities
            return .failure(
                NativeError(.badArgument, "\(request.mode) takes \(range.lowerBound) to \(range.upperBound) players (\(mode.capacityOptions)), min ≤ max; asked \(low) to \(high)"))
        }
        var players = [session.playerID]
        var partyID: String?
        if !request.partyID.isEmpty {
            let id = InviteCode.normalized(request.partyID)
            guard let party = self.parties.party(id), party.members.contains(session.playerID) else {
                return .failure(NativeError(.noSuchParty, "not in party \(request.partyID)"))
            }
            guard party.leader == session.playerID else {
                return .failure(NativeError(.notPartyLeader, "only the party's leader queues it"))
            }
            players = party.members
            partyID = id
        }
        // A player waiting already holds its one match to come; one more ticket adds none.
        for player in players where !self.matchmaker.hasTickets(of: player) && self.matchesHeld(by: player) >= self.options.maxMatchesPerPlayer {
            return .failure(player == session.playerID ? self.tooManyMatches : NativeError(.tooManyMatches, "party member \(player): \(self.tooManyMatches.message)"))
        }
        let query = MatchmakerQuery(
            request.query.map { clause in
                let predicate: MatchmakerPredicate
                switch clause.predicate {
                case .equals(let key, let value): predicate = .equals(key, value)
                case .range(let key, let min, let max): predicate = .range(key, min: min, max: max)
                }
                return clause.occurrence == .require ? .require(predicate) : .exclude(predicate)
            })
        do {
            let ticket = try self.matchmaker.add(
                players: players, mode: request.mode, minPlayers: low, maxPlayers: high,
                stringProperties: request.stringProperties, numberProperties: request.numberProperties, query: query)
            self.ticketPlayers[ticket.id] = players
            if let partyID {
                self.partyTickets[partyID, default: []].append(ticket.id)
                self.ticketParty[ticket.id] = partyID
            }
            self.logger.debug("ticket queued", metadata: ["ticket": "\(ticket.id)", "mode": "\(request.mode)", "players": "\(players.count)"])
            return .success(.ticketQueued(ticketID: ticket.id))
        } catch {
            return .failure(Self.nativeError(error))
        }
    }

    /// CANCEL_TICKET: any player of the ticket may take it out.
    func cancelTicket(_ id: String, for session: Session) -> Result<NativeResponse, NativeError> {
        guard let players = self.ticketPlayers[id], players.contains(session.playerID) else {
            return .failure(NativeError(.noSuchTicket, "no queued ticket \(id)"))
        }
        self.withdraw(id, reason: "cancelled by \(session.playerID)", tellingAllBut: session.playerID)
        return .success(.done)
    }

    /// Takes a ticket out of the queue and tells its players (but `except`) why.
    func withdraw(_ id: String, reason: String, tellingAllBut except: PlayerID?) {
        self.matchmaker.cancel(id)
        self.forget(ticket: id, reason: reason, tellingAllBut: except)
    }

    private func forget(ticket id: String, reason: String?, tellingAllBut except: PlayerID?) {
        guard let players = self.ticketPlayers.removeValue(forKey: id) else { return }
        if let party = self.ticketParty.removeValue(forKey: id) {
            self.partyTickets[party]?.removeAll { $0 == id }
            if self.partyTickets[party]?.isEmpty == true { self.partyTickets[party] = nil }
        }
        guard let reason else { return }
        let message = NativeServerMessage.ticketCancelled(ticketID: id, reason: reason).encoded(allocator: self.allocator)
        for player in players where player != except {
            self.sessions.session(of: player)?.sendReliable(message)
        }
    }

    /// A player's session ended: its tickets go, and the other players of its party tickets hear why.
    func playerGone(_ player: PlayerID) {
        for id in self.matchmaker.cancelAll(for: player) {
            self.forget(ticket: id, reason: "player \(player) left", tellingAllBut: player)
        }
    }

    /// A party's members changed: its queued tickets no longer describe it.
    func partyTicketsVoided(_ partyID: String, reason: String) {
        for id in self.partyTickets[partyID] ?? [] {
            self.withdraw(id, reason: reason, tellingAllBut: nil)
        }
    }

    /// A pass formed groups: each gets a match, its players are seated, and each is told.
    func groupsFormed(_ groups: [MatchmakerGroup]) {
        for group in groups {
            for id in group.withdrawnTicketIDs {
                self.forget(ticket: id, reason: "matched in another game", tellingAllBut: nil)
            }
            let sessions = group.tickets.map { ticket in ticket.players.compactMap { self.sessions.session(of: $0) } }
            for ticket in group.tickets { self.forget(ticket: ticket.id, reason: nil, tellingAllBut: nil) }
            let created = self.createMatch(mode: group.mode, maxPlayers: group.playerCount, label: "", isPrivate: false, isListed: false, for: nil)
            guard case .success(let match) = created else {
                self.logger.error("matchmaker group could not get a match", metadata: ["mode": "\(group.mode)"])
                continue
            }
            var seated: [(ticketID: String, session: Session)] = []
            for (ticket, members) in zip(group.tickets, sessions) {
                for session in members {
                    // Within the limit: a queued ticket counted as a match (``matchesHeld(by:)``).
                    if case .success = self.join(match.id, session: session) {
                        seated.append((ticket.id, session))
                    }
                }
            }
            let info = match.info()
            for (ticketID, session) in seated {
                session.sendReliable(NativeServerMessage.matchmakerMatched(ticketID: ticketID, match: info).encoded(allocator: self.allocator))
                self.welcomed(session, in: match.id)
            }
            self.logger.info("matchmaker formed a match", metadata: ["match": "\(match.id)", "mode": "\(group.mode)", "players": "\(seated.count)"])
        }
    }

    static func nativeError(_ error: MatchmakerError) -> NativeError {
        switch error {
        case .tooManyTickets(let player, let limit):
            return NativeError(.tooManyTickets, "player \(player) has \(limit) tickets queued (--max-tickets-per-player)")
        case .alreadyQueued(let player, let mode):
            return NativeError(.tooManyTickets, "player \(player) already waits for \(mode)")
        case .full(let capacity):
            return NativeError(.queueFull, "the matchmaker holds its maximum of \(capacity) tickets (--max-tickets)")
        case .noPlayers, .duplicatePlayer, .invalidPlayerCounts, .partyTooLarge, .emptyMode, .invalidProperties:
            return NativeError(.badArgument, "\(error)")
        }
    }
}
