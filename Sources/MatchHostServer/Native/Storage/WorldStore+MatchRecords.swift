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
            self.writeEnding(UnstoredEnding(match: id, what: "match result not recorded") { store in
                _ = try await store.recordMatchFinished(matchID: id, endedAt: endedAt, result: lines)
            })
        case .abandoned(let reason):
            self.writeEnding(UnstoredEnding(match: id, what: "abandoned match not recorded") { store in
                try await store.recordMatchAbandoned(matchID: id, endedAt: endedAt, reason: reason)
            })
        }
    }

    /// Writes a match's ending. One the database fails (rather than refuses) is kept, and
    /// written again after a later write succeeds (``retryUnstoredEndings()``): a full disk
    /// must not cost the players the results of the games they finished meanwhile, once it has
    /// room again. At most ``maximumUnstoredEndings`` wait; beyond, the oldest is given up.
    private func writeEnding(_ ending: UnstoredEnding) {
        self.write(for: ending.match, ending.write) { [weak self] result in
            guard case .failure(let error) = result, let self else { return }
            guard StorageOutageMonitor.isDatabaseFailure(error) else {
                return self.logFailure(ending.what, match: ending.match)(result)
            }
            self.unstoredEndings.append(ending)
            if self.unstoredEndings.count > self.maximumUnstoredEndings {
                let dropped = self.unstoredEndings.removeFirst()
                self.logger.warning(
                    "\(dropped.what): too many endings wait for the database", metadata: ["match": "\(dropped.match)"])
            }
        }
    }

    /// A write has just succeeded: the endings the database failed are written again, at most
    /// once every ``endingRetryInterval`` (a write that succeeds does not prove they will).
    func retryUnstoredEndings() {
        let now = self.now()
        guard !self.unstoredEndings.isEmpty, now.milliseconds - self.lastEndingRetry.milliseconds >= Self.endingRetryInterval else {
            return
        }
        self.lastEndingRetry = now
        let waiting = self.unstoredEndings
        self.unstoredEndings.removeAll()
        self.logger.notice("writing again the match endings the database failed", metadata: ["matches": "\(waiting.count)"])
        for ending in waiting { self.writeEnding(ending) }
    }
}

extension WorldStore {
    /// At shutdown, once the writes in flight are done: the endings still waiting for the
    /// database are lost with the process, and the log says which.
    func reportUnstoredEndingsAtShutdown() {
        guard !self.unstoredEndings.isEmpty else { return }
        self.logger.warning(
            "match endings the database failed are not stored (the next start records running real-time matches as abandoned)",
            metadata: ["matches": "\(self.unstoredEndings.map(\.match))"])
        self.unstoredEndings.removeAll()
    }
}

/// A match's ending that the database failed to store, to write again.
struct UnstoredEnding {
    /// The match.
    var match: MatchID
    /// What the log says if it is given up.
    var what: String
    /// The write.
    var write: @Sendable (any GameStore) async throws -> Void
}
