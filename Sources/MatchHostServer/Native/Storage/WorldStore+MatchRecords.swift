import MatchHostCore

/// How both worlds (native matches and the Cat Race port's races) write a real-time match's
/// record: each write in the match's queue, so the start comes before its players, and they
/// before the ending. Failures are logged; nobody waits on these writes.
extension WorldStore {
    /// Records that real-time match `id` of `game` started with `players` (stored ids, in seat order).
    func recordRealTimeStart(of id: MatchID, game: String, players: [PlayerID]) {
        let startedAt = self.now()
        self.write(
            for: id, { store in try await store.recordMatchStarted(id: id, game: game, mode: "", players: players, startedAt: startedAt) },
            then: self.logFailure("match start not recorded", match: id))
    }

    /// Adds `player` (a stored id) to the recorded match `id`, in its next seat.
    func recordPlayerAdded(_ player: PlayerID, to id: MatchID) {
        self.write(
            for: id, { store in try await store.addMatchPlayer(matchID: id, playerID: player) },
            then: self.logFailure("match player not recorded", match: id))
    }

    /// Records how match `id` ended: with a result, one line for each of `players` (the match's
    /// players as recorded; see ``resultLines(_:for:)``), or abandoned.
    func recordEnding(_ ending: StoredEnding, of id: MatchID, players: [PlayerID]) {
        let endedAt = self.now()
        switch ending {
        case .finished(let result):
            let lines = resultLines(result, for: players)
            self.write(
                for: id, { store in try await store.recordMatchFinished(matchID: id, endedAt: endedAt, result: lines) },
                then: self.logFailure("match result not recorded", match: id))
        case .abandoned(let reason):
            self.write(
                for: id, { store in try await store.recordMatchAbandoned(matchID: id, endedAt: endedAt, reason: reason) },
                then: self.logFailure("abandoned match not recorded", match: id))
        }
    }
}
