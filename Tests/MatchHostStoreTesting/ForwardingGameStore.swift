import MatchHostCore

/// A store that hands every call to ``inner``: a test store overrides only the calls it is about.
public protocol ForwardingGameStore: GameStore {
    /// Where the calls go.
    var inner: any GameStore { get }
}

extension ForwardingGameStore {
    public var outlivesServer: Bool { self.inner.outlivesServer }
    public func player(externalIdentity identity: ExternalIdentity) async throws -> PlayerRecord? {
        try await self.inner.player(externalIdentity: identity)
    }
    public func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] {
        try await self.inner.findOrCreatePlayers(claims, at: at)
    }
    public func createPlayerWithExternalIdentity(id: PlayerID, alias: String, identity: ExternalIdentity, createdAt: UnixMillis) async throws {
        try await self.inner.createPlayerWithExternalIdentity(id: id, alias: alias, identity: identity, createdAt: createdAt)
    }
    public func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws {
        try await self.inner.createPlayer(id: id, alias: alias, createdAt: createdAt)
    }
    public func createPlayerWithDevice(id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis) async throws {
        try await self.inner.createPlayerWithDevice(id: id, alias: alias, deviceID: deviceID, secretHash: secretHash, createdAt: createdAt)
    }
    public func player(id: PlayerID) async throws -> PlayerRecord? { try await self.inner.player(id: id) }
    public func aliases(playerIDs: [PlayerID]) async throws -> [PlayerID: String] { try await self.inner.aliases(playerIDs: playerIDs) }
    public func setAlias(playerID: PlayerID, alias: String) async throws { try await self.inner.setAlias(playerID: playerID, alias: alias) }
    public func setAliasByOperator(playerID: PlayerID, alias: String?, locked: Bool?) async throws -> PlayerRecord {
        try await self.inner.setAliasByOperator(playerID: playerID, alias: alias, locked: locked)
    }
    public func touch(playerID: PlayerID, at: UnixMillis) async throws { try await self.inner.touch(playerID: playerID, at: at) }
    public func addDeviceIdentity(deviceID: String, secretHash: [UInt8], playerID: PlayerID, linkedAt: UnixMillis, maximumDevices: Int) async throws {
        try await self.inner.addDeviceIdentity(
            deviceID: deviceID, secretHash: secretHash, playerID: playerID, linkedAt: linkedAt, maximumDevices: maximumDevices)
    }
    public func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? { try await self.inner.deviceIdentity(deviceID: deviceID) }
    public func devices(playerID: PlayerID) async throws -> [DeviceIdentityRecord] { try await self.inner.devices(playerID: playerID) }
    public func removeDeviceIdentity(deviceID: String, playerID: PlayerID, at: UnixMillis) async throws -> UInt64 {
        try await self.inner.removeDeviceIdentity(deviceID: deviceID, playerID: playerID, at: at)
    }
    public func removeAllDeviceIdentities(playerID: PlayerID, at: UnixMillis) async throws -> (generation: UInt64, removed: [String]) {
        try await self.inner.removeAllDeviceIdentities(playerID: playerID, at: at)
    }
    public func tokenGenerations() async throws -> [PlayerID: UInt64] { try await self.inner.tokenGenerations() }
    public func putLinkCode(_ code: LinkCodeRecord, at now: UnixMillis) async throws { try await self.inner.putLinkCode(code, at: now) }
    public func forgetLinkCode(playerID: PlayerID) async throws { try await self.inner.forgetLinkCode(playerID: playerID) }
    public func claimLinkCode(digest: [UInt8], by deviceID: String) async throws {
        try await self.inner.claimLinkCode(digest: digest, by: deviceID)
    }
    public func linkCodes(validAt now: UnixMillis) async throws -> [LinkCodeRecord] { try await self.inner.linkCodes(validAt: now) }
    public func setBan(playerID: PlayerID, ban: PlayerBan?, at: UnixMillis) async throws {
        try await self.inner.setBan(playerID: playerID, ban: ban, at: at)
    }
    public func banRecords(playerID: PlayerID?, limit: Int) async throws -> [PlayerBanRecord] {
        try await self.inner.banRecords(playerID: playerID, limit: limit)
    }
    public func bannedPlayers() async throws -> [PlayerID: PlayerBan] { try await self.inner.bannedPlayers() }
    public func recordMatchStarted(
        id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
    ) async throws {
        try await self.inner.recordMatchStarted(id: id, game: game, mode: mode, players: players, startedAt: startedAt, isPrivate: isPrivate)
    }
    public func addMatchPlayer(matchID: MatchID, playerID: PlayerID) async throws {
        try await self.inner.addMatchPlayer(matchID: matchID, playerID: playerID)
    }
    public func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
        try await self.inner.recordMatchFinished(matchID: matchID, endedAt: endedAt, result: result)
    }
    public func recordMatchAbandoned(matchID: MatchID, endedAt: UnixMillis, reason: String) async throws {
        try await self.inner.recordMatchAbandoned(matchID: matchID, endedAt: endedAt, reason: reason)
    }
    public func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws {
        try await self.inner.recordInterimResult(matchID: matchID, result: result)
    }
    public func endInterruptedMatches(at: UnixMillis, reason: String, notice: String?) async throws -> [MatchRecord] {
        try await self.inner.endInterruptedMatches(at: at, reason: reason, notice: notice)
    }
    public func recordEndNotices(_ notices: [MatchEndNotice]) async throws { try await self.inner.recordEndNotices(notices) }
    public func endNotices() async throws -> [MatchEndNotice] { try await self.inner.endNotices() }
    public func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) async throws {
        try await self.inner.deleteEndNotices(playerID: playerID, matchIDs: matchIDs)
    }
    public func deleteEndNotices(endedBefore: UnixMillis) async throws -> Int { try await self.inner.deleteEndNotices(endedBefore: endedBefore) }
    public func match(id: MatchID) async throws -> MatchRecord? { try await self.inner.match(id: id) }
    public func matchHistory(playerID: PlayerID, limit: Int, readBy reader: MatchHistoryReader) async throws -> [MatchRecord] {
        try await self.inner.matchHistory(playerID: playerID, limit: limit, readBy: reader)
    }
    public func largestMatchID() async throws -> MatchID { try await self.inner.largestMatchID() }
    public func reserveMatchIDs(through: MatchID) async throws { try await self.inner.reserveMatchIDs(through: through) }
    public func stats(game: String, playerID: PlayerID) async throws -> PlayerStats? { try await self.inner.stats(game: game, playerID: playerID) }
    public func leaderboard(game: String, limit: Int) async throws -> [LeaderboardEntry] { try await self.inner.leaderboard(game: game, limit: limit) }
    public func leaderboard(game: String, around playerID: PlayerID, count: Int) async throws -> [LeaderboardEntry] {
        try await self.inner.leaderboard(game: game, around: playerID, count: count)
    }
    public func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8], isPrivate: Bool
    ) async throws {
        try await self.inner.createTurnGame(
            matchID: matchID, game: game, mode: mode, players: players, startedAt: startedAt, state: state, isPrivate: isPrivate)
    }
    public func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) async throws {
        try await self.inner.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at)
    }
    public func appendMove(
        matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        self.inner.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at, completion: completion)
    }
    public func replaceTurnState(matchID: MatchID, state: [UInt8]) async throws {
        try await self.inner.replaceTurnState(matchID: matchID, state: state)
    }
    public func activeTurnGames() async throws -> [TurnGameRecord] { try await self.inner.activeTurnGames() }
    public func moveLog(matchID: MatchID) async throws -> [TurnMoveRecord] { try await self.inner.moveLog(matchID: matchID) }
    public func readValue(playerID: PlayerID, key: String) async throws -> [UInt8]? { try await self.inner.readValue(playerID: playerID, key: key) }
    public func writeValue(playerID: PlayerID, key: String, value: [UInt8]) async throws {
        try await self.inner.writeValue(playerID: playerID, key: key, value: value)
    }
    public func deleteValue(playerID: PlayerID, key: String) async throws -> Bool { try await self.inner.deleteValue(playerID: playerID, key: key) }
}

/// Opens (and may close again); everyone waiting when it opens, and everyone who comes while it is open, goes on.
public actor Gate {
    /// A closed gate.
    public init() {}

    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Returns once the gate is open.
    public func wait() async {
        if self.isOpen { return }
        await withCheckedContinuation { self.waiting.append($0) }
    }

    /// Lets everyone through, now and later.
    public func open() {
        self.isOpen = true
        for continuation in self.waiting { continuation.resume() }
        self.waiting.removeAll()
    }

    /// Closes the gate again: who comes from now on waits for the next ``open()``.
    public func close() {
        self.isOpen = false
    }
}
