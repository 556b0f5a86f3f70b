import MatchHostCore
import NIOCore

/// How both worlds (native matches and the Cat Race port's races) write a real-time match's
/// record: each write in the match's queue, so the start comes before its players, and they
/// before the ending. Failures are logged; only the announcement of a result waits on them
/// (``recordEnding(_:of:players:then:)``), never the match's loop.
extension WorldStore {
    /// Records that real-time match `id` of `game` started with `players` (stored ids, in seat
    /// order), private if it is joined by invite code.
    func recordRealTimeStart(of id: MatchID, game: String, players: [PlayerID], isPrivate: Bool) {
        let startedAt = self.now()
        self.write(
            for: id,
            { store in
                try await store.recordMatchStarted(id: id, game: game, mode: "", players: players, startedAt: startedAt, isPrivate: isPrivate)
            }
        ) { [weak self] result in
            guard case .failure(let error) = result, let self else { return }
            if GameStoreError.isStorageFailure(error) { self.matchesNotRecorded.insert(id) }
            self.logFailure("match start not recorded", match: id)(result)
        }
    }

    /// Adds `player` (a stored id) to the recorded match `id`, in its next seat.
    func recordPlayerAdded(_ player: PlayerID, to id: MatchID) {
        self.write(
            for: id, { store in try await store.addMatchPlayer(matchID: id, playerID: player) },
            then: self.logFailure("match player not recorded", match: id))
    }

    /// Keeps match `id`'s result so far (``GameStore/recordInterimResult(matchID:result:)``,
    /// one line for each of `players`, as ``recordEnding(_:of:players:then:)`` writes them),
    /// after everything written for the match before. `done` runs on the loop, once: when the
    /// write is over, whether it succeeded or not (a failure is logged, and the match's ending
    /// is still written when it ends), or after ``longestStandingWait`` if the database has not
    /// answered by then (the write goes on).
    func recordInterimResult(_ result: MatchResultRecord, of id: MatchID, players: [PlayerID], then done: @escaping () -> Void) {
        let lines = resultLines(result, for: players)
        let logFailure: (Result<Void, any Error>) -> Void = self.logFailure("interim result not recorded", match: id)
        // A stalled disk must not hold a race for ever: its players are told, stored or not.
        let once = OnceOnLoop(done)
        let timeout = self.clock.schedule(after: Self.longestStandingWait) { [logger = self.logger] in
            logger.debug("race result told before it was stored: the database is slow", metadata: ["match": "\(id)"])
            once.run()
        }
        self.write(for: id, { store in try await store.recordInterimResult(matchID: id, result: lines) }) { result in
            timeout.cancel()
            logFailure(result)
            once.run()
        }
    }

    /// How long a race's GAME_OVER waits at most for its standing to be stored.
    static let longestStandingWait: TimeAmount = .seconds(5)

    /// Records how match `id` ended: with a result, one line for each of `players` (the match's
    /// players as recorded; see ``resultLines(_:for:)``), or abandoned.
    /// - Parameter done: called on the loop once the write is over, with whether it stored the
    ///   ending (one the database failed is kept and written again later all the same).
    func recordEnding(_ ending: StoredEnding, of id: MatchID, players: [PlayerID], then done: @escaping (Bool) -> Void = { _ in }) {
        let endedAt = self.now()
        switch ending {
        case .finished(let result):
            let lines = resultLines(result, for: players)
            let write = UnstoredEnding(match: id, endedAt: endedAt, what: "match result not recorded") { store in
                _ = try await store.recordMatchFinished(matchID: id, endedAt: endedAt, result: lines)
            }
            self.writeEnding(write, then: done)
        case .abandoned(let reason):
            let write = UnstoredEnding(match: id, endedAt: endedAt, what: "abandoned match not recorded") { store in
                try await store.recordMatchAbandoned(matchID: id, endedAt: endedAt, reason: reason)
            }
            self.writeEnding(write, then: done)
        }
    }

    /// Writes a match's ending. One the database fails (rather than refuses) is kept and
    /// written again later (``retryUnstoredEndings()``): a full disk must not cost the players
    /// the results of the games they finished meanwhile, once it has room again.
    private func writeEnding(_ ending: UnstoredEnding, then stored: @escaping (Bool) -> Void = { _ in }) {
        self.write(for: ending.match, ending.write) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                stored(true)
            case .failure(let error) where GameStoreError.isStorageFailure(error):
                // A match whose start the database failed can never take its ending: keeping
                // it would only crowd out the endings that can still be stored.
                if self.matchesNotRecorded.remove(ending.match) != nil {
                    self.logFailure(ending.what, match: ending.match)(result)
                } else {
                    self.keepForRetry(ending)
                }
                stored(false)
            case .failure:
                self.logFailure(ending.what, match: ending.match)(result)
                self.matchesNotRecorded.remove(ending.match)
                stored(false)
            }
        }
    }

    /// Keeps `ending`, oldest first, at most ``maximumUnstoredEndings`` (beyond, the oldest is
    /// given up, counted, and said in one line at the next retry), and makes sure a retry is due.
    private func keepForRetry(_ ending: UnstoredEnding) {
        let index = self.unstoredEndings.lastIndex { $0.endedAt <= ending.endedAt }.map { $0 + 1 } ?? 0
        self.unstoredEndings.insert(ending, at: index)
        if self.unstoredEndings.count > self.maximumUnstoredEndings {
            self.unstoredEndings.removeFirst()
            self.endingsGivenUp += 1
        }
        self.scheduleEndingRetry()
    }

    private func scheduleEndingRetry() {
        // A round under way schedules the next when it is done, with the delay it decides.
        guard self.endingRetry == nil, !self.isRetryingEndings, !self.endingRetriesStopped, !self.unstoredEndings.isEmpty else {
            return
        }
        self.endingRetry = self.clock.schedule(after: self.endingRetryDelay) { [weak self] in
            guard let self else { return }
            self.endingRetry = nil
            self.retryUnstoredEndings()
        }
    }

    /// Writes the waiting endings again, in the order they ended. While the database keeps
    /// failing them, the rounds come further apart (from ``firstEndingRetryDelay``, doubling,
    /// up to ``longestEndingRetryDelay``); a round that stores them all starts the delays over.
    func retryUnstoredEndings() {
        let waiting = self.unstoredEndings
        self.unstoredEndings.removeAll()
        if self.endingsGivenUp > 0 {
            self.logger.warning(
                "match endings given up: more waited for the database than --max-unstored-results",
                metadata: ["matches": "\(self.endingsGivenUp)"])
            self.endingsGivenUp = 0
        }
        guard !waiting.isEmpty else { return }
        self.isRetryingEndings = true
        let round = EndingRetryRound(remaining: waiting.count)
        for ending in waiting {
            self.writeEnding(ending) { [weak self] stored in
                guard let self else { return }
                round.remaining -= 1
                if stored { round.stored += 1 }
                guard round.remaining == 0 else { return }
                self.isRetryingEndings = false
                if round.stored > 0 {
                    self.logger.notice("match endings the database had failed are stored", metadata: ["matches": "\(round.stored)"])
                }
                self.endingRetryDelay =
                    self.unstoredEndings.isEmpty ? Self.firstEndingRetryDelay : min(self.endingRetryDelay + self.endingRetryDelay, Self.longestEndingRetryDelay)
                self.scheduleEndingRetry()
            }
        }
    }
}

/// How one retry of the waiting endings goes. Loop-confined, with its store.
private final class EndingRetryRound {
    var remaining: Int
    var stored = 0
    init(remaining: Int) { self.remaining = remaining }
}

extension WorldStore {
    /// At shutdown, before the last writes are waited for: no more retries on a timer, and one
    /// last try of the endings still waiting (the disk may have room by now).
    func stopRetryingEndings() {
        self.endingRetriesStopped = true
        self.endingRetry?.cancel()
        self.endingRetry = nil
        self.retryUnstoredEndings()
    }

    /// At shutdown, once no write is in flight: the endings still waiting for the database are
    /// lost with the process, and the log says which. The next start records the real-time
    /// ones as abandoned (a Cat Race match as finished with the races won it had stored); a turn-based game comes back over if its end was stored before
    /// GAME_OVER, in play otherwise.
    func reportUnstoredEndingsAtShutdown() {
        guard !self.unstoredEndings.isEmpty || self.endingsGivenUp > 0 else { return }
        self.logger.warning(
            "match endings the database failed are not stored",
            metadata: ["matches": "\(self.unstoredEndings.map(\.match))", "given up before": "\(self.endingsGivenUp)"])
        self.unstoredEndings.removeAll()
        self.endingsGivenUp = 0
    }
}

extension GameListener {
    /// At shutdown, once the world has made its last writes (the matches it ended): waits
    /// until `storage`'s writes are all done, the last retry of the waiting endings among
    /// them, and logs what the database still failed; so that whoever closes the store next
    /// cuts nothing short, and nothing is lost unsaid.
    func finishStoreWrites(of storage: @escaping @Sendable (World) -> WorldStore?) async {
        try? await self.inspect { world, _ in storage(world)?.stopRetryingEndings() }
        while true {
            let writes = (try? await self.inspect { world, _ in storage(world)?.inFlight ?? [] }) ?? []
            if writes.isEmpty { break }
            for write in writes { try? await write.get() }
        }
        try? await self.inspect { world, _ in storage(world)?.reportUnstoredEndingsAtShutdown() }
    }
}

/// A match's ending that the database failed to store, to write again.
struct UnstoredEnding {
    /// The match.
    var match: MatchID
    /// When it ended (the order they are written again in).
    var endedAt: UnixMillis
    /// What the log says if it is given up.
    var what: String
    /// The write.
    var write: @Sendable (any GameStore) async throws -> Void
}

/// Runs its body the first time ``run()`` is called, never again. Loop-confined.
private final class OnceOnLoop {
    private var body: (() -> Void)?

    init(_ body: @escaping () -> Void) {
        self.body = body
    }

    func run() {
        guard let body = self.body else { return }
        self.body = nil
        body()
    }
}
