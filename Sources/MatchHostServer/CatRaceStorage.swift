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

    /// The most first contacts looked up in one transaction.
    static let maximumBatch = 256

    /// The store, reached without blocking the loop.
    let storage: WorldStore
    /// New players per source network (`--max-new-players-per-minute`), shared with the
    /// native port.
    let registrations: NetworkBudget
    /// Lookups not answered yet, by tutorial id: a second connection claiming the same id
    /// waits for the first answer rather than racing it to create the player.
    private var lookups: [PlayerID: Lookup] = [:]
    /// Claims waiting for the batch in flight: while one transaction runs, the next burst of
    /// first contacts gathers here and goes in the next, so a burst costs a few commits.
    private var waitingClaims: [WaitingClaim] = []
    private var isLookingUp = false
    private var races: [MatchID: RecordedRace] = [:]
    private var random = SystemRandomNumberGenerator()

    /// One tutorial id's lookup in flight: the alias it stores, who waits for it, and claims of
    /// the id under another alias, each made once it is answered (the last claim's alias is
    /// the one stored and shown, as if the claims had come one after another).
    private struct Lookup {
        typealias Completion = (Result<CatRaceStoredIdentity, any Error>) -> Void
        var alias: String
        var waiting: [Completion]
        var later: [(alias: String, source: String, completion: Completion)] = []
    }

    /// A claim for the next batch, and the network whose registration it took, if it took one.
    private struct WaitingClaim {
        var claim: ExternalIdentityClaim
        var registeredFrom: String?
    }

    init(storage: WorldStore, registrations: NetworkBudget) {
        self.storage = storage
        self.registrations = registrations
    }

    // MARK: Identities

    /// Finds the stored player behind the tutorial client `playerID`, creating it (with
    /// `alias`) and its identity if there is none (``GameStore/findOrCreatePlayers(_:at:)``);
    /// `completion` runs on the loop once that is committed. A known player takes `alias` (a
    /// tutorial client that comes back under a new alias is stored under it) and is marked seen.
    ///
    /// Only a player created counts against `source`'s new players (``NetworkBudget``):
    /// the id is looked up first, and an unknown one takes a registration (given back if the
    /// database fails to create it). An unknown id from a network out of registrations fails
    /// with ``CatRaceRegistrationRefused``; its stored players still come back.
    func identify(
        _ playerID: PlayerID, alias: String, from source: String, completion: @escaping (Result<CatRaceStoredIdentity, any Error>) -> Void
    ) {
        if let lookup = self.lookups[playerID] {
            if lookup.alias == alias && lookup.later.isEmpty {
                self.lookups[playerID]?.waiting.append(completion)
            } else {
                self.lookups[playerID]?.later.append((alias, source, completion))
            }
            return
        }
        self.lookups[playerID] = Lookup(alias: alias, waiting: [completion])
        let claim = ExternalIdentityClaim(identity: .catRaceTutorial(playerID), newPlayerID: self.random.hexString(bytes: 16), alias: alias)
        self.storage.read({ store in try await store.player(externalIdentity: claim.identity) }) { result in
            switch result {
            case .success(.some):
                // Still through the batch, which marks the player seen.
                self.claim(WaitingClaim(claim: claim, registeredFrom: nil))
            case .success(nil):
                guard self.registrations.admit(source, now: self.storage.clock.now) else {
                    return self.answer(playerID, .failure(CatRaceRegistrationRefused(source: source)))
                }
                self.claim(WaitingClaim(claim: claim, registeredFrom: source))
            case .failure(let error):
                self.answer(playerID, .failure(error))
            }
        }
    }

    private func claim(_ waiting: WaitingClaim) {
        self.waitingClaims.append(waiting)
        if !self.isLookingUp { self.lookUpWaitingClaims() }
    }

    private func answer(_ playerID: PlayerID, _ answer: Result<CatRaceStoredIdentity, any Error>) {
        guard let lookup = self.lookups.removeValue(forKey: playerID) else { return }
        for waiting in lookup.waiting {
            waiting(answer)
        }
        // In the order they came: claims of one alias in a row share their lookup again.
        for claim in lookup.later {
            self.identify(playerID, alias: claim.alias, from: claim.source, completion: claim.completion)
        }
    }

    private func lookUpWaitingClaims() {
        let batch = Array(self.waitingClaims.prefix(Self.maximumBatch))
        self.waitingClaims.removeFirst(batch.count)
        self.isLookingUp = !batch.isEmpty
        guard !batch.isEmpty else { return }
        let at = self.storage.now()
        let claims = batch.map(\.claim)
        self.storage.write({ store in try await store.findOrCreatePlayers(claims, at: at) }) { result in
            let records = result.flatMap { records -> Result<[PlayerRecord], any Error> in
                guard records.count == batch.count else {
                    return .failure(GameStoreError.storageFailed(reason: "the store answered \(records.count) of \(batch.count) claims"))
                }
                return .success(records)
            }
            for (index, waiting) in batch.enumerated() {
                // A registration that made no new player (the database failed) is given back.
                if let source = waiting.registeredFrom, (try? records.get()[index].id) != waiting.claim.newPlayerID {
                    self.registrations.refund(source, now: self.storage.clock.now)
                }
                self.answer(waiting.claim.identity.externalID, records.map { CatRaceStoredIdentity(playerID: $0[index].id, alias: $0[index].alias) })
            }
            self.lookUpWaitingClaims()
        }
    }

    // MARK: CatRaceRecorder

    func raceStarted(_ match: Match<CatRaceGame>, racers: [(seat: Int, storedID: PlayerID)]) {
        var race = RecordedRace()
        let tally = race.tally
        match.handler.onRaceWon = { [weak self, unowned match] seat, announce in
            tally.raceWon(by: match.seats[seat].player)
            guard let self else { return announce() }
            self.keepStanding(of: match, then: announce)
        }
        for racer in racers {
            race.storedIDs[match.seats[racer.seat].player] = racer.storedID
        }
        race.players = racers.map(\.storedID)
        self.races[match.id] = race
        if !race.players.isEmpty {
            self.storage.recordRealTimeStart(of: match.id, game: CatRaceGame.mode, players: race.players, isPrivate: false)
        }
    }

    func racerIdentified(_ storedID: PlayerID, seat: Int, in match: Match<CatRaceGame>) {
        guard var race = self.races[match.id], !race.players.contains(storedID) else { return }
        race.storedIDs[match.seats[seat].player] = storedID
        race.players.append(storedID)
        self.races[match.id] = race
        if race.players.count == 1 {
            self.storage.recordRealTimeStart(of: match.id, game: CatRaceGame.mode, players: race.players, isPrivate: false)
        } else {
            self.storage.recordPlayerAdded(storedID, to: match.id)
        }
    }

    /// Keeps the match's races won so far as its interim result, so that a crash before the
    /// match ends cannot lose them; `announce` (the race's GAME_OVER) runs once that is
    /// written, or at once when the match has no stored racer.
    private func keepStanding(of match: Match<CatRaceGame>, then announce: @escaping () -> Void) {
        guard let race = self.races[match.id], !race.players.isEmpty, let standing = race.tally.standing(in: match) else {
            return announce()
        }
        self.storage.recordInterimResult(standing.renamingPlayers(race.storedIDs), of: match.id, players: race.players, then: announce)
    }

    func raceEnded(_ match: Match<CatRaceGame>, outcome: MatchOutcome<Int>) {
        guard let race = self.races.removeValue(forKey: match.id), !race.players.isEmpty else { return }
        let ending = race.tally.ending(outcome, in: match).renamingPlayers(race.storedIDs)
        self.storage.recordEnding(ending, of: match.id, players: race.players)
    }
}

/// A tutorial client's first contact refused: its network has registered its
/// `--max-new-players-per-minute` already. The tutorial's protocol has no error message; the
/// connection closes.
struct CatRaceRegistrationRefused: Error, CustomStringConvertible {
    /// The network, as ``NetworkBudget/source(of:)`` names it.
    var source: String
    var description: String { "too many new players from \(self.source) (--max-new-players-per-minute)" }
}

extension CatRaceWorld {
    /// The world's store, when the port has one.
    var storage: CatRaceStorage? { self.recorder as? CatRaceStorage }
}
