/// A ``GameStore`` held in memory: for tests, and for a server run without a data directory.
///
/// Same semantics, errors and limits as the SQLite store; nothing survives the process.
/// An actor, so calls are serialized and each one is all-or-nothing: it checks everything
/// before it changes anything.
public actor InMemoryGameStore: GameStore {
    private struct TurnState {
        var state: [UInt8]
        var lastMoveAt: UnixMillis
        var moves: [TurnMoveRecord]
    }

    /// The key-value limits.
    public let limits: StorageLimits
    private var players: [PlayerID: PlayerRecord] = [:]
    private var devices: [String: DeviceIdentityRecord] = [:]
    private var tokenGenerationByPlayer: [PlayerID: UInt64] = [:]
    /// Each player's link code, if it holds one.
    private var linkCodeOfPlayer: [PlayerID: LinkCodeRecord] = [:]
    /// Unlinked device ids: their player and when.
    private var unlinkedDevices: [String: (player: PlayerID, at: UnixMillis)] = [:]
    private var externalIdentities: [ExternalIdentity: PlayerID] = [:]
    /// Every ban made, oldest first.
    private var banHistory: [PlayerBanRecord] = []
    private var matches: [MatchID: MatchRecord] = [:]
    /// Running real-time matches' interim results, in seat order as of when each was kept.
    private var interimResults: [MatchID: [PlayerResultRecord]] = [:]
    private var matchIDsReservedThrough: MatchID = 0
    private var turnStates: [MatchID: TurnState] = [:]
    private var statsByGame: [String: [PlayerID: PlayerStats]] = [:]
    private var values: [PlayerID: [String: [UInt8]]] = [:]
    private struct NoticeKey: Hashable {
        var player: PlayerID
        var match: MatchID
    }
    private var keptNotices: [NoticeKey: MatchEndNotice] = [:]

    /// See ``GameStore/outlivesServer``: what the creator says.
    public nonisolated let outlivesServer: Bool

    /// Creates an empty store.
    /// - Parameter outlivesServer: false when the store dies with the one server using it
    ///   (`matchhost serve --store memory`, or a server given no store).
    public init(limits: StorageLimits = StorageLimits(), outlivesServer: Bool = true) {
        self.limits = limits
        self.outlivesServer = outlivesServer
    }

    // MARK: Players

    /// See ``GameStore/createPlayer(id:alias:createdAt:)``.
    public func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) throws {
        guard self.players[id] == nil else { throw GameStoreError.playerExists(id) }
        self.players[id] = PlayerRecord(id: id, alias: alias, createdAt: createdAt, lastSeenAt: createdAt)
    }

    /// See ``GameStore/createPlayerWithDevice(id:alias:deviceID:secretHash:createdAt:)``.
    public func createPlayerWithDevice(
        id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis
    ) throws {
        guard self.players[id] == nil else { throw GameStoreError.playerExists(id) }
        guard self.devices[deviceID] == nil else { throw GameStoreError.deviceExists(deviceID: deviceID) }
        guard self.unlinkedDevices[deviceID] == nil else { throw GameStoreError.deviceUnlinked(deviceID: deviceID) }
        self.players[id] = PlayerRecord(id: id, alias: alias, createdAt: createdAt, lastSeenAt: createdAt)
        self.devices[deviceID] = DeviceIdentityRecord(deviceID: deviceID, playerID: id, secretHash: secretHash, linkedAt: createdAt)
    }

    /// See ``GameStore/player(id:)``.
    public func player(id: PlayerID) -> PlayerRecord? {
        self.players[id]
    }

    /// See ``GameStore/aliases(playerIDs:)``.
    public func aliases(playerIDs: [PlayerID]) -> [PlayerID: String] {
        var aliases: [PlayerID: String] = [:]
        for playerID in playerIDs { aliases[playerID] = self.players[playerID]?.alias }
        return aliases
    }

    /// See ``GameStore/setAlias(playerID:alias:)``.
    public func setAlias(playerID: PlayerID, alias: String) throws {
        guard let player = self.players[playerID] else { throw GameStoreError.unknownPlayer(playerID) }
        guard !player.aliasLocked else { throw GameStoreError.aliasLocked(playerID) }
        self.players[playerID]?.alias = alias
    }

    /// See ``GameStore/setAliasByOperator(playerID:alias:locked:)``.
    public func setAliasByOperator(playerID: PlayerID, alias: String?, locked: Bool?) throws -> PlayerRecord {
        guard var player = self.players[playerID] else { throw GameStoreError.unknownPlayer(playerID) }
        if let alias { player.alias = alias }
        if let locked { player.aliasLocked = locked }
        self.players[playerID] = player
        return player
    }

    /// See ``GameStore/touch(playerID:at:)``.
    public func touch(playerID: PlayerID, at: UnixMillis) throws {
        guard let player = self.players[playerID] else { throw GameStoreError.unknownPlayer(playerID) }
        self.players[playerID]?.lastSeenAt = max(player.lastSeenAt, at)
    }

    /// See ``GameStore/addDeviceIdentity(deviceID:secretHash:playerID:linkedAt:maximumDevices:)``.
    public func addDeviceIdentity(deviceID: String, secretHash: [UInt8], playerID: PlayerID, linkedAt: UnixMillis, maximumDevices: Int) throws {
        guard self.players[playerID] != nil else { throw GameStoreError.unknownPlayer(playerID) }
        guard self.devices[deviceID] == nil else { throw GameStoreError.deviceExists(deviceID: deviceID) }
        guard self.devices(playerID: playerID).count < maximumDevices else {
            throw GameStoreError.tooManyDevices(playerID, limit: maximumDevices)
        }
        self.devices[deviceID] = DeviceIdentityRecord(deviceID: deviceID, playerID: playerID, secretHash: secretHash, linkedAt: linkedAt)
        self.unlinkedDevices[deviceID] = nil
    }

    /// See ``GameStore/deviceIdentity(deviceID:)``.
    public func deviceIdentity(deviceID: String) -> DeviceIdentityRecord? {
        self.devices[deviceID]
    }

    /// See ``GameStore/devices(playerID:)``.
    public func devices(playerID: PlayerID) -> [DeviceIdentityRecord] {
        // Ids compare byte by byte, as SQLite's BINARY collation has them.
        self.devices.values.filter { $0.playerID == playerID }.sorted {
            $0.linkedAt != $1.linkedAt ? $0.linkedAt < $1.linkedAt : $0.deviceID.utf8.lexicographicallyPrecedes($1.deviceID.utf8)
        }
    }

    /// See ``GameStore/removeDeviceIdentity(deviceID:playerID:at:)``.
    public func removeDeviceIdentity(deviceID: String, playerID: PlayerID, at: UnixMillis) throws -> UInt64 {
        guard self.devices[deviceID]?.playerID == playerID else { throw GameStoreError.unknownDevice(deviceID: deviceID) }
        guard self.devices(playerID: playerID).count > 1 else { throw GameStoreError.lastDevice(playerID) }
        return self.forget([deviceID], of: playerID, at: at)
    }

    /// See ``GameStore/removeAllDeviceIdentities(playerID:at:)``.
    public func removeAllDeviceIdentities(playerID: PlayerID, at: UnixMillis) throws -> (generation: UInt64, removed: [String]) {
        guard self.players[playerID] != nil else { throw GameStoreError.unknownPlayer(playerID) }
        let removed = self.devices.values.filter { $0.playerID == playerID }.map(\.deviceID)
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return (self.forget(removed, of: playerID, at: at), removed)
    }

    /// Removes `deviceIDs`, remembers them as unlinked (the player's newest
    /// ``DeviceIdentityRecord/unlinkedKeptPerPlayer``), and moves the player's token generation
    /// on: what every unlink does. Returns the new generation.
    private func forget(_ deviceIDs: [String], of playerID: PlayerID, at: UnixMillis) -> UInt64 {
        for deviceID in deviceIDs {
            self.devices[deviceID] = nil
            self.unlinkedDevices[deviceID] = (playerID, at)
        }
        let kept = self.unlinkedDevices.filter { $0.value.player == playerID }
            // Newest first; equal times by id, in bytes, as SQLite's `device_id DESC`.
            .sorted { $0.value.at != $1.value.at ? $0.value.at > $1.value.at : $1.key.utf8.lexicographicallyPrecedes($0.key.utf8) }
        for (oldest, _) in kept.dropFirst(DeviceIdentityRecord.unlinkedKeptPerPlayer) { self.unlinkedDevices[oldest] = nil }
        let generation = self.tokenGenerationByPlayer[playerID, default: 0] + 1
        self.tokenGenerationByPlayer[playerID] = generation
        self.linkCodeOfPlayer[playerID] = nil
        return generation
    }

    /// See ``GameStore/tokenGenerations()``.
    public func tokenGenerations() -> [PlayerID: UInt64] {
        self.tokenGenerationByPlayer
    }

    /// See ``GameStore/putLinkCode(_:at:)``.
    public func putLinkCode(_ code: LinkCodeRecord, at now: UnixMillis) throws {
        guard self.players[code.playerID] != nil else { throw GameStoreError.unknownPlayer(code.playerID) }
        self.linkCodeOfPlayer = self.linkCodeOfPlayer.filter { $0.value.expiresAt > now && $0.value.digest != code.digest }
        self.linkCodeOfPlayer[code.playerID] = code
    }

    /// See ``GameStore/forgetLinkCode(playerID:)``.
    public func forgetLinkCode(playerID: PlayerID) {
        self.linkCodeOfPlayer[playerID] = nil
    }

    /// See ``GameStore/claimLinkCode(digest:by:)``.
    public func claimLinkCode(digest: [UInt8], by deviceID: String) {
        guard let code = self.linkCodeOfPlayer.values.first(where: { $0.digest == digest }), code.claimedBy == nil else { return }
        self.linkCodeOfPlayer[code.playerID]?.claimedBy = deviceID
    }

    /// See ``GameStore/linkCodes(validAt:)``.
    public func linkCodes(validAt now: UnixMillis) -> [LinkCodeRecord] {
        self.linkCodeOfPlayer.values.filter { $0.expiresAt > now }.sorted { $0.playerID < $1.playerID }
    }

    /// See ``GameStore/setBan(playerID:ban:at:)``.
    public func setBan(playerID: PlayerID, ban: PlayerBan?, at: UnixMillis) throws {
        guard self.players[playerID] != nil else { throw GameStoreError.unknownPlayer(playerID) }
        self.players[playerID]?.ban = ban
        for index in self.banHistory.indices where self.banHistory[index].playerID == playerID && self.banHistory[index].isInForce(at: at) {
            self.banHistory[index].endedEarly = ban == nil ? .lifted(at: at) : .replaced(at: at)
        }
        if let ban { self.banHistory.append(PlayerBanRecord(playerID: playerID, ban: ban)) }
    }

    /// See ``GameStore/banRecords(playerID:limit:)``.
    public func banRecords(playerID: PlayerID?, limit: Int) -> [PlayerBanRecord] {
        self.banHistory.reversed().filter { playerID == nil || $0.playerID == playerID }.prefix(max(0, limit)).map { $0 }
    }

    /// See ``GameStore/bannedPlayers()``.
    public func bannedPlayers() -> [PlayerID: PlayerBan] {
        self.players.compactMapValues(\.ban)
    }

    /// See ``GameStore/createPlayerWithExternalIdentity(id:alias:identity:createdAt:)``.
    public func createPlayerWithExternalIdentity(id: PlayerID, alias: String, identity: ExternalIdentity, createdAt: UnixMillis) throws {
        guard self.players[id] == nil else { throw GameStoreError.playerExists(id) }
        guard self.externalIdentities[identity] == nil else { throw GameStoreError.externalIdentityExists(identity) }
        self.players[id] = PlayerRecord(id: id, alias: alias, createdAt: createdAt, lastSeenAt: createdAt)
        self.externalIdentities[identity] = id
    }

    /// See ``GameStore/player(externalIdentity:)``.
    public func player(externalIdentity identity: ExternalIdentity) -> PlayerRecord? {
        self.externalIdentities[identity].flatMap { self.players[$0] }
    }

    /// See ``GameStore/findOrCreatePlayers(_:at:)``.
    public func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) throws -> [PlayerRecord] {
        // Check first, change after: a refused call changes nothing.
        var created: [ExternalIdentity: PlayerID] = [:]
        for claim in claims where self.externalIdentities[claim.identity] == nil && created[claim.identity] == nil {
            guard self.players[claim.newPlayerID] == nil, !created.values.contains(claim.newPlayerID) else {
                throw GameStoreError.playerExists(claim.newPlayerID)
            }
            created[claim.identity] = claim.newPlayerID
        }
        return claims.map { claim in
            if let id = self.externalIdentities[claim.identity], var player = self.players[id] {
                player.lastSeenAt = max(player.lastSeenAt, at)
                if !player.aliasLocked { player.alias = claim.alias }
                self.players[id] = player
                return player
            }
            let player = PlayerRecord(id: claim.newPlayerID, alias: claim.alias, createdAt: at, lastSeenAt: at)
            self.players[player.id] = player
            self.externalIdentities[claim.identity] = player.id
            return player
        }
    }

    // MARK: Matches

    /// See ``GameStore/recordMatchStarted(id:game:mode:players:startedAt:isPrivate:)``.
    public func recordMatchStarted(
        id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
    ) throws {
        try self.insertMatch(id: id, game: game, mode: mode, kind: .realTime, players: players, startedAt: startedAt, isPrivate: isPrivate)
    }

    /// See ``GameStore/addMatchPlayer(matchID:playerID:)``.
    public func addMatchPlayer(matchID: MatchID, playerID: PlayerID) throws {
        let match = try self.runningMatch(matchID)
        guard !match.players.contains(playerID) else {
            throw GameStoreError.invalidMatch(matchID, reason: "player \(playerID) is in the match already")
        }
        self.matches[matchID]?.players.append(playerID)
    }

    /// See ``GameStore/recordMatchFinished(matchID:endedAt:result:)``.
    @discardableResult
    public func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) throws -> [PlayerStats] {
        let match = try self.runningMatch(matchID)
        return self.finish(match, lines: try result.lines(forMatch: matchID, players: match.players), endedAt: endedAt)
    }

    /// Ends `match` with `lines` (one per player, in seat order), counting them in stats and ratings.
    private func finish(_ match: MatchRecord, lines: [PlayerResultRecord], endedAt: UnixMillis) -> [PlayerStats] {
        var gameStats = self.statsByGame[match.game, default: [:]]
        let before = match.players.map { gameStats[$0] ?? .initial(game: match.game, playerID: $0) }
        let ratings = EloRating.updatedRatings(before.map(\.rating), outcomes: lines.map(\.outcome))
        let after = before.indices.map { before[$0].adding(lines[$0].outcome, rating: ratings[$0]) }
        for stats in after {
            gameStats[stats.playerID] = stats
        }
        self.statsByGame[match.game] = gameStats
        self.interimResults[match.id] = nil
        self.matches[match.id]?.endedAt = endedAt
        self.matches[match.id]?.state = .finished(MatchResultRecord(players: lines))
        return after
    }

    /// See ``GameStore/recordInterimResult(matchID:result:)``.
    public func recordInterimResult(matchID: MatchID, result: MatchResultRecord) throws {
        let match = try self.runningMatch(matchID)
        guard match.kind == .realTime else {
            throw GameStoreError.invalidMatch(matchID, reason: "a turn-based match keeps no interim result")
        }
        self.interimResults[matchID] = try result.lines(forMatch: matchID, players: match.players)
    }

    /// See ``GameStore/recordMatchAbandoned(matchID:endedAt:reason:)``.
    public func recordMatchAbandoned(matchID: MatchID, endedAt: UnixMillis, reason: String) throws {
        _ = try self.runningMatch(matchID)
        self.interimResults[matchID] = nil
        self.matches[matchID]?.endedAt = endedAt
        self.matches[matchID]?.state = .abandoned(reason: reason)
    }

    /// See ``GameStore/endInterruptedMatches(at:reason:notice:)``.
    public func endInterruptedMatches(at: UnixMillis, reason: String, notice: String?) -> [MatchRecord] {
        let running = self.matches.values
            .filter { $0.state == .running && $0.kind == .realTime }
            .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        let signingIn = Set(self.devices.values.map(\.playerID))
        for match in running {
            if let interim = self.interimResults[match.id] {
                let lines = match.players.map { player in
                    interim.first { $0.playerID == player } ?? PlayerResultRecord(playerID: player, outcome: .lost)
                }
                _ = self.finish(match, lines: lines, endedAt: at)
            } else {
                self.matches[match.id]?.endedAt = at
                self.matches[match.id]?.state = .abandoned(reason: reason)
            }
            if let notice {
                self.recordEndNotices(
                    match.players.filter(signingIn.contains).map { MatchEndNotice(playerID: $0, matchID: match.id, reason: notice, endedAt: at) })
            }
        }
        return running.compactMap { self.matches[$0.id] }
    }

    /// See ``GameStore/match(id:)``.
    public func match(id: MatchID) -> MatchRecord? {
        self.matches[id]
    }

    /// See ``GameStore/matchHistory(playerID:limit:readBy:)``.
    public func matchHistory(playerID: PlayerID, limit: Int, readBy reader: MatchHistoryReader) -> [MatchRecord] {
        let played = self.matches.values
            .filter { $0.players.contains(playerID) && $0.isShown(to: reader) }
            .sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }
        return Array(played.prefix(max(0, limit)))
    }

    /// See ``GameStore/largestMatchID()``.
    public func largestMatchID() -> MatchID {
        max(self.matches.keys.max() ?? 0, self.matchIDsReservedThrough)
    }

    /// See ``GameStore/reserveMatchIDs(through:)``.
    public func reserveMatchIDs(through: MatchID) {
        self.matchIDsReservedThrough = max(self.matchIDsReservedThrough, through)
    }

    // MARK: Notices of matches that ended while their players were away

    /// See ``GameStore/recordEndNotices(_:)``.
    public func recordEndNotices(_ notices: [MatchEndNotice]) {
        for notice in notices where self.keptNotices[NoticeKey(player: notice.playerID, match: notice.matchID)] == nil {
            self.keptNotices[NoticeKey(player: notice.playerID, match: notice.matchID)] = notice
        }
    }

    /// See ``GameStore/endNotices()``.
    public func endNotices() -> [MatchEndNotice] {
        self.keptNotices.values.sorted { ($0.endedAt, $0.matchID, $0.playerID) < ($1.endedAt, $1.matchID, $1.playerID) }
    }

    /// See ``GameStore/deleteEndNotices(playerID:matchIDs:)``.
    public func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) {
        for match in matchIDs { self.keptNotices[NoticeKey(player: playerID, match: match)] = nil }
    }

    /// See ``GameStore/deleteEndNotices(endedBefore:)``.
    @discardableResult
    public func deleteEndNotices(endedBefore: UnixMillis) -> Int {
        let old = self.keptNotices.filter { $0.value.endedAt < endedBefore }
        for key in old.keys { self.keptNotices[key] = nil }
        return old.count
    }

    // MARK: Stats and leaderboards

    /// See ``GameStore/stats(game:playerID:)``.
    public func stats(game: String, playerID: PlayerID) -> PlayerStats? {
        self.statsByGame[game]?[playerID]
    }

    /// See ``GameStore/leaderboard(game:limit:)``.
    public func leaderboard(game: String, limit: Int) -> [LeaderboardEntry] {
        let board = self.rankedStats(game: game)
        return self.entries(board, from: 0, count: limit)
    }

    /// See ``GameStore/leaderboard(game:around:count:)``.
    public func leaderboard(game: String, around playerID: PlayerID, count: Int) -> [LeaderboardEntry] {
        let board = self.rankedStats(game: game)
        guard count > 0, let position = board.firstIndex(where: { $0.playerID == playerID }) else { return [] }
        let start = LeaderboardOrder.windowStart(around: position, count: count, total: board.count)
        return self.entries(board, from: start, count: count)
    }

    // MARK: Turn-based games

    /// See ``GameStore/createTurnGame(matchID:game:mode:players:startedAt:state:isPrivate:)``.
    public func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8], isPrivate: Bool
    ) throws {
        try self.insertMatch(
            id: matchID, game: game, mode: mode, kind: .turnBased, players: players, startedAt: startedAt, isPrivate: isPrivate)
        self.turnStates[matchID] = TurnState(state: state, lastMoveAt: startedAt, moves: [])
    }

    /// See ``GameStore/appendMove(matchID:moveNumber:move:state:at:)``.
    public func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) throws {
        let turn = try self.turnState(matchID)
        guard self.matches[matchID]?.state == .running else { throw GameStoreError.matchNotRunning(matchID) }
        let expected = turn.moves.count + 1
        guard moveNumber >= expected else { throw GameStoreError.duplicateMove(matchID, moveNumber: moveNumber) }
        guard moveNumber == expected else {
            throw GameStoreError.moveOutOfOrder(matchID, expected: expected, got: moveNumber)
        }
        self.turnStates[matchID]?.moves.append(TurnMoveRecord(moveNumber: moveNumber, move: move, playedAt: at))
        self.turnStates[matchID]?.state = state
        self.turnStates[matchID]?.lastMoveAt = at
    }

    /// See ``GameStore/replaceTurnState(matchID:state:)``.
    public func replaceTurnState(matchID: MatchID, state: [UInt8]) throws {
        _ = try self.turnState(matchID)
        guard self.matches[matchID]?.state == .running else { throw GameStoreError.matchNotRunning(matchID) }
        self.turnStates[matchID]?.state = state
    }

    /// See ``GameStore/activeTurnGames()``.
    public func activeTurnGames() -> [TurnGameRecord] {
        self.matches.values
            .filter { $0.kind == .turnBased && $0.state == .running }
            .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
            .compactMap { match in
                guard let turn = self.turnStates[match.id] else { return nil }
                return TurnGameRecord(
                    matchID: match.id, game: match.game, mode: match.mode, players: match.players,
                    startedAt: match.startedAt, state: turn.state, moveCount: turn.moves.count, lastMoveAt: turn.lastMoveAt)
            }
    }

    /// See ``GameStore/moveLog(matchID:)``.
    public func moveLog(matchID: MatchID) throws -> [TurnMoveRecord] {
        try self.turnState(matchID).moves
    }

    // MARK: Per-player key-value store

    /// See ``GameStore/readValue(playerID:key:)``.
    public func readValue(playerID: PlayerID, key: String) -> [UInt8]? {
        self.values[playerID]?[key]
    }

    /// See ``GameStore/writeValue(playerID:key:value:)``.
    public func writeValue(playerID: PlayerID, key: String, value: [UInt8]) throws {
        try self.limits.check(key: key)
        try self.limits.check(value: value)
        guard self.players[playerID] != nil else { throw GameStoreError.unknownPlayer(playerID) }
        let held = self.values[playerID, default: [:]]
        guard held[key] != nil || held.count < self.limits.maximumKeysPerPlayer else {
            throw GameStoreError.tooManyKeys(playerID, limit: self.limits.maximumKeysPerPlayer)
        }
        self.values[playerID, default: [:]][key] = value
    }

    /// See ``GameStore/deleteValue(playerID:key:)``.
    @discardableResult
    public func deleteValue(playerID: PlayerID, key: String) -> Bool {
        self.values[playerID]?.removeValue(forKey: key) != nil
    }

    // MARK: Internals

    private func insertMatch(
        id: MatchID, game: String, mode: String, kind: MatchKind, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
    ) throws {
        try MatchRecord.checkNew(id: id, players: players)
        guard self.matches[id] == nil else { throw GameStoreError.matchExists(id) }
        self.matches[id] = MatchRecord(
            id: id, game: game, mode: mode, kind: kind, players: players, startedAt: startedAt, isPrivate: isPrivate)
    }

    private func runningMatch(_ id: MatchID) throws -> MatchRecord {
        guard let match = self.matches[id] else { throw GameStoreError.unknownMatch(id) }
        guard match.state == .running else { throw GameStoreError.matchNotRunning(id) }
        return match
    }

    private func turnState(_ id: MatchID) throws -> TurnState {
        guard let match = self.matches[id] else { throw GameStoreError.unknownMatch(id) }
        guard match.kind == .turnBased, let turn = self.turnStates[id] else { throw GameStoreError.notTurnBased(id) }
        return turn
    }

    private func rankedStats(game: String) -> [PlayerStats] {
        (self.statsByGame[game] ?? [:]).values.sorted(by: LeaderboardOrder.precedes)
    }

    private func entries(_ board: [PlayerStats], from start: Int, count: Int) -> [LeaderboardEntry] {
        guard count > 0, start < board.count else { return [] }
        return board[start..<min(board.count, start + count)].enumerated().map { offset, stats in
            LeaderboardEntry(
                rank: start + offset + 1, playerID: stats.playerID, alias: self.players[stats.playerID]?.alias,
                rating: stats.rating, won: stats.won, played: stats.played)
        }
    }
}
