import MatchHostCore

/// A store that hands every call to ``inner``: a test store overrides only the calls it is about.
protocol ForwardingGameStore: GameStore {
    /// Where the calls go.
    var inner: any GameStore { get }
}

extension ForwardingGameStore {
    var outlivesServer: Bool { self.inner.outlivesServer }
    func player(externalIdentity identity: ExternalIdentity) async throws -> PlayerRecord? {
        try await self.inner.player(externalIdentity: identity)
    }
    func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] {
        try await self.inner.findOrCreatePlayers(claims, at: at)
    }
    func createPlayerWithExternalIdentity(id: PlayerID, alias: String, identity: ExternalIdentity, createdAt: UnixMillis) async throws {
        try await self.inner.createPlayerWithExternalIdentity(id: id, alias: alias, identity: identity, createdAt: createdAt)
    }
    func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws {
        try await self.inner.createPlayer(id: id, alias: alias, createdAt: createdAt)
    }
    func createPlayerWithDevice(id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis) async throws {
        try await self.inner.createPlayerWithDevice(id: id, alias: alias, deviceID: deviceID, secretHash: secretHash, createdAt: createdAt)
    }
    func player(id: PlayerID) async throws -> PlayerRecord? { try await self.inner.player(id: id) }
    func setAlias(playerID: PlayerID, alias: String) async throws { try await self.inner.setAlias(playerID: playerID, alias: alias) }
    func touch(playerID: PlayerID, at: UnixMillis) async throws { try await self.inner.touch(playerID: playerID, at: at) }
    func addDeviceIdentity(deviceID: String, secretHash: [UInt8], playerID: PlayerID) async throws {
        try await self.inner.addDeviceIdentity(deviceID: deviceID, secretHash: secretHash, playerID: playerID)
    }
    func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? { try await self.inner.deviceIdentity(deviceID: deviceID) }
    func recordMatchStarted(id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis) async throws {
        try await self.inner.recordMatchStarted(id: id, game: game, mode: mode, players: players, startedAt: startedAt)
    }
    func addMatchPlayer(matchID: MatchID, playerID: PlayerID) async throws {
        try await self.inner.addMatchPlayer(matchID: matchID, playerID: playerID)
    }
    func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
        try await self.inner.recordMatchFinished(matchID: matchID, endedAt: endedAt, result: result)
    }
    func recordMatchAbandoned(matchID: MatchID, endedAt: UnixMillis, reason: String) async throws {
        try await self.inner.recordMatchAbandoned(matchID: matchID, endedAt: endedAt, reason: reason)
    }
    func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws {
        try await self.inner.recordInterimResult(matchID: matchID, result: result)
    }
    func endInterruptedMatches(at: UnixMillis, reason: String, notice: String?) async throws -> [MatchRecord] {
        try await self.inner.endInterruptedMatches(at: at, reason: reason, notice: notice)
    }
    func recordEndNotices(_ notices: [MatchEndNotice]) async throws { try await self.inner.recordEndNotices(notices) }
    func endNotices() async throws -> [MatchEndNotice] { try await self.inner.endNotices() }
    func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) async throws {
        try await self.inner.deleteEndNotices(playerID: playerID, matchIDs: matchIDs)
    }
    func deleteEndNotices(endedBefore: UnixMillis) async throws -> Int { try await self.inner.deleteEndNotices(endedBefore: endedBefore) }
    func match(id: MatchID) async throws -> MatchRecord? { try await self.inner.match(id: id) }
    func matchHistory(playerID: PlayerID, limit: Int) async throws -> [MatchRecord] {
        try await self.inner.matchHistory(playerID: playerID, limit: limit)
    }
    func largestMatchID() async throws -> MatchID { try await self.inner.largestMatchID() }
    func reserveMatchIDs(through: MatchID) async throws { try await self.inner.reserveMatchIDs(through: through) }
    func stats(game: String, playerID: PlayerID) async throws -> PlayerStats? { try await self.inner.stats(game: game, playerID: playerID) }
    func leaderboard(game: String, limit: Int) async throws -> [LeaderboardEntry] { try await self.inner.leaderboard(game: game, limit: limit) }
    func leaderboard(game: String, around playerID: PlayerID, count: Int) async throws -> [LeaderboardEntry] {
        try await self.inner.leaderboard(game: game, around: playerID, count: count)
    }
    func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8]
    ) async throws {
        try await self.inner.createTurnGame(matchID: matchID, game: game, mode: mode, players: players, startedAt: startedAt, state: state)
    }
    func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) async throws {
        try await self.inner.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at)
    }
    func appendMove(
        matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        self.inner.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at, completion: completion)
    }
    func replaceTurnState(matchID: MatchID, state: [UInt8]) async throws {
        try await self.inner.replaceTurnState(matchID: matchID, state: state)
    }
    func activeTurnGames() async throws -> [TurnGameRecord] { try await self.inner.activeTurnGames() }
    func moveLog(matchID: MatchID) async throws -> [TurnMoveRecord] { try await self.inner.moveLog(matchID: matchID) }
    func readValue(playerID: PlayerID, key: String) async throws -> [UInt8]? { try await self.inner.readValue(playerID: playerID, key: key) }
    func writeValue(playerID: PlayerID, key: String, value: [UInt8]) async throws {
        try await self.inner.writeValue(playerID: playerID, key: key, value: value)
    }
    func deleteValue(playerID: PlayerID, key: String) async throws -> Bool { try await self.inner.deleteValue(playerID: playerID, key: key) }
}

/// Opens once; everyone waiting, and everyone who comes later, goes on.
actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if self.isOpen { return }
        await withCheckedContinuation { self.waiting.append($0) }
    }

    func open() {
        self.isOpen = true
        for continuation in self.waiting { continuation.resume() }
        self.waiting.removeAll()
    }
}

/// Holds every interim result (a Cat Race race's standing) until `release` opens, so that a
/// test sees what the server does while one is being written; `reached` opens when the first
/// arrives.
struct HeldInterimStore: ForwardingGameStore {
    let memory = InMemoryGameStore()
    var inner: any GameStore { self.memory }
    let reached = Gate()
    let release = Gate()

    func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws {
        await self.reached.open()
        await self.release.wait()
        try await self.inner.recordInterimResult(matchID: matchID, result: result)
    }
}
