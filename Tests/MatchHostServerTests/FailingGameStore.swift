import MatchHostCore

/// A store whose calls fail as a broken disk would: for what the server does then. The reads a
/// server starts with succeed (with nothing stored) unless `failsAtStartup`.
struct FailingGameStore: GameStore {
    var reason = "disk on fire"
    var failsAtStartup = false
    var outlivesServer: Bool { true }

    private var failure: GameStoreError { .storageFailed(reason: self.reason) }

    func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws { throw self.failure }
    func createPlayerWithDevice(id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis) async throws {
        throw self.failure
    }
    func player(id: PlayerID) async throws -> PlayerRecord? { throw self.failure }
    func aliases(playerIDs: [PlayerID]) async throws -> [PlayerID: String] { throw self.failure }
    func setAlias(playerID: PlayerID, alias: String) async throws { throw self.failure }
    func setAliasByOperator(playerID: PlayerID, alias: String?, locked: Bool?) async throws -> PlayerRecord { throw self.failure }
    func touch(playerID: PlayerID, at: UnixMillis) async throws { throw self.failure }
    func addDeviceIdentity(deviceID: String, secretHash: [UInt8], playerID: PlayerID, linkedAt: UnixMillis, maximumDevices: Int) async throws {
        throw self.failure
    }
    func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? { throw self.failure }
    func devices(playerID: PlayerID) async throws -> [DeviceIdentityRecord] { throw self.failure }
    func removeDeviceIdentity(deviceID: String, playerID: PlayerID, at: UnixMillis) async throws -> UInt64 { throw self.failure }
    func removeAllDeviceIdentities(playerID: PlayerID, at: UnixMillis) async throws -> (generation: UInt64, removed: [String]) {
        throw self.failure
    }
    func tokenGenerations() async throws -> [PlayerID: UInt64] {
        if self.failsAtStartup { throw self.failure }
        return [:]
    }
    func putLinkCode(_ code: LinkCodeRecord, at now: UnixMillis) async throws { throw self.failure }
    func forgetLinkCode(playerID: PlayerID) async throws { throw self.failure }
    func claimLinkCode(digest: [UInt8], by deviceID: String) async throws { throw self.failure }
    func linkCodes(validAt now: UnixMillis) async throws -> [LinkCodeRecord] {
        if self.failsAtStartup { throw self.failure }
        return []
    }
    func setBan(playerID: PlayerID, ban: PlayerBan?, at: UnixMillis) async throws { throw self.failure }
    func banRecords(playerID: PlayerID?, limit: Int) async throws -> [PlayerBanRecord] { throw self.failure }
    func bannedPlayers() async throws -> [PlayerID: PlayerBan] {
        if self.failsAtStartup { throw self.failure }
        return [:]
    }
    func createPlayerWithExternalIdentity(id: PlayerID, alias: String, identity: ExternalIdentity, createdAt: UnixMillis) async throws {
        throw self.failure
    }
    func player(externalIdentity identity: ExternalIdentity) async throws -> PlayerRecord? { throw self.failure }
    func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] { throw self.failure }
    func recordMatchStarted(
        id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
    ) async throws {
        throw self.failure
    }
    func addMatchPlayer(matchID: MatchID, playerID: PlayerID) async throws { throw self.failure }
    func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
        throw self.failure
    }
    func recordMatchAbandoned(matchID: MatchID, endedAt: UnixMillis, reason: String) async throws { throw self.failure }
    func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws { throw self.failure }
    func endInterruptedMatches(at: UnixMillis, reason: String, notice: String?) async throws -> [MatchRecord] {
        if self.failsAtStartup { throw self.failure }
        return []
    }
    func recordEndNotices(_ notices: [MatchEndNotice]) async throws { throw self.failure }
    func endNotices() async throws -> [MatchEndNotice] {
        if self.failsAtStartup { throw self.failure }
        return []
    }
    func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) async throws { throw self.failure }
    func deleteEndNotices(endedBefore: UnixMillis) async throws -> Int {
        if self.failsAtStartup { throw self.failure }
        return 0
    }
    func match(id: MatchID) async throws -> MatchRecord? { throw self.failure }
    func matchHistory(playerID: PlayerID, limit: Int, readBy reader: MatchHistoryReader) async throws -> [MatchRecord] { throw self.failure }
    func largestMatchID() async throws -> MatchID {
        if self.failsAtStartup { throw self.failure }
        return 0
    }
    func reserveMatchIDs(through: MatchID) async throws {
        if self.failsAtStartup { throw self.failure }
    }
    func stats(game: String, playerID: PlayerID) async throws -> PlayerStats? { throw self.failure }
    func leaderboard(game: String, limit: Int) async throws -> [LeaderboardEntry] { throw self.failure }
    func leaderboard(game: String, around playerID: PlayerID, count: Int) async throws -> [LeaderboardEntry] { throw self.failure }
    func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8], isPrivate: Bool
    ) async throws { throw self.failure }
    func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) async throws {
        throw self.failure
    }
    func replaceTurnState(matchID: MatchID, state: [UInt8]) async throws { throw self.failure }
    func activeTurnGames() async throws -> [TurnGameRecord] {
        if self.failsAtStartup { throw self.failure }
        return []
    }
    func moveLog(matchID: MatchID) async throws -> [TurnMoveRecord] { throw self.failure }
    func readValue(playerID: PlayerID, key: String) async throws -> [UInt8]? { throw self.failure }
    func writeValue(playerID: PlayerID, key: String, value: [UInt8]) async throws { throw self.failure }
    func deleteValue(playerID: PlayerID, key: String) async throws -> Bool { throw self.failure }
}
