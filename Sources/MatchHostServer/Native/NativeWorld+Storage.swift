import Logging
import MatchHostCore
import MatchHostWire

/// What the native world remembers about storing its matches. Loop-confined, like the world.
struct StoredMatchesState {
    /// Each recorded match's players as storage has them, in seat order; an entry lives from
    /// the match's record until its end is written.
    var recordedPlayers: [MatchID: [PlayerID]] = [:]
    /// Real-time matches that a restart abandoned, by player, for a MATCH_ENDED when the
    /// player comes back.
    var abandonedByPlayer: [PlayerID: [MatchID]] = [:]
    /// Restored turn-based matches holding a seat for the player, by player.
    var waitingSeats: [PlayerID: [MatchID]] = [:]
    /// Set when the server stops: turn-based games are then left running in storage.
    var isShuttingDown = false
}

/// What a native world starts from, read from the store before its listener binds (so no
/// player can arrive before it is in place).
struct WorldStartup: Sendable {
    /// The reason stored for, and told to the players of, real-time matches a restart cut short.
    static let restartReason = "server restarted"

    /// Real-time matches that were running when the server stopped, now recorded as abandoned.
    var abandoned: [MatchRecord] = []
    /// The largest match id ever stored.
    var largestMatchID: MatchID = 0
    /// Turn-based games still running, to continue.
    var turnGames: [TurnGameRecord] = []

    /// Records interrupted real-time matches as abandoned and reads what the world continues from.
    static func load(from store: any GameStore) async throws -> WorldStartup {
        let abandoned = try await store.abandonUnfinishedMatches(at: UnixMillis.now(), reason: Self.restartReason)
        return WorldStartup(
            abandoned: abandoned, largestMatchID: try await store.largestMatchID(), turnGames: try await store.activeTurnGames())
    }
}

extension NativeWorld {
    /// Takes over what the last run left: match ids continue after the largest stored, and the
    /// players of matches the restart abandoned are told so when they come back.
    func start(from startup: WorldStartup) {
        self.nextMatchID = max(self.nextMatchID, startup.largestMatchID + 1)
        for match in startup.abandoned {
            for player in match.players {
                self.storedMatches.abandonedByPlayer[player, default: []].append(match.id)
            }
        }
        if !startup.abandoned.isEmpty {
            self.storage.logger.notice(
                "matches interrupted by the restart recorded as abandoned", metadata: ["matches": "\(startup.abandoned.map(\.id))"])
        }
    }

    /// `session`'s player has just authenticated: it hears of the matches a restart abandoned
    /// under it (MATCH_ENDED).
    func sessionStarted(_ session: Session) {
        let player = session.playerID
        for matchID in self.storedMatches.abandonedByPlayer.removeValue(forKey: player) ?? [] {
            let ended = NativeServerMessage.matchEnded(matchID: matchID, reason: "abandoned: \(WorldStartup.restartReason)")
            session.sendReliable(ended.encoded(allocator: self.allocator))
        }
    }

    /// `player` has just taken a seat in `match`: a real-time match is recorded with its first
    /// player and each later one is added; a turn-based game is recorded, with its state, once
    /// play starts.
    func recordSeat(in match: any HostedMatch, player: PlayerID) {
        let id = match.id
        let game = match.mode
        let startedAt = self.storage.now()
        switch match.storageKind {
        case .notStored:
            return
        case .realTime:
            if self.storedMatches.recordedPlayers[id] == nil {
                self.storedMatches.recordedPlayers[id] = [player]
                self.storage.write(
                    for: id, { store in try await store.recordMatchStarted(id: id, game: game, mode: "", players: [player], startedAt: startedAt) },
                    then: self.storage.logFailure("match start not recorded", match: id))
            } else {
                self.storedMatches.recordedPlayers[id]?.append(player)
                self.storage.write(
                    for: id, { store in try await store.addMatchPlayer(matchID: id, playerID: player) },
                    then: self.storage.logFailure("match player not recorded", match: id))
            }
        case .turnBased:
            guard self.storedMatches.recordedPlayers[id] == nil, let state = match.storedTurnState() else { return }
            let players = match.seatPlayers
            self.storedMatches.recordedPlayers[id] = players
            self.storage.write(
                for: id,
                { store in
                    try await store.createTurnGame(matchID: id, game: game, mode: "", players: players, startedAt: startedAt, state: state)
                },
                then: self.storage.logFailure("turn-based game not recorded", match: id))
        }
    }

    /// `match` has ended: its result (or that it was abandoned) is written after everything
    /// else written for it. A turn-based game ended by the server stopping stays running in
    /// storage, to continue after the restart.
    func recordEnd(of match: any HostedMatch) {
        let id = match.id
        guard let players = self.storedMatches.recordedPlayers.removeValue(forKey: id) else { return }
        if match.storageKind == .turnBased, self.storedMatches.isShuttingDown { return }
        let endedAt = self.storage.now()
        switch match.storedEnding ?? .abandoned(reason: "ended") {
        case .finished(let result):
            let lines = resultLines(result, for: players)
            self.storage.write(
                for: id, { store in try await store.recordMatchFinished(matchID: id, endedAt: endedAt, result: lines) },
                then: self.storage.logFailure("match result not recorded", match: id))
        case .abandoned(let reason):
            self.storage.write(
                for: id, { store in try await store.recordMatchAbandoned(matchID: id, endedAt: endedAt, reason: reason) },
                then: self.storage.logFailure("abandoned match not recorded", match: id))
        }
    }
}
