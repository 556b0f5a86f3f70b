import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

extension NativeRequest {
    /// Whether the answer comes from the store (profile, history, leaderboard, player values, alias).
    var isAnsweredFromStorage: Bool {
        switch self {
        case .getProfile, .getMatchHistory, .getLeaderboard, .readValue, .writeValue, .deleteValue, .setAlias, .getAliases: return true
        case .createLinkCode, .listDevices, .unlinkDevice: return true
        default: return false
        }
    }

    /// The bytes a write asks the database to store (`--max-value-bytes-per-minute` counts them).
    var storedBytes: Int {
        switch self {
        case .writeValue(let key, let value): return key.utf8.count + value.readableBytes
        case .setAlias(let alias): return alias.utf8.count
        default: return 0
        }
    }
}

extension NativeWorld {
    /// The most matches or leaderboard entries one answer holds.
    static let maximumStoredListLength = 100

    /// The operator's rename and alias lock (``OperatorAliasChange``), for an alias that should
    /// not be shown. A given alias must pass the rules SET_ALIAS applies (else ``NativeError``
    /// `BAD_ARGUMENT` with the reason); a reset gives back the first one (the start of the id,
    /// ``NativeAuthenticator/defaultAlias(of:)``). It is written in the player's queue, after
    /// any SET_ALIAS of the player's before it, and `completion` gets the player as it is once
    /// committed.
    func renameByOperator(_ playerID: PlayerID, _ change: OperatorAliasChange, completion: @escaping (Result<PlayerRecord, any Error>) -> Void) {
        let alias: String?
        switch change.alias {
        case .unchanged: alias = nil
        case .reset: alias = NativeAuthenticator.defaultAlias(of: playerID)
        case .given(let given):
            if let refusal = self.options.aliasRules.refusal(of: given) { return completion(.failure(NativeError(.badArgument, refusal))) }
            alias = given
        }
        let locked = change.locked
        self.storage.write(in: .player(playerID), { store in try await store.setAliasByOperator(playerID: playerID, alias: alias, locked: locked) }) {
            result in
            if case .success(let player) = result {
                self.storage.logger.notice(
                    "player's alias changed by the operator", metadata: ["player": "\(playerID)", "alias": "\(player.alias)", "locked": "\(player.aliasLocked)"])
            }
            completion(result)
        }
    }

    /// Answers a request about what is stored. The store is asked off the loop; the RESPONSE
    /// or REQUEST_ERROR goes out when it answers, so it may come after the answers to requests
    /// sent later (match them by request id). A player's value requests run in the order they
    /// came; profile, history and leaderboard see every result written before they came.
    func answerFromStorage(_ request: NativeRequest, id: UInt32, for session: Session) {
        let asker = session.playerID
        // Every game but the relay has results to count.
        let games = self.modes.names.filter { $0 != RelayGame.mode }
        let call: @Sendable (any GameStore) async throws -> NativeResponse
        // Reads of results wait for results being written; a player's values are one queue.
        var valueQueue: (queue: WorldStore.Queue, writes: Bool)?
        switch request {
        case .getProfile(let playerID):
            let target = playerID.isEmpty ? asker : playerID
            call = { store in try await Self.profile(of: target, games: games, in: store) }
        case .getAliases(let playerIDs):
            guard playerIDs.count <= NativePlayerAlias.maximumPerRequest else {
                let refusal = NativeError(
                    .badArgument, "GET_ALIASES names at most \(NativePlayerAlias.maximumPerRequest) players; this one names \(playerIDs.count)")
                session.sendReliable(NativeServerMessage.requestError(id: id, refusal).encoded(allocator: self.allocator))
                return
            }
            call = { store in
                let known = try await store.aliases(playerIDs: playerIDs)
                var answered = Set<String>()
                return .aliases(
                    playerIDs.compactMap { playerID in
                        guard let alias = known[playerID], answered.insert(playerID).inserted else { return nil }
                        return NativePlayerAlias(playerID: playerID, alias: alias)
                    })
            }
        case .getMatchHistory(let playerID, let limit):
            let target = playerID.isEmpty ? asker : playerID
            let count = Self.listLength(limit, default: 20)
            let reader: MatchHistoryReader = target == asker ? .owner : .otherPlayer(asker)
            call = { store in
                let matches = try await store.matchHistory(playerID: target, limit: count, readBy: reader)
                if matches.isEmpty, try await store.player(id: target) == nil {
                    throw NativeError(.noSuchPlayer, "no player with id \(target)")
                }
                return .matchHistory(playerID: target, matches: matches.map { Self.summary(of: $0, for: target) })
            }
        case .getLeaderboard(let game, let around, let limit):
            let count = Self.listLength(limit, default: 10)
            call = { store in
                let entries =
                    around.isEmpty
                    ? try await store.leaderboard(game: game, limit: count)
                    : try await store.leaderboard(game: game, around: around, count: count)
                return .leaderboard(game: game, entries: entries.map(Self.wire))
            }
        case .readValue(let key):
            guard !key.isEmpty else {
                session.sendReliable(NativeServerMessage.requestError(id: id, Self.error(for: GameStoreError.emptyKey)).encoded(allocator: self.allocator))
                return
            }
            valueQueue = (.player(asker), writes: false)
            call = { store in .value(key: key, value: try await store.readValue(playerID: asker, key: key).map { ByteBuffer(bytes: $0) }) }
        case .writeValue(let key, let value):
            let bytes = Array(value.readableBytesView)
            valueQueue = (.player(asker), writes: true)
            call = { store in
                try await store.writeValue(playerID: asker, key: key, value: bytes)
                return .done
            }
        case .deleteValue(let key):
            valueQueue = (.player(asker), writes: true)
            call = { store in
                try await store.deleteValue(playerID: asker, key: key)
                return .done
            }
        case .setAlias(let alias):
            if let refusal = self.options.aliasRules.refusal(of: alias) {
                session.sendReliable(NativeServerMessage.requestError(id: id, NativeError(.badArgument, refusal)).encoded(allocator: self.allocator))
                return
            }
            // In the player's queue: of two aliases set in a row, the later one stays.
            valueQueue = (.player(asker), writes: true)
            call = { store in
                try await store.setAlias(playerID: asker, alias: alias)
                return .done
            }
        case .createLinkCode, .listDevices, .unlinkDevice:
            self.answerAboutDevices(request, id: id, for: session)
            return
        default:
            return
        }
        self.askStore(id: id, for: session, in: valueQueue, call) { .success($0) }
    }

    /// Runs `call` on the store for one of `session`'s requests, and sends what `answer` makes
    /// of its result (on the loop) as the RESPONSE or REQUEST_ERROR: in `queue` (reading or
    /// writing), or with nil after every write queued before it. A player has at most
    /// `--max-pending-requests` of these waiting; one more is refused at once.
    /// - Parameter settled: told the store's result, success or not, before the answer is made.
    /// - Returns: false when the request was refused at once (the store was not asked).
    @discardableResult
    func askStore<Value: Sendable>(
        id: UInt32, for session: Session, in queue: (queue: WorldStore.Queue, writes: Bool)?,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        settled: @escaping (Result<Value, any Error>) -> Void = { _ in },
        answer: @escaping (Value) -> Result<NativeResponse, any Error>
    ) -> Bool {
        self.askStore(id: id, for: session, in: queue, call, settled: settled) { value, respond in respond(answer(value)) }
    }

    /// ``askStore(id:for:in:_:settled:answer:)`` for an answer that takes more than the result
    /// (another write): `answer` calls its second argument, on the loop, once with the answer.
    /// The request counts against `--max-pending-requests` until then.
    @discardableResult
    func askStore<Value: Sendable>(
        id: UInt32, for session: Session, in queue: (queue: WorldStore.Queue, writes: Bool)?,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        settled: @escaping (Result<Value, any Error>) -> Void = { _ in },
        answer: @escaping (Value, _ respond: @escaping (Result<NativeResponse, any Error>) -> Void) -> Void
    ) -> Bool {
        let key = session.playerID
        let pending = self.storedRequestsPending[key, default: 0]
        guard pending < self.options.maxPendingStoredRequests else {
            let error = NativeError(
                .tooManyRequests,
                "\(pending) stored-data requests are waiting for the database (--max-pending-requests); send more once they are answered")
            session.sendReliable(NativeServerMessage.requestError(id: id, error).encoded(allocator: self.allocator))
            return false
        }
        self.storedRequestsPending[key] = pending + 1
        let respond = { (result: Result<NativeResponse, any Error>) in
            if let waiting = self.storedRequestsPending[key], waiting > 1 {
                self.storedRequestsPending[key] = waiting - 1
            } else {
                self.storedRequestsPending[key] = nil
            }
            let message: NativeServerMessage
            switch result {
            case .success(let response): message = .response(id: id, response)
            case .failure(let error): message = .requestError(id: id, Self.error(for: error))
            }
            // A session that ended meanwhile takes nothing.
            session.sendReliable(message.encoded(allocator: self.allocator))
        }
        let reply = { (result: Result<Value, any Error>) in
            settled(result)
            switch result {
            case .success(let value): answer(value, respond)
            case .failure(let error): respond(.failure(error))
            }
        }
        if let (queue, writes) = queue {
            if writes {
                self.storage.write(in: queue, call, then: reply)
            } else {
                self.storage.read(in: queue, call, then: reply)
            }
        } else {
            self.storage.readAfterQueuedWrites(call, then: reply)
        }
        return true
    }

    private static func listLength(_ limit: UInt8, default length: Int) -> Int {
        limit == 0 ? length : min(Int(limit), Self.maximumStoredListLength)
    }

    private static func profile(of playerID: PlayerID, games: [String], in store: any GameStore) async throws -> NativeResponse {
        guard let player = try await store.player(id: playerID) else {
            throw NativeError(.noSuchPlayer, "no player with id \(playerID)")
        }
        var stats: [NativeGameStats] = []
        for game in games {
            guard let numbers = try await store.stats(game: game, playerID: playerID) else { continue }
            stats.append(
                NativeGameStats(
                    game: game, played: UInt32(clamping: numbers.played), won: UInt32(clamping: numbers.won),
                    lost: UInt32(clamping: numbers.lost), drawn: UInt32(clamping: numbers.drawn), rating: numbers.rating))
        }
        return .profile(
            NativeProfile(
                playerID: player.id, alias: player.alias, createdAt: UInt64(clamping: player.createdAt.milliseconds),
                lastSeenAt: UInt64(clamping: player.lastSeenAt.milliseconds), stats: stats))
    }

    private static func summary(of match: MatchRecord, for playerID: PlayerID) -> NativeMatchSummary {
        var state = NativeStoredMatchState.running
        var outcome = NativeOutcome.none
        var reason = ""
        switch match.state {
        case .running:
            break
        case .abandoned(let why):
            state = .abandoned
            reason = why
        case .finished(let result):
            state = .finished
            switch result.players.first(where: { $0.playerID == playerID })?.outcome {
            case .won?: outcome = .won
            case .lost?: outcome = .lost
            case .draw?: outcome = .draw
            case nil: break
            }
        }
        return NativeMatchSummary(
            matchID: match.id, game: match.game, startedAt: UInt64(clamping: match.startedAt.milliseconds),
            endedAt: UInt64(clamping: match.endedAt?.milliseconds ?? 0), state: state, outcome: outcome, reason: reason,
            players: match.players)
    }

    private static func wire(_ entry: LeaderboardEntry) -> NativeLeaderboardEntry {
        NativeLeaderboardEntry(
            rank: UInt32(clamping: entry.rank), playerID: entry.playerID, alias: entry.alias ?? "", rating: entry.rating,
            won: UInt32(clamping: entry.won), played: UInt32(clamping: entry.played))
    }

    /// The REQUEST_ERROR for what the store threw.
    static func error(for error: any Error) -> NativeError {
        switch error {
        case let error as NativeError:
            return error
        case let error as GameStoreError:
            switch error {
            case .unknownPlayer: return NativeError(.noSuchPlayer, error.description)
            case .emptyKey, .keyTooLong: return NativeError(.invalidKey, error.description)
            case .valueTooLarge: return NativeError(.valueTooLarge, error.description)
            case .tooManyKeys: return NativeError(.tooManyKeys, error.description)
            case .unknownDevice: return NativeError(.noSuchDevice, error.description)
            case .lastDevice: return NativeError(.lastDevice, error.description)
            case .tooManyDevices: return NativeError(.tooManyDevices, error.description)
            case .aliasLocked: return NativeError(.aliasLocked, "the server's operator fixed your alias; it cannot be changed")
            case .storageFailed: return .databaseFailed(.storageUnavailable)
            default: return NativeError(.storageUnavailable, "the server could not use its database (\(error)); try again later")
            }
        default:
            return .databaseFailed(.storageUnavailable)
        }
    }
}

extension NativeError {
    /// The error for a request the database failed (a full disk, an I/O error): what failed
    /// inside is for the operator, whom the server's log tells ("storage failing"), not for
    /// the client.
    static func databaseFailed(_ code: NativeErrorCode) -> NativeError {
        NativeError(code, "the server could not read or write its database; try again later")
    }
}
