import Logging
import MatchHostCore
import MatchHostGames
import NIOCore

/// What the Cat Race port keeps in the server's ``GameStore``: who each tutorial client is
/// (its `playerId`, an unverified claim, is an external identity of its own kind, the key of a
/// player created for it) and how the port's races end (as native `catrace` matches are
/// recorded: the start with the racers' stored ids, racers who arrive later, the tally of
/// races won at the end). Loop-confined, like the world it records; every store call runs off
/// the loop through ``WorldStore``.
final class CatRaceStorage: CatRaceRecorder {
    /// What one of the port's races has recorded so far.
    private struct RecordedRace {
        /// The stored ids recorded as the match's players, in the order they were recorded.
        var players: [PlayerID] = []
        /// Each identified racer's stored id, by the id it races under.
        var storedIDs: [PlayerID: PlayerID] = [:]
        let tally = CatRaceTally()
    }

    /// The store, reached without blocking the loop.
    let storage: WorldStore
    /// Lookups in flight, by tutorial id: a second connection claiming the same id waits for
    /// the first answer rather than racing it to create the player.
    private var lookups: [PlayerID: [(Result<CatRaceStoredIdentity, any Error>) -> Void]] = [:]
    private var races: [MatchID: RecordedRace] = [:]
    private var random = SystemRandomNumberGenerator()

    init(storage: WorldStore) {
        self.storage = storage
    }

    // MARK: Identities

    /// Finds the stored player behind the tutorial client `playerID`, creating it (with
    /// `alias`) and its identity in one transaction if there is none; `completion` runs on the
    /// loop once that is committed. A known player keeps its stored alias and is marked seen.
    func identify(_ playerID: PlayerID, alias: String, completion: @escaping (Result<CatRaceStoredIdentity, any Error>) -> Void) {
        if self.lookups[playerID] != nil {
            self.lookups[playerID]?.append(completion)
            return
        }
        self.lookups[playerID] = [completion]
        let identity = ExternalIdentity.catRaceTutorial(playerID)
        let newID = self.random.hexString(bytes: 16)
        let now = self.storage.now()
        self.storage.run({ store in
            try await Self.findOrCreate(identity, newID: newID, alias: alias, at: now, in: store)
        }) { result in
            if case .success(let (_, created)) = result, !created {
                self.touch(result)
            }
            for waiting in self.lookups.removeValue(forKey: playerID) ?? [] {
                waiting(result.map(\.identity))
            }
        }
    }

    private static func findOrCreate(
        _ identity: ExternalIdentity, newID: PlayerID, alias: String, at now: UnixMillis, in store: any GameStore
    ) async throws -> (identity: CatRaceStoredIdentity, created: Bool) {
        if let known = try await store.player(externalIdentity: identity) {
            return (CatRaceStoredIdentity(playerID: known.id, alias: known.alias), false)
        }
        do {
            try await store.createPlayerWithExternalIdentity(id: newID, alias: alias, identity: identity, createdAt: now)
            return (CatRaceStoredIdentity(playerID: newID, alias: alias), true)
        } catch GameStoreError.externalIdentityExists {
            // Another writer of the same file created it in between: that player it is.
            guard let known = try await store.player(externalIdentity: identity) else {
                throw GameStoreError.externalIdentityExists(identity)
            }
            return (CatRaceStoredIdentity(playerID: known.id, alias: known.alias), false)
        }
    }

    private func touch(_ result: Result<(identity: CatRaceStoredIdentity, created: Bool), any Error>) {
        guard case .success(let (identity, _)) = result else { return }
        let at = self.storage.now()
        let logger = self.storage.logger
        self.storage.run({ store in try await store.touch(playerID: identity.playerID, at: at) }) { result in
            if case .failure(let error) = result {
                logger.debug("last seen not recorded", metadata: ["player": "\(identity.playerID)", "error": "\(error)"])
            }
        }
    }

    // MARK: CatRaceRecorder

    func raceStarted(_ match: Match<CatRaceGame>, racers: [(seat: Int, storedID: PlayerID)]) {
        var race = RecordedRace()
        let tally = race.tally
        match.handler.onRaceWon = { [unowned match] seat in tally.raceWon(by: match.seats[seat].player) }
        for racer in racers {
            race.storedIDs[match.seats[racer.seat].player] = racer.storedID
        }
        race.players = racers.map(\.storedID)
        self.races[match.id] = race
        if !race.players.isEmpty {
            self.storage.recordRealTimeStart(of: match.id, game: CatRaceGame.mode, players: race.players)
        }
    }

    func racerIdentified(_ storedID: PlayerID, seat: Int, in match: Match<CatRaceGame>) {
        guard var race = self.races[match.id], !race.players.contains(storedID) else { return }
        race.storedIDs[match.seats[seat].player] = storedID
        race.players.append(storedID)
        self.races[match.id] = race
        if race.players.count == 1 {
            self.storage.recordRealTimeStart(of: match.id, game: CatRaceGame.mode, players: race.players)
        } else {
            self.storage.recordPlayerAdded(storedID, to: match.id)
        }
    }

    func raceEnded(_ match: Match<CatRaceGame>, outcome: MatchOutcome<Int>) {
        guard let race = self.races.removeValue(forKey: match.id), !race.players.isEmpty else { return }
        let ending = race.tally.ending(outcome, in: match).renamingPlayers(race.storedIDs)
        self.storage.recordEnding(ending, of: match.id, players: race.players)
    }
}

extension CatRaceWorld {
    /// The world's store, when the port has one.
    var storage: CatRaceStorage? { self.recorder as? CatRaceStorage }
}
