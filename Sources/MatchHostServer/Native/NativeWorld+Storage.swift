import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire

/// What the native world remembers about storing its matches. Loop-confined, like the world.
struct StoredMatchesState {
    /// A match's end as a player is to hear it: the match, MATCH_ENDED's reason, and when the
    /// player was first to hear it (for how long it is kept).
    typealias EndTold = (match: MatchID, reason: String, endedAt: UnixMillis)
    /// How often a running server drops what players who never came back left (end notices
    /// older than ``MatchEndNotice/retentionMilliseconds``), in memory and in the store: at
    /// most this often, when a new notice is kept.
    static let endNoticePruneIntervalMilliseconds: Int64 = 3600 * 1000
    /// How many MATCH_ENDEDs kept for a player go out at once; the next ones once the client
    /// has acknowledged those. Thousands kept (a player away for long) must not overflow
    /// `--max-backlog` as the session starts, which would end it, and the next one the same way.
    static let endNoticeBatch = 8

    /// Each recorded match's players as storage has them, in seat order; an entry lives from
    /// the match's record until its end is written.
    var recordedPlayers: [MatchID: [PlayerID]] = [:]
    /// The stored ids of the tutorial clients racing in native Cat Race matches, by the id they
    /// race under, for the match's result; an entry lives as long as `recordedPlayers`'.
    var tutorialStoredIDs: [MatchID: [PlayerID: PlayerID]] = [:]
    /// Matches that ended while their players were away, by player, for a MATCH_ENDED when the
    /// player comes back: real-time matches a restart abandoned, turn-based games stored as
    /// over (ended just before the server stopped), and restored games that ended before
    /// their player came back. Each is also kept in the store (``GameStore/endNotices()``),
    /// until the player is told, so that a second restart does not lose it. What a player who
    /// never comes back leaves is dropped once older than ``MatchEndNotice/retentionMilliseconds``
    /// (at start, and then at most every ``endNoticePruneIntervalMilliseconds``), so that
    /// players who are gone for good do not make it grow without end.
    var endedWhileAway: [PlayerID: [EndTold]] = [:]
    /// When `endedWhileAway` and the store's notices were last pruned.
    var endNoticesPrunedAt = UnixMillis(milliseconds: 0)
    /// MATCH_ENDEDs kept in the store (end notices) and sent to a session whose client has not
    /// acknowledged them yet, by session, with their sequence numbers, in the order sent: those
    /// sent to a session that was away, and those a player heard as its session started. A
    /// stop or a crash before the client reads one loses the session and what waits in it, so
    /// a notice leaves the store only once acknowledged (``endsAcknowledged(by:)``). When the
    /// session ends or is replaced, the ones still unacknowledged go to `endedWhileAway`, for
    /// the player's next session.
    var endsUnacknowledged: [ObjectIdentifier: [(end: EndTold, sequence: UInt64)]] = [:]
    /// Restored turn-based matches holding a seat for the player, by player.
    var waitingSeats: [PlayerID: [MatchID]] = [:]
    /// The players an ended restored match still held a seat for (they never came back), until
    /// its end is announced: they hear of it then, or when they come back.
    var awayAtEnd: [MatchID: [PlayerID]] = [:]
    /// Set when the server stops: turn-based games are then left running in storage.
    var isShuttingDown = false
    /// Ended matches whose players are told how they ended once their result is stored.
    var endsBeingStored: [MatchID: any HostedMatch] = [:]
    /// Match ids reserved in the store up to here (``GameStore/reserveMatchIDs(through:)``).
    var matchIDsReservedThrough: MatchID = 0
    /// Whether a reservation of more ids is being written.
    var isReservingMatchIDs = false
}

/// What a native world starts from, read from the store before its listener binds (so no
/// player can arrive before it is in place).
struct WorldStartup: Sendable {
    /// The reason stored for real-time matches a restart cut short.
    static let restartReason = "server restarted"
    /// What their players are told (MATCH_ENDED), those of a match finished with its races
    /// won before the crash too: it still ended because the server did.
    static let restartNotice = "abandoned(\(restartReason))"

    /// Real-time matches that were running when the server stopped, now ended: abandoned, or
    /// finished with the races won before the crash (``GameStore/endInterruptedMatches(at:reason:notice:)``).
    var interrupted: [MatchRecord] = []
    /// How many match ids a server reserves at a time, ahead of giving them
    /// (``GameStore/reserveMatchIDs(through:)``): ids of matches never stored (relays, a game
    /// waiting for its second player) cannot repeat after a crash. Ids skip what a run reserved
    /// and did not use.
    static let matchIDBlock: MatchID = 1_000

    /// The largest match id ever stored or reserved.
    var largestMatchID: MatchID = 0
    /// Ids reserved through here, the first block of this run's.
    var matchIDsReservedThrough: MatchID = 0
    /// Turn-based games still running, to continue.
    var turnGames: [TurnGameRecord] = []
    /// What players away when their matches ended are still to hear of it: those of the
    /// matches just ended among them.
    var endNotices: [MatchEndNotice] = []
    /// The bans in force at start.
    var bans: [PlayerID: PlayerBan] = [:]
    /// The players whose tokens were ever revoked, and their token generations.
    var tokenGenerations: [PlayerID: UInt64] = [:]
    /// The link codes handed out that have not expired.
    var linkCodes: [LinkCodeRecord] = []

    /// Ends interrupted real-time matches (their players left a notice each), drops notices
    /// older than ``MatchEndNotice/retentionMilliseconds``, and reads what the world continues from.
    /// - Parameter now: the time of day by the world's ``WallClock``.
    static func load(from store: any GameStore, now: UnixMillis) async throws -> WorldStartup {
        let interrupted = try await store.endInterruptedMatches(at: now, reason: Self.restartReason, notice: Self.restartNotice)
        try await store.deleteEndNotices(endedBefore: UnixMillis(milliseconds: now.milliseconds - MatchEndNotice.retentionMilliseconds))
        let largest = try await store.largestMatchID()
        let reserved = largest + Self.matchIDBlock
        try await store.reserveMatchIDs(through: reserved)
        return WorldStartup(
            interrupted: interrupted, largestMatchID: largest, matchIDsReservedThrough: reserved,
            turnGames: try await store.activeTurnGames(), endNotices: try await store.endNotices(),
            bans: try await store.bannedPlayers().filter { $0.value.isInForce(at: now) },
            tokenGenerations: try await store.tokenGenerations(), linkCodes: try await store.linkCodes(validAt: now))
    }
}

/// Why a stored game cannot continue.
private struct RestoreError: Error, CustomStringConvertible {
    let description: String
}

extension NativeWorld {
    /// Why a turn-based game stops at a graceful stop (for the log: its players are not told,
    /// it stays stored as running, and continues after the restart).
    static let savedGameShutdownReason = "server shutting down; the game is saved and continues when the server is back"

    /// Takes over what the last run left: match ids continue after the largest stored, stored
    /// turn-based games continue (their seats held for their players), and the players of
    /// matches the restart abandoned are told so when they come back.
    func start(from startup: WorldStartup) {
        self.nextMatchID = max(self.nextMatchID, startup.largestMatchID + 1)
        self.storedMatches.matchIDsReservedThrough = startup.matchIDsReservedThrough
        self.bans = startup.bans
        self.authenticator.startTokenGenerations(startup.tokenGenerations)
        self.linkCodes.restore(startup.linkCodes, now: self.storage.now())
        // WorldStartup.load has just dropped the old ones.
        self.storedMatches.endNoticesPrunedAt = self.storage.now()
        for notice in startup.endNotices {
            self.storedMatches.endedWhileAway[notice.playerID, default: []].append((notice.matchID, notice.reason, notice.endedAt))
        }
        for game in startup.turnGames {
            self.restore(game)
        }
        if !startup.interrupted.isEmpty {
            var finished: [MatchID] = []
            var abandoned: [MatchID] = []
            for match in startup.interrupted {
                if case .finished = match.state { finished.append(match.id) } else { abandoned.append(match.id) }
            }
            self.storage.logger.notice(
                "matches interrupted by the restart ended",
                metadata: ["abandoned": "\(abandoned)", "finished with their interim result": "\(finished)"])
        }
    }

    /// Continues a stored turn-based game: the match is created from its state, and a seat is
    /// reserved for each player (in seat order), so play resumes at once; the player to move
    /// gets a full turn once it is back (the game holds its timer until then), and a player
    /// not back within the seat grace period leaves the game.
    private func restore(_ game: TurnGameRecord) {
        let id = game.matchID
        let setup = MatchSetup(
            id: id, capacity: game.players.count, label: "", clock: self.clock, seatGrace: self.options.seatGrace,
            logger: self.storage.logger, storage: self.storage)
        let hosted: any HostedMatch
        do {
            guard let restore = self.modes[game.game]?.restore else {
                throw RestoreError(description: "this server has no turn-based mode \"\(game.game)\"")
            }
            hosted = try restore(setup, game.state)
        } catch {
            self.storage.logger.error("stored game cannot continue", metadata: ["match": "\(id)", "error": "\(error)"])
            let endedAt = self.storage.now()
            let reason = "could not be restored: \(error)"
            self.storage.write(
                for: id, { store in try await store.recordMatchAbandoned(matchID: id, endedAt: endedAt, reason: reason) },
                then: self.storage.logFailure("unrestorable game not recorded as abandoned", match: id))
            return
        }
        // Neither its label nor whether it was listed or private is stored, and every seat is
        // its players': no lobby lists it, and it keeps no invite code.
        hosted.isListed = false
        self.register(hosted)
        self.storedMatches.recordedPlayers[id] = game.players
        for player in game.players {
            switch hosted.reserve(player) {
            case .success: self.storedMatches.waitingSeats[player, default: []].append(id)
            case .failure(let refusal):
                self.storage.logger.error("stored player not seated", metadata: ["match": "\(id)", "player": "\(player)", "refusal": "\(refusal)"])
            }
        }
        if hosted.isEnded, let reason = hosted.endReason {
            // Stored as over: it ended (and was told) just before the server stopped, or was
            // stopping. Its result is recorded now; its players hear of the end when they are
            // back, from the notice left here (not again once the result is stored).
            self.storedMatches.awayAtEnd[id] = nil
            for player in game.players {
                self.storedMatches.waitingSeats[player]?.removeAll { $0 == id }
                self.leaveEndNotice(for: player, of: id, reason: reason)
            }
            self.storage.logger.info("turn-based game restored as over", metadata: ["match": "\(id)", "outcome": "\(reason)"])
            return
        }
        self.storage.logger.info("turn-based game restored", metadata: ["match": "\(id)", "moves": "\(game.moveCount)"])
    }

    /// `session`'s player has just authenticated (AUTHENTICATED is out): it takes over the
    /// seats of the session it replaced, if it did, and takes back its seats in restored games
    /// (for each, MATCH_RESUMED, then the game's STATE), and hears of the matches a restart
    /// abandoned under it (MATCH_ENDED).
    func sessionStarted(_ session: Session) {
        let player = session.playerID
        if let (old, handedOver) = self.seatsHandedOver.removeValue(forKey: ObjectIdentifier(session)) {
            for (matchID, entry) in handedOver.sorted(by: { $0.key < $1.key }) {
                guard let match = self.matches[matchID], !match.isEnded else { continue }
                entry.link.session = session
                self.resumeSeat(entry.seat, link: entry.link, in: match)
            }
            // A match that has ended but not told its players yet (its result being stored)
            // tells the newer session.
            for match in self.storedMatches.endsBeingStored.values {
                for link in match.seatLinks where link.session === old { link.session = session }
            }
        }
        for matchID in self.storedMatches.waitingSeats.removeValue(forKey: player) ?? [] {
            guard let match = self.matches[matchID], !match.isEnded,
                match.info().players.contains(where: { $0.playerID == player }),
                let seat = match.seatPlayers.firstIndex(of: player)
            else { continue }
            self.resumeSeat(seat, link: SessionSeatLink(session: session, welcomed: true), in: match)
        }
        self.tellEndsWhileAway(to: session)
    }

    /// Sends `session` the next ``StoredMatchesState/endNoticeBatch`` MATCH_ENDEDs kept for its
    /// player. Each stays in the store until the client acknowledges it: a connection lost, a
    /// stop or a crash before then tells it again.
    private func tellEndsWhileAway(to session: Session) {
        let player = session.playerID
        guard session.isTakingMessages, let waiting = self.storedMatches.endedWhileAway.removeValue(forKey: player) else { return }
        let batch = waiting.prefix(StoredMatchesState.endNoticeBatch)
        if waiting.count > batch.count { self.storedMatches.endedWhileAway[player] = Array(waiting.dropFirst(batch.count)) }
        for end in batch {
            session.sendReliable(NativeServerMessage.matchEnded(matchID: end.match, reason: end.reason).encoded(allocator: self.allocator))
            // Dropped (the backlog overflowed, the session ends): for the next session.
            guard session.isTakingMessages else {
                self.keepInMemory(end, for: player)
                continue
            }
            self.storedMatches.endsUnacknowledged[ObjectIdentifier(session), default: []].append((end, session.outbox.lastSent))
        }
    }

    /// `player`, away, is to hear that match `id` ended (`reason`) when back: kept here and in
    /// the store, after any notice write of the player's before it.
    private func leaveEndNotice(for player: PlayerID, of id: MatchID, reason: String) {
        let end = (match: id, reason: reason, endedAt: self.storage.now())
        self.keepInMemory(end, for: player)
        self.storeEndNotice(for: player, end)
    }

    private func keepInMemory(_ end: StoredMatchesState.EndTold, for player: PlayerID) {
        if self.storedMatches.endedWhileAway[player]?.contains(where: { $0.match == end.match }) != true {
            self.storedMatches.endedWhileAway[player, default: []].append(end)
        }
    }

    /// MATCH_ENDED of match `id` has just been sent to `session`: if its player is away, the end
    /// is stored too, until the client acknowledges it (``endsAcknowledged(by:)``); if the session is
    /// gone or going (the message went nowhere), the player's next session gets it.
    private func keepEnd(of id: MatchID, reason: String, sentTo session: Session) {
        guard session.isTakingMessages else { return self.leaveEndNotice(for: session.playerID, of: id, reason: reason) }
        guard !session.isConnected else { return }
        let end = (match: id, reason: reason, endedAt: self.storage.now())
        self.storedMatches.endsUnacknowledged[ObjectIdentifier(session), default: []].append((end, session.outbox.lastSent))
        self.storeEndNotice(for: session.playerID, end)
    }

    /// `session`'s client has acknowledged messages (an ACK, a RELIABLE frame's, RESUME's last
    /// received): the MATCH_ENDEDs among them are told, and dropped from the store; once all
    /// are, the next batch kept for the player goes out. Called for every acknowledgement, so
    /// it returns at once when no session has a MATCH_ENDED waiting.
    func endsAcknowledged(by session: Session) {
        guard !self.storedMatches.endsUnacknowledged.isEmpty,
            let ends = self.storedMatches.endsUnacknowledged[ObjectIdentifier(session)],
            let first = ends.first, first.sequence <= session.outbox.lastAcknowledged
        else { return }
        let told = ends.prefix { $0.sequence <= session.outbox.lastAcknowledged }
        let unread = ends.dropFirst(told.count)
        self.storedMatches.endsUnacknowledged[ObjectIdentifier(session)] = unread.isEmpty ? nil : Array(unread)
        let player = session.playerID
        let matches = told.map(\.end.match)
        self.storage.write(
            in: .player(player), { store in try await store.deleteEndNotices(playerID: player, matchIDs: matches) },
            then: self.storage.logFailure("notices of ended matches not dropped"))
        if unread.isEmpty { self.tellEndsWhileAway(to: session) }
    }

    /// `session` has ended or been replaced, and with it what its client had not acknowledged:
    /// the MATCH_ENDEDs it did acknowledge are dropped from the store, the others go to the
    /// player's next session (``sessionStarted(_:)``), from here or, after a restart, from the store.
    func endsLeft(by session: Session) {
        // The outbox has forgotten its messages by now, not what the client acknowledged.
        self.endsAcknowledged(by: session)
        for unread in self.storedMatches.endsUnacknowledged.removeValue(forKey: ObjectIdentifier(session)) ?? [] {
            self.keepInMemory(unread.end, for: session.playerID)
        }
    }

    private func storeEndNotice(for player: PlayerID, _ end: StoredMatchesState.EndTold) {
        let notice = MatchEndNotice(playerID: player, matchID: end.match, reason: end.reason, endedAt: end.endedAt)
        self.storage.write(
            in: .player(player), { store in try await store.recordEndNotices([notice]) },
            then: self.storage.logFailure("notice of an ended match not kept", match: end.match))
        self.pruneEndNoticesIfDue(now: end.endedAt)
    }

    /// Drops what players who never came back left, once older than
    /// ``MatchEndNotice/retentionMilliseconds``, from memory and from the store, if the last
    /// time was ``StoredMatchesState/endNoticePruneIntervalMilliseconds`` ago. Notices sent and
    /// waiting for the client's acknowledgement are not looked at here: they last no longer
    /// than their session, and go back to the player's waiting ones if unacknowledged.
    private func pruneEndNoticesIfDue(now: UnixMillis) {
        guard now.milliseconds - self.storedMatches.endNoticesPrunedAt.milliseconds >= StoredMatchesState.endNoticePruneIntervalMilliseconds
        else { return }
        self.storedMatches.endNoticesPrunedAt = now
        let cutoff = UnixMillis(milliseconds: now.milliseconds - MatchEndNotice.retentionMilliseconds)
        var dropped = 0
        for (player, ends) in self.storedMatches.endedWhileAway {
            let kept = ends.filter { $0.endedAt >= cutoff }
            guard kept.count < ends.count else { continue }
            dropped += ends.count - kept.count
            self.storedMatches.endedWhileAway[player] = kept.isEmpty ? nil : kept
        }
        if dropped > 0 {
            self.storage.logger.info("notices of ended matches dropped unread", metadata: ["count": "\(dropped)", "older than days": "\(MatchEndNotice.retentionMilliseconds / 86_400_000)"])
        }
        self.storage.write(
            { store in try await store.deleteEndNotices(endedBefore: cutoff) },
            then: self.storage.logFailure("old notices of ended matches not dropped"))
    }

    /// `link`'s session takes `seat` of `match` (a seat reserved for its player, away, or held
    /// by the session it replaced): MATCH_RESUMED, then the match sees the seat on `link`
    /// (others see PRESENCE reconnected if it was not connected; the game sends its STATE).
    private func resumeSeat(_ seat: Int, link: SessionSeatLink, in match: any HostedMatch) {
        let session = link.session
        self.seats[ObjectIdentifier(session), default: [:]][match.id] = (seat, link)
        // The player is back as of this message (its seat turns connected just below).
        var info = match.info()
        if let index = info.players.firstIndex(where: { $0.playerID == session.playerID }) { info.players[index].presence = .connected }
        session.sendReliable(NativeServerMessage.matchResumed(info).encoded(allocator: self.allocator))
        link.welcome()
        match.back(seat: seat, link: link)
    }

    /// `player` has just taken a seat in `match`: a real-time match is recorded with its first
    /// player and each later one is added; a turn-based game is recorded, with its state, once
    /// play starts.
    func recordSeat(in match: any HostedMatch, player: PlayerID) {
        let id = match.id
        let game = match.mode
        switch match.storageKind {
        case .notStored:
            return
        case .realTime:
            if self.storedMatches.recordedPlayers[id] == nil {
                self.storedMatches.recordedPlayers[id] = [player]
                self.storage.recordRealTimeStart(of: id, game: game, players: [player], isPrivate: match.inviteCode != nil)
            } else {
                self.storedMatches.recordedPlayers[id]?.append(player)
                self.storage.recordPlayerAdded(player, to: id)
            }
        case .turnBased:
            guard self.storedMatches.recordedPlayers[id] == nil, let state = match.storedTurnState() else { return }
            let players = match.seatPlayers
            let startedAt = self.storage.now()
            let isPrivate = match.inviteCode != nil
            self.storedMatches.recordedPlayers[id] = players
            self.storage.write(
                for: id,
                { store in
                    try await store.createTurnGame(
                        matchID: id, game: game, mode: "", players: players, startedAt: startedAt, state: state, isPrivate: isPrivate)
                }
            ) { [weak self] result in
                guard case .failure(let error) = result, let self else { return }
                self.turnGameNotRecorded(id, error: error)
            }
        }
    }

    /// What the players of a turn-based game that could not be recorded are told, in MATCH_ENDED.
    static let notSavedReason = "the game could not be saved"

    /// A turn-based game whose record failed (a full disk) could never store a move: it ends
    /// now, its players told why, rather than refusing every move until a turn runs out. The
    /// moves queued behind the record fail, unacknowledged, and nothing more is written for it.
    private func turnGameNotRecorded(_ id: MatchID, error: any Error) {
        // Per game at debug when the database failed: the outage report says that once for all.
        self.storage.logger.log(
            level: GameStoreError.logLevel(for: error), "turn-based game not recorded: it ends",
            metadata: ["match": "\(id)", "error": "\(error)"])
        self.storedMatches.recordedPlayers[id] = nil
        guard let match = self.matches[id], !match.isEnded else { return }
        match.end(reason: Self.notSavedReason)
    }

    /// A tutorial client (its Cat Race port identity stored as `storedID`) took `seat` of the
    /// native Cat Race `race`: it is recorded under its stored id, and its races won count for it.
    func tutorialRacerIdentified(_ storedID: PlayerID, seat: Int, in race: Match<CatRaceGame>) {
        guard let hosted = self.matches[race.id], !hosted.isEnded, race.seats.indices.contains(seat) else { return }
        self.storedMatches.tutorialStoredIDs[race.id, default: [:]][race.seats[seat].player] = storedID
        self.recordSeat(in: hosted, player: storedID)
    }

    /// The id for a new match (of this world, or of the Cat Race port's sharing its sequence).
    /// Keeps half a block or more of reserved ids ahead: a new block is written when fewer are
    /// left, long before they run out.
    func takeMatchID() -> MatchID {
        let id = self.nextMatchID
        self.nextMatchID += 1
        self.reserveMatchIDsAhead()
        return id
    }

    private func reserveMatchIDsAhead() {
        let block = WorldStartup.matchIDBlock
        guard !self.storedMatches.isReservingMatchIDs, self.nextMatchID + block / 2 > self.storedMatches.matchIDsReservedThrough else {
            return
        }
        let through = max(self.storedMatches.matchIDsReservedThrough, self.nextMatchID) + block
        self.storedMatches.isReservingMatchIDs = true
        let logFailure: (Result<Void, any Error>) -> Void = self.storage.logFailure("match ids not reserved")
        self.storage.write({ store in try await store.reserveMatchIDs(through: through) }) { [weak self] result in
            guard let self else { return }
            self.storedMatches.isReservingMatchIDs = false
            // A failure is tried again with the next match's id.
            guard case .success = result else { return logFailure(result) }
            self.storedMatches.matchIDsReservedThrough = max(self.storedMatches.matchIDsReservedThrough, through)
        }
    }

    /// A round of `match` was won: its standing so far is kept as its interim result
    /// (``WorldStore/recordInterimResult(_:of:players:then:)``) before `announce` tells the
    /// players, so that a crash cannot lose a result they heard of. A match not recorded
    /// announces at once.
    func recordStanding(_ standing: MatchResultRecord, of match: any HostedMatch, then announce: @escaping () -> Void) {
        guard let players = self.storedMatches.recordedPlayers[match.id] else { return announce() }
        let renamed = standing.renamingPlayers(self.storedMatches.tutorialStoredIDs[match.id] ?? [:])
        self.storage.recordInterimResult(renamed, of: match.id, players: players, then: announce)
    }

    /// `match` has ended: its result (or that it was abandoned) is written after everything
    /// else written for it, and its players are told how it ended (``HostedMatch/announceEnd()``):
    /// a result once it is committed (or the database failed it: they cannot be kept in a game
    /// that is over), anything else at once. A turn-based game ended by the server stopping
    /// stays running in storage, to continue after the restart.
    func recordEnd(of match: any HostedMatch) {
        let id = match.id
        let tutorialStoredIDs = self.storedMatches.tutorialStoredIDs.removeValue(forKey: id) ?? [:]
        let recordedPlayers = self.storedMatches.recordedPlayers.removeValue(forKey: id)
        if recordedPlayers != nil, match.storageKind == .turnBased, self.storedMatches.isShuttingDown {
            // Put away, not over: its players, away ones too, get MATCH_RESUMED after the restart.
            self.storedMatches.awayAtEnd[id] = nil
            return match.announceEnd()
        }
        guard let players = recordedPlayers else { return self.announceEnd(of: match) }
        let ending = (match.storedEnding ?? .abandoned(reason: "ended")).renamingPlayers(tutorialStoredIDs)
        guard case .finished = ending else {
            self.storage.recordEnding(ending, of: id, players: players)
            return self.announceEnd(of: match)
        }
        self.storedMatches.endsBeingStored[id] = match
        self.storage.recordEnding(ending, of: id, players: players) { [weak self] _ in
            guard let self, let match = self.storedMatches.endsBeingStored.removeValue(forKey: id) else { return }
            self.announceEnd(of: match)
        }
    }

    /// `match` has ended: the seats it still held for restored players who never came back are
    /// let go, and those players are told how it ended with the others (``announceEnd(of:)``).
    func releaseWaitingSeats(of match: any HostedMatch) {
        var away: [PlayerID] = []
        for player in match.seatPlayers {
            guard let index = self.storedMatches.waitingSeats[player]?.firstIndex(of: match.id) else { continue }
            self.storedMatches.waitingSeats[player]?.remove(at: index)
            if self.storedMatches.waitingSeats[player]?.isEmpty == true { self.storedMatches.waitingSeats[player] = nil }
            away.append(player)
        }
        if !away.isEmpty { self.storedMatches.awayAtEnd[match.id] = away }
    }

    /// Tells `match`'s players how it ended (``HostedMatch/announceEnd()``), and those it held a
    /// seat for who never came back: on their session if they have signed in since, else when
    /// they do (``leaveEndNotice(for:of:reason:)``), after a restart too. A player who is away
    /// has its MATCH_ENDED kept in the store too until it has read it (``keepEnd(of:reason:sentTo:)``).
    func announceEnd(of match: any HostedMatch) {
        match.announceEnd()
        guard let reason = match.endReason else { return }
        // The sessions MATCH_ENDED went to (a seat's presence stops changing when its match
        // ends, so the session, not the seat, says whether its player is here now).
        for session in match.seatedSessions {
            self.keepEnd(of: match.id, reason: reason, sentTo: session)
        }
        guard let away = self.storedMatches.awayAtEnd.removeValue(forKey: match.id) else { return }
        for player in away {
            if let session = self.sessions.session(of: player) {
                session.sendReliable(NativeServerMessage.matchEnded(matchID: match.id, reason: reason).encoded(allocator: self.allocator))
                self.keepEnd(of: match.id, reason: reason, sentTo: session)
            } else {
                self.leaveEndNotice(for: player, of: match.id, reason: reason)
            }
        }
    }

    /// At shutdown: the players of matches whose results are still being written are told now,
    /// before their connections close. The server waits for those writes before it exits.
    func announceEndsBeingStored() {
        let waiting = self.storedMatches.endsBeingStored
        self.storedMatches.endsBeingStored.removeAll()
        for match in waiting.values { self.announceEnd(of: match) }
    }
}
