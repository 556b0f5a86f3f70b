/// What the server keeps across restarts: players and their devices, matches and their
/// results, per-game stats and ratings, turn-based games' state and move log, and a small
/// key-value store per player.
///
/// Every call is `async`: an implementation does its work off the caller's thread (the
/// SQLite one on its database's own queues), so an event loop that awaits a call is never
/// blocked by disk I/O. When a call returns, what it wrote is committed; the server sends
/// an acknowledgement (credentials, a move's confirmation) only after that. A call that
/// throws has changed nothing: each call is one transaction.
///
/// Errors the caller can cause are ``GameStoreError`` values; a failure of the storage
/// itself is ``GameStoreError/storageFailed(reason:)``. Cancelling the task that awaits a
/// write may interrupt it (`CancellationError`, or a storage failure when SQLite was
/// interrupted mid-statement; either way rolled back), so a write whose outcome must be
/// acknowledged should run in a task nobody cancels.
public protocol GameStore: Sendable {
    /// Whether what the store holds is there for the next server that opens it (a database
    /// file; a memory store that a test hands to one server after another), so that a
    /// turn-based game put away at a graceful stop can continue after the restart.
    var outlivesServer: Bool { get }

    // MARK: Players

    /// Creates a player; `lastSeenAt` starts at `createdAt`.
    /// Throws ``GameStoreError/playerExists(_:)``.
    func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws

    /// Creates a player and its first device identity in one transaction, so a device is
    /// never stored without its player nor a player without the device that created it.
    /// The server sends the device its credentials only after this returns.
    /// Throws ``GameStoreError/playerExists(_:)``, ``GameStoreError/deviceExists(deviceID:)``, or
    /// ``GameStoreError/deviceUnlinked(deviceID:)`` for a device id removed from its player
    /// (``removeDeviceIdentity(deviceID:playerID:at:)``; one of the last
    /// ``DeviceIdentityRecord/unlinkedKeptPerPlayer`` of its player).
    func createPlayerWithDevice(
        id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis
    ) async throws

    /// The player with `id`, if any.
    func player(id: PlayerID) async throws -> PlayerRecord?

    /// The aliases of those of `playerIDs` that exist, by id: one read for a match's players.
    func aliases(playerIDs: [PlayerID]) async throws -> [PlayerID: String]

    /// Changes a player's alias at the player's own request (SET_ALIAS). Throws
    /// ``GameStoreError/unknownPlayer(_:)``, or ``GameStoreError/aliasLocked(_:)`` while the
    /// operator's lock holds (checked in the same transaction as the write).
    func setAlias(playerID: PlayerID, alias: String) async throws

    /// The operator's change of a player's alias and of its lock, in one transaction: `alias`
    /// (nil: kept as it is) and `locked` (nil: kept). While locked, the player's own
    /// ``setAlias(playerID:alias:)`` is refused. Returns the player as it is then. Throws
    /// ``GameStoreError/unknownPlayer(_:)``.
    func setAliasByOperator(playerID: PlayerID, alias: String?, locked: Bool?) async throws -> PlayerRecord

    /// Marks the player as seen at `at`; an earlier time than the stored one is ignored, so
    /// calls that overtake each other cannot move it back. Throws ``GameStoreError/unknownPlayer(_:)``.
    func touch(playerID: PlayerID, at: UnixMillis) async throws

    /// Adds another device to an existing player (a device linked to the account), unless
    /// the player has `maximumDevices` already. A device id unlinked before may be linked again.
    /// Throws ``GameStoreError/unknownPlayer(_:)``, ``GameStoreError/deviceExists(deviceID:)``
    /// or ``GameStoreError/tooManyDevices(_:limit:)``.
    func addDeviceIdentity(deviceID: String, secretHash: [UInt8], playerID: PlayerID, linkedAt: UnixMillis, maximumDevices: Int) async throws

    /// The device with `deviceID`, if any: its player and the hash of its secret.
    func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord?

    /// The player's devices, the longest linked first (equal times: by device id).
    func devices(playerID: PlayerID) async throws -> [DeviceIdentityRecord]

    /// Removes one of the player's devices, and in the same transaction revokes every session
    /// token the player holds and forgets its link code: returns the player's new token generation (one more than
    /// before; see ``tokenGenerations()``). The device id is remembered as unlinked (the last
    /// ``DeviceIdentityRecord/unlinkedKeptPerPlayer`` of the player), so that it cannot come
    /// back as a new player. Throws ``GameStoreError/unknownDevice(deviceID:)`` (the player has
    /// no such device) or ``GameStoreError/lastDevice(_:)``.
    func removeDeviceIdentity(deviceID: String, playerID: PlayerID, at: UnixMillis) async throws -> UInt64

    /// Removes every device of the player, its only one too, and in the same transaction
    /// revokes every session token it holds: the operator taking an account back from whoever
    /// holds its devices (its link code goes too). Returns the player's new token generation and the device ids removed,
    /// in byte order; each is remembered as unlinked, as by
    /// ``removeDeviceIdentity(deviceID:playerID:at:)``. A player with no device is left with
    /// none, its tokens revoked all the same. Throws ``GameStoreError/unknownPlayer(_:)``.
    func removeAllDeviceIdentities(playerID: PlayerID, at: UnixMillis) async throws -> (generation: UInt64, removed: [String])

    /// The token generation of every player whose tokens were ever revoked (the others are at
    /// 0): a token names the generation it was issued in, and one of an older generation is no
    /// longer accepted. What a server holds to check tokens without a read.
    func tokenGenerations() async throws -> [PlayerID: UInt64]

    /// Stores the link code just issued to its player, replacing the one the player held, and
    /// forgets every code that has expired at `now`: committed before the code is handed out,
    /// so that it links after a restart as before. Throws ``GameStoreError/unknownPlayer(_:)``.
    func putLinkCode(_ code: LinkCodeRecord, at now: UnixMillis) async throws

    /// Forgets the player's link code, if it holds one: every unlink of its devices revokes it,
    /// a refused one too (a committed unlink forgets it in its own transaction as well).
    func forgetLinkCode(playerID: PlayerID) async throws

    /// Records that `deviceID` claimed the code whose digest is `digest`, unless another device
    /// did first; a code no longer stored (replaced, or forgotten by an unlink) is left alone.
    func claimLinkCode(digest: [UInt8], by deviceID: String) async throws

    /// Every stored link code that has not expired at `now`: what a server holds to link
    /// devices after a restart.
    func linkCodes(validAt now: UnixMillis) async throws -> [LinkCodeRecord]

    /// Bans a player (`ban`, replacing a ban it has) or lifts its ban (nil), at `at`. The ban
    /// it had, if still in force at `at`, stays in ``banRecords(playerID:limit:)`` as lifted or
    /// replaced then. Throws ``GameStoreError/unknownPlayer(_:)``.
    func setBan(playerID: PlayerID, ban: PlayerBan?, at: UnixMillis) async throws

    /// Every ban ever made, of `playerID` (nil: of every player), the latest made first (the
    /// order they were made in, whatever their ``PlayerBan/since`` says: a clock set back does
    /// not reorder them), at most `limit`: the operator's record, with the bans lifted,
    /// replaced or ended too.
    func banRecords(playerID: PlayerID?, limit: Int) async throws -> [PlayerBanRecord]

    /// Every stored ban, ended ones too (``PlayerBan/isInForce(at:)`` tells them apart): what a
    /// server holds to refuse banned players' sign-ins without a read.
    func bannedPlayers() async throws -> [PlayerID: PlayerBan]

    /// Creates a player and the external identity it is known by, in one transaction, so an
    /// identity is never stored without its player. Such a player has no device: nothing but
    /// that identity ever signs in as it.
    /// Throws ``GameStoreError/playerExists(_:)`` or ``GameStoreError/externalIdentityExists(_:)``.
    func createPlayerWithExternalIdentity(
        id: PlayerID, alias: String, identity: ExternalIdentity, createdAt: UnixMillis
    ) async throws

    /// The player `identity` signs in as, if the identity is stored.
    func player(externalIdentity identity: ExternalIdentity) async throws -> PlayerRecord?

    /// The player each claim's identity signs in as, in claim order, all in one transaction (a
    /// burst of first contacts costs one commit): a stored identity's player is marked seen at
    /// `at` and takes the claim's alias; an identity not stored yet gets a new player (the
    /// claim's id and alias, created at `at`) and the identity. An identity claimed twice gets
    /// one player, with the alias of its last claim.
    /// Throws ``GameStoreError/playerExists(_:)`` when a new player's id is taken.
    func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord]

    // MARK: Matches

    /// Records that a real-time match started (turn-based ones start with
    /// ``createTurnGame(matchID:game:mode:players:startedAt:state:isPrivate:)``), private if
    /// it is joined by invite code. Players need no stored account. Throws
    /// ``GameStoreError/matchExists(_:)`` or ``GameStoreError/invalidMatch(_:reason:)``.
    func recordMatchStarted(
        id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
    ) async throws

    /// Adds a player to a running match, in the next seat: for games players may join after
    /// the start (a real-time match is recorded when its first player takes a seat).
    /// Throws ``GameStoreError/unknownMatch(_:)``, ``GameStoreError/matchNotRunning(_:)`` or
    /// ``GameStoreError/invalidMatch(_:reason:)`` (the player is in the match already).
    func addMatchPlayer(matchID: MatchID, playerID: PlayerID) async throws

    /// Records a match's result and, in the same transaction, each player's stats and rating
    /// in the match's game (``EloRating``). Ends a turn-based match too. Returns the players'
    /// new stats in seat order. Throws ``GameStoreError/unknownMatch(_:)``,
    /// ``GameStoreError/matchNotRunning(_:)`` or ``GameStoreError/invalidResult(_:reason:)``.
    @discardableResult
    func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats]

    /// Records that a match ended without a result; stats and ratings do not change.
    /// Throws ``GameStoreError/unknownMatch(_:)`` or ``GameStoreError/matchNotRunning(_:)``.
    func recordMatchAbandoned(matchID: MatchID, endedAt: UnixMillis, reason: String) async throws

    /// Keeps the result a running real-time match has so far, replacing the one kept before:
    /// a match that runs rounds, each with a winner (a Cat Race match runs one race after
    /// another), keeps each round's standing as it is won, so that a crash cannot lose it.
    /// Stats and ratings do not change until the match ends; ``endInterruptedMatches(at:reason:notice:)``
    /// finishes a match with what it kept. Throws ``GameStoreError/unknownMatch(_:)``,
    /// ``GameStoreError/matchNotRunning(_:)`` or ``GameStoreError/invalidResult(_:reason:)``
    /// (the result must name exactly the match's players).
    func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws

    /// Ends every running real-time match, at startup after a crash: one with an interim
    /// result (``recordInterimResult(matchID:result:)``) is finished with it, as
    /// ``recordMatchFinished(matchID:endedAt:result:)`` would (players added after the result
    /// was kept count as lost), the others are abandoned with `reason`. With a `notice`, each
    /// of their players who can sign in (who has a device identity: not a Cat Race tutorial
    /// client, which never would collect it) is left a ``MatchEndNotice`` with it as its
    /// reason, in the same transaction, so that no restart can end a match and lose its
    /// players' notice. Returns
    /// them as they are now, oldest first; turn-based matches keep running (``activeTurnGames()``).
    func endInterruptedMatches(at: UnixMillis, reason: String, notice: String?) async throws -> [MatchRecord]

    /// The match with `id`, if any.
    func match(id: MatchID) async throws -> MatchRecord?

    /// The player's matches that `reader` may see (``MatchRecord/isShown(to:)``), newest
    /// start first (equal starts: larger id first), at most `limit`.
    func matchHistory(playerID: PlayerID, limit: Int, readBy reader: MatchHistoryReader) async throws -> [MatchRecord]

    /// The largest match id ever recorded or reserved (``reserveMatchIDs(through:)``), 0 if
    /// none: new ids continue after it, so they never repeat across restarts.
    func largestMatchID() async throws -> MatchID

    /// Records that ids up to `through` may be in use by matches that are never stored (a
    /// relay, a game still waiting for its second player), so that ``largestMatchID()`` is
    /// never less and a crash cannot make their ids repeat. A server reserves ids in blocks,
    /// ahead of giving them; a value below one reserved before changes nothing.
    func reserveMatchIDs(through: MatchID) async throws

    // MARK: Notices of matches that ended while their players were away

    /// Keeps `notices` until they are deleted, in one transaction; a player's notice of a match
    /// already kept stays as it is (its time too, so that a game restored as over again and
    /// again does not keep its notice for ever).
    func recordEndNotices(_ notices: [MatchEndNotice]) async throws

    /// Every notice kept, oldest end first (equal ends: by match, then player).
    func endNotices() async throws -> [MatchEndNotice]

    /// Drops the player's notices of `matchIDs` (the player has been told); ids without one
    /// are ignored.
    func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) async throws

    /// Drops every notice of a match that ended before `endedBefore`; returns how many.
    @discardableResult
    func deleteEndNotices(endedBefore: UnixMillis) async throws -> Int

    // MARK: Stats and leaderboards

    /// The player's stats in `game`, or nil before their first finished match in it.
    func stats(game: String, playerID: PlayerID) async throws -> PlayerStats?

    /// The first `limit` players of `game`'s leaderboard (order in ``LeaderboardEntry``).
    func leaderboard(game: String, limit: Int) async throws -> [LeaderboardEntry]

    /// `count` consecutive entries of `game`'s leaderboard with the player as near the middle
    /// as the edges allow (more below when `count` is even), or none if the player has no
    /// stats in the game.
    func leaderboard(game: String, around playerID: PlayerID, count: Int) async throws -> [LeaderboardEntry]

    // MARK: Turn-based games

    /// Records that a turn-based match started, with its initial state, in one transaction.
    /// Throws like ``recordMatchStarted(id:game:mode:players:startedAt:isPrivate:)``.
    func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8], isPrivate: Bool
    ) async throws

    /// Accepts move `moveNumber` (the stored count + 1) and the state after it, in one
    /// transaction: once this returns the move is durable and may be acknowledged.
    /// Throws ``GameStoreError/duplicateMove(_:moveNumber:)`` (the log keeps the first move
    /// and the state is unchanged), ``GameStoreError/moveOutOfOrder(_:expected:got:)``,
    /// ``GameStoreError/unknownMatch(_:)``, ``GameStoreError/notTurnBased(_:)`` or
    /// ``GameStoreError/matchNotRunning(_:)``.
    func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) async throws

    /// ``appendMove(matchID:moveNumber:move:state:at:)`` for a caller on an event loop, which
    /// should not need a task per move: `completion` gets the outcome once the move is durable
    /// (or refused), on whatever thread the store commits on, and must only hand it on.
    /// The default runs the async call in a task; a store may do better.
    func appendMove(
        matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// Stores `state` as a running turn-based match's state, without a move, in one
    /// transaction: for a game that ended off the board (a turn that ran out, a player who
    /// left), so that its end is durable before anyone is told of it and a restart finds the
    /// game over. The match stays running until its result or abandonment is recorded.
    /// Throws ``GameStoreError/unknownMatch(_:)``, ``GameStoreError/notTurnBased(_:)`` or
    /// ``GameStoreError/matchNotRunning(_:)``.
    func replaceTurnState(matchID: MatchID, state: [UInt8]) async throws

    /// The running turn-based matches, oldest first, to restore after a restart.
    func activeTurnGames() async throws -> [TurnGameRecord]

    /// A turn-based match's accepted moves in order (also after it ended).
    /// Throws ``GameStoreError/unknownMatch(_:)`` or ``GameStoreError/notTurnBased(_:)``.
    func moveLog(matchID: MatchID) async throws -> [TurnMoveRecord]

    // MARK: Per-player key-value store

    /// The value stored under `key` for the player, if any.
    func readValue(playerID: PlayerID, key: String) async throws -> [UInt8]?

    /// Stores `value` under `key` for an existing player, replacing any value there, within
    /// ``StorageLimits``. Throws ``GameStoreError/unknownPlayer(_:)``, ``GameStoreError/emptyKey``,
    /// ``GameStoreError/keyTooLong(bytes:limit:)``, ``GameStoreError/valueTooLarge(bytes:limit:)``
    /// or ``GameStoreError/tooManyKeys(_:limit:)``.
    func writeValue(playerID: PlayerID, key: String, value: [UInt8]) async throws

    /// Removes `key` for the player; returns whether it was there.
    @discardableResult
    func deleteValue(playerID: PlayerID, key: String) async throws -> Bool
}

extension GameStore {
    /// Runs ``appendMove(matchID:moveNumber:move:state:at:)`` in a task.
    public func appendMove(
        matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        Task {
            do {
                try await self.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at)
                completion(.success(()))
            } catch {
                completion(.failure(error))
            }
        }
    }
}

extension GameStore {
    /// The player's matches as the player itself sees them, running and private ones included:
    /// ``matchHistory(playerID:limit:readBy:)`` with ``MatchHistoryReader/owner``.
    public func matchHistory(playerID: PlayerID, limit: Int) async throws -> [MatchRecord] {
        try await self.matchHistory(playerID: playerID, limit: limit, readBy: .owner)
    }

    /// Records a real-time match that is not private:
    /// ``recordMatchStarted(id:game:mode:players:startedAt:isPrivate:)``.
    public func recordMatchStarted(id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis) async throws {
        try await self.recordMatchStarted(id: id, game: game, mode: mode, players: players, startedAt: startedAt, isPrivate: false)
    }

    /// Records a turn-based match that is not private:
    /// ``createTurnGame(matchID:game:mode:players:startedAt:state:isPrivate:)``.
    public func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8]
    ) async throws {
        try await self.createTurnGame(
            matchID: matchID, game: game, mode: mode, players: players, startedAt: startedAt, state: state, isPrivate: false)
    }
}
