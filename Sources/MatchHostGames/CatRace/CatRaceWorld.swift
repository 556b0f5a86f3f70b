import Logging
import MatchHostCore
import MatchHostWire
import Metrics
import NIOCore

/// A connection speaking the Cat Race protocol, as the world sees it.
public protocol CatRaceLink: PlayerLink {
    /// The player this connection speaks for, set by the world on PLAYER_CONNECTED.
    var catRacePlayer: CatRacePlayer? { get set }
}

/// A Cat Race player known to the server: connected, or seated in a match.
public final class CatRacePlayer {
    /// The id the client sent (the tutorial uses Game Center ids): the id on the wire.
    public let id: PlayerID
    /// The alias MATCH_STARTED shows: the one the player first connected with (with a store,
    /// the stored one), never changed by a later PLAYER_CONNECTED. Empty for a reserved seat
    /// whose player has not connected yet.
    public internal(set) var alias: String
    /// Whether the player has sent PLAYER_CONNECTED, so its alias (and, with a store, its
    /// stored id) is known; false for a reserved seat whose player has not connected yet.
    public internal(set) var isIdentified = false
    /// The player's id in the server's store, when the world has one (see ``CatRaceStoredIdentity``).
    public internal(set) var storedID: PlayerID?
    /// The connection that owns the player now (the newest one to send PLAYER_CONNECTED).
    public internal(set) var link: (any CatRaceLink)?
    /// The match the player is seated in, until it ends.
    public internal(set) var match: Match<CatRaceGame>?
    /// The player's seat in ``match``.
    public internal(set) var seat: Int = 0

    init(id: PlayerID, alias: String) {
        self.id = id
        self.alias = alias
    }
}

/// Who a tutorial client is in the server's store: found by the `playerId` it sent, or created
/// for it (the claim is unverified, so it is an identity of its own, never a native account's).
public struct CatRaceStoredIdentity: Sendable, Hashable {
    /// The stored player's id (what matches, stats and leaderboards name).
    public var playerID: PlayerID
    /// The stored alias, which MATCH_STARTED shows.
    public var alias: String

    /// Creates an identity.
    public init(playerID: PlayerID, alias: String) {
        self.playerID = playerID
        self.alias = alias
    }
}

/// Where a ``CatRaceWorld`` reports its own races so that they outlive the process (the server
/// records them in its store). Called on the world's loop.
public protocol CatRaceRecorder: AnyObject {
    /// One of the world's races was created; `racers` are its seats whose players have a stored
    /// id, in seat order (a reserved seat's player is reported later, by ``racerIdentified(_:seat:in:)``).
    func raceStarted(_ match: Match<CatRaceGame>, racers: [(seat: Int, storedID: PlayerID)])
    /// The player with `storedID` arrived at its reserved `seat` of one of the world's races.
    func racerIdentified(_ storedID: PlayerID, seat: Int, in match: Match<CatRaceGame>)
    /// One of the world's races ended.
    func raceEnded(_ match: Match<CatRaceGame>, outcome: MatchOutcome<Int>)
}

/// Why the world refused a START_MATCH or NOTIFY_READY. Silent on the wire; logged and counted.
public enum CatRaceRequestRefusal: String, Sendable, Hashable, CaseIterable {
    /// The connection has not sent PLAYER_CONNECTED.
    case notIdentified = "not_identified"
    /// Fewer than 2 racers, or more than the maximum.
    case badRacerCount = "bad_racer_count"
    /// The same id twice.
    case duplicateRacer = "duplicate_racer"
    /// The sender is not one of the racers.
    case senderNotRacing = "sender_not_racing"
    /// A listed player is already in a match that has not ended (the second START_MATCH
    /// of one Game Center match, from the other device, is the normal case).
    case racerBusy = "racer_busy"
    /// MOVED_SELF or RESTART_MATCH from a player in no match.
    case notInMatch = "not_in_match"
    /// NOTIFY_READY naming a player that is not connected.
    case inviterAbsent = "inviter_absent"
    /// START_MATCH from a network that has started its most races a minute
    /// (``CatRaceWorld/admitsNewRace``).
    case tooManyNewRaces = "too_many_new_races"
}

/// Settings of the Cat Race world.
public struct CatRaceWorldOptions: Sendable, Hashable {
    /// How long a racer may be away (or a reserved seat stay empty) before the race ends.
    public var gracePeriod: TimeAmount
    /// The most racers in one race (2 to 16).
    public var maxRacers: Int
    /// The race rules' options.
    public var race: CatRaceOptions

    /// Creates options; the defaults are the documented server defaults.
    public init(gracePeriod: TimeAmount = .seconds(30), maxRacers: Int = 16, race: CatRaceOptions = CatRaceOptions()) {
        precondition((2...16).contains(maxRacers), "a race holds 2 to 16 racers")
        self.gracePeriod = gracePeriod
        self.maxRacers = maxRacers
        self.race = race
    }
}

/// Everything behind the Cat Race port: the players the server knows, by id, and their
/// races. The tutorial's `factory.players` and match bookkeeping, with its bugs fixed
/// (see PROTOCOL.md).
///
/// The world is confined to one event loop, like the matches it creates (they share its
/// clock). A transport decodes frames and calls one method per message; the world answers
/// through the links.
public final class CatRaceWorld {
    /// The world's settings.
    public let options: CatRaceWorldOptions
    /// Time and timers for the world and every race in it.
    public let clock: any MatchClock
    private let logger: Logger
    private let allocator: ByteBufferAllocator
    private let notInMatchFrame: ByteBuffer
    private var players: [PlayerID: CatRacePlayer] = [:]
    private var matches: [MatchID: Match<CatRaceGame>] = [:]
    /// Set by ``endAllMatches(reason:)``: the connections the stop closes are not news one by one.
    private var isStopping = false
    /// The id the world's next race gets, unless ``matchIDSource`` is set.
    public private(set) var nextMatchID: MatchID = 1
    /// Where new races' ids come from instead of the world's own count: a server whose native
    /// world records matches in the same store hands out ids from one sequence for both.
    public var matchIDSource: (() -> MatchID)?
    /// Records the world's races; nil keeps everything in memory.
    public var recorder: (any CatRaceRecorder)?
    /// Called when a tutorial client with a stored id takes its seat in a race hosted
    /// elsewhere (``seatInvited(_:in:seat:)``), so that the host can record it.
    public var onInvitedRacerIdentified: ((_ storedID: PlayerID, _ seat: Int, _ match: Match<CatRaceGame>) -> Void)?
    private let refusalCounters: [String: Counter]
    private let matchesStarted = Counter(label: "matchhost_catrace_matches_started_total")

    /// Creates an empty world.
    public init(
        options: CatRaceWorldOptions, clock: any MatchClock, logger: Logger,
        allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) {
        self.options = options
        self.clock = clock
        self.logger = logger
        self.allocator = allocator
        // NOT_IN_MATCH never changes: encode it once and share the buffer.
        self.notInMatchFrame = NotInMatch().encodedFrame(allocator: allocator)
        var counters: [String: Counter] = [:]
        for reason in CatRaceRefusal.allCases.map(\.rawValue) + CatRaceRequestRefusal.allCases.map(\.rawValue) {
            counters[reason] = Counter(label: "matchhost_catrace_refusals_total", dimensions: [("reason", reason)])
        }
        self.refusalCounters = counters
    }

    /// How many players the world holds (connected, or seated in a race).
    public var playerCount: Int { self.players.count }
    /// How many races are running.
    public var matchCount: Int { self.matches.count }
    /// The player with this id, if the world holds it.
    public func player(_ id: PlayerID) -> CatRacePlayer? { self.players[id] }

    /// Whether PLAYER_CONNECTED for `playerID` is the first the world hears from that player
    /// (it holds none, or only a reserved seat): with a store, its stored identity is looked up
    /// before ``playerConnected(_:identity:on:)``.
    public func isNewPlayer(_ playerID: PlayerID) -> Bool {
        !(self.players[playerID]?.isIdentified ?? false)
    }

    /// Whether `message` must wait for the store before it is answered: its player is new to
    /// the world (``isNewPlayer(_:)``), or comes back under another alias, which is stored
    /// first so that the alias it is answered under is the one a restart keeps.
    public func waitsForStore(_ message: PlayerConnected) -> Bool {
        self.isNewPlayer(message.playerID) || self.players[message.playerID]?.alias != message.alias
    }

    /// The stored identity the world holds for `playerID`, if the player has been identified
    /// with the store: what it races under when its new alias cannot be stored.
    public func storedIdentity(of playerID: PlayerID) -> CatRaceStoredIdentity? {
        guard let player = self.players[playerID], player.isIdentified, let storedID = player.storedID else { return nil }
        return CatRaceStoredIdentity(playerID: storedID, alias: player.alias)
    }

    /// Continues race ids after `largest` (the largest match id stored), so they never repeat
    /// across restarts.
    public func continueMatchIDs(after largest: MatchID) {
        self.nextMatchID = max(self.nextMatchID, largest + 1)
    }

    // MARK: - Messages

    /// PLAYER_CONNECTED: bind the player to this connection, then tell it where it stands.
    /// - Parameter identity: the player's stored identity, looked up when
    ///   ``waitsForStore(_:)`` (nil without a store, or when the player and its alias are
    ///   known). The player takes its alias from it, else from the message: unlike the
    ///   tutorial's server (its quirk Q8), a player who comes back under a new alias is shown
    ///   under it.
    public func playerConnected(_ message: PlayerConnected, identity: CatRaceStoredIdentity? = nil, on link: any CatRaceLink) {
        if let previous = link.catRacePlayer, previous.id != message.playerID {
            // The same connection now speaks for someone else: the old player lost its connection.
            self.unbind(previous, from: link)
        }
        let player = self.players[message.playerID] ?? {
            let new = CatRacePlayer(id: message.playerID, alias: "")
            self.players[new.id] = new
            return new
        }()
        let arrived = !player.isIdentified
        player.alias = identity?.alias ?? message.alias
        if arrived {
            player.isIdentified = true
            player.storedID = identity?.playerID
        }
        let isNewConnection = player.link !== link
        if let older = player.link, isNewConnection {
            // Second login: the newest connection owns the player; the older one speaks for nobody.
            older.catRacePlayer = nil
        }
        player.link = link
        link.catRacePlayer = player
        // A connection repeating its PLAYER_CONNECTED (the message rate allows 100 a second)
        // is not a new connection for the log.
        self.logger.log(
            level: isNewConnection ? .info : .debug, "player connected",
            metadata: ["player": "\(player.id)", "continue": "\(message.continueMatch)"])

        guard let match = player.match else {
            link.deliver(self.notInMatchFrame)
            return
        }
        let seat = player.seat
        match.handler.setAlias(player.alias, seat: seat)
        if arrived, let storedID = player.storedID { self.racerIdentified(storedID, seat: seat, in: match) }
        if match.seats[seat].presence == .reserved || message.continueMatch {
            match.connect(seat: seat, link: link)
        } else {
            self.logger.info("quitting match", metadata: ["player": "\(player.id)", "match": "\(match.id)"])
            match.handler.quit(reason: "racer \(player.id) reconnected with continueMatch 0", in: match)
            // The sender was not connected to the match yet, so it did not get the broadcast.
            link.deliver(self.notInMatchFrame)
        }
    }

    /// Whether a START_MATCH from a network may start one more race (the server's
    /// `--max-new-matches-per-minute`, counted when it answers yes); nil: always.
    public var admitsNewRace: ((_ network: String) -> Bool)?

    /// START_MATCH: create a race with these racers, in this order. Ids the server has not
    /// seen get reserved seats.
    /// - Parameter network: the network it came from, for ``admitsNewRace``.
    public func startMatch(_ message: StartMatch, on link: any CatRaceLink, from network: String = "") {
        guard let sender = link.catRacePlayer else { return self.refuse(.notIdentified, link: link) }
        let ids = message.playerIDs
        guard (2...self.options.maxRacers).contains(ids.count) else { return self.refuse(.badRacerCount, link: link) }
        guard Set(ids).count == ids.count else { return self.refuse(.duplicateRacer, link: link) }
        guard ids.contains(sender.id) else { return self.refuse(.senderNotRacing, link: link) }
        guard ids.allSatisfy({ self.players[$0]?.match == nil }) else { return self.refuse(.racerBusy, link: link) }
        guard self.admitsNewRace?(network) ?? true else { return self.refuse(.tooManyNewRaces, link: link) }

        let id = self.takeMatchID()
        let match = Match(
            id: id,
            handler: CatRaceGame(options: self.options.race),
            encoders: [catRaceFrameEncoder],
            clock: self.clock,
            gracePeriod: self.options.gracePeriod,
            capacity: self.options.maxRacers,
            logger: self.logger)
        match.handler.onRefusal = { [unowned self, unowned match] refusal, seat in
            self.count(refusal.rawValue)
            self.logger.debug(
                // A move cut short (too_fast, with steps moved) counts here too.
                "move refused (all or part)",
                metadata: ["match": "\(match.id)", "player": "\(match.seats[seat].player)", "reason": "\(refusal.rawValue)"])
        }
        match.onEnd = { [unowned self] match, outcome in self.matchEnded(match, outcome: outcome) }
        self.matches[id] = match

        for racerID in ids {
            let player = self.players[racerID] ?? {
                let reserved = CatRacePlayer(id: racerID, alias: "")
                self.players[racerID] = reserved
                return reserved
            }()
            guard case .success(let seat) = match.join(racerID, link: player.link) else {
                preconditionFailure("a new match refused a validated racer")
            }
            player.match = match
            player.seat = seat
            match.handler.setAlias(player.alias, seat: seat)
        }
        self.recorder?.raceStarted(
            match, racers: ids.indices.compactMap { seat in self.players[ids[seat]]?.storedID.map { (seat, $0) } })
        match.start()
        self.matchesStarted.increment()
        self.logger.info("match started", metadata: ["match": "\(id)", "racers": "\(ids)"])
        match.send(.matchStarted(match.handler.snapshot(in: match)), to: .all)
    }

    /// MOVED_SELF: hand the move to the racer's race.
    public func movedSelf(_ message: MovedSelf, on link: any CatRaceLink) {
        guard let player = link.catRacePlayer, let match = player.match else {
            return self.refuse(.notInMatch, link: link)
        }
        match.receive(.move(toX: message.posX), fromSeat: player.seat)
    }

    /// RESTART_MATCH: hand the restart to the racer's race.
    public func restartMatch(on link: any CatRaceLink) {
        guard let player = link.catRacePlayer, let match = player.match else {
            return self.refuse(.notInMatch, link: link)
        }
        match.receive(.restart, fromSeat: player.seat)
    }

    /// NOTIFY_READY(inviter): tell the inviter, if connected, that this player is ready.
    public func notifyReady(_ message: NotifyReady, on link: any CatRaceLink) {
        guard let sender = link.catRacePlayer else { return self.refuse(.notIdentified, link: link) }
        guard let inviterLink = self.players[message.playerID]?.link else {
            return self.refuse(.inviterAbsent, link: link)
        }
        inviterLink.deliver(NotifyReady(playerID: sender.id).encodedFrame(allocator: self.allocator))
    }

    /// The connection closed. Its player (if it still owns one) starts its grace period.
    public func connectionClosed(_ link: any CatRaceLink) {
        guard let player = link.catRacePlayer else { return }
        self.unbind(player, from: link)
    }

    /// Ends every race (NOT_IN_MATCH to the connected racers), for shutdown; the players the
    /// stop then disconnects are logged at debug.
    public func endAllMatches(reason: String) {
        self.isStopping = true
        for match in Array(self.matches.values) {
            match.handler.quit(reason: reason, in: match)
        }
    }

    // MARK: - Races hosted elsewhere

    /// Seats the tutorial client `playerID` at `seat` of a race this world does not own (a
    /// native `catrace` match, where the seat is reserved): at once if the client is
    /// connected and in no race, else when its PLAYER_CONNECTED arrives.
    /// - Returns: false if the player is in another race.
    public func seatInvited(_ playerID: PlayerID, in match: Match<CatRaceGame>, seat: Int) -> Bool {
        let player = self.players[playerID] ?? {
            let reserved = CatRacePlayer(id: playerID, alias: "")
            self.players[playerID] = reserved
            return reserved
        }()
        guard player.match == nil || player.match?.isEnded == true else { return false }
        player.match = match
        player.seat = seat
        if let link = player.link {
            match.handler.setAlias(player.alias, seat: seat)
            if let storedID = player.storedID { self.racerIdentified(storedID, seat: seat, in: match) }
            match.connect(seat: seat, link: link)
        }
        return true
    }

    /// Whether `playerID` is free to be invited to a race.
    public func isFree(_ playerID: PlayerID) -> Bool {
        self.players[playerID]?.match == nil
    }

    /// A race hosted elsewhere ended: its tutorial clients are in no race again.
    public func invitedMatchEnded(_ match: Match<CatRaceGame>) {
        self.release(match)
    }

    // MARK: - Bookkeeping

    private func unbind(_ player: CatRacePlayer, from link: any CatRaceLink) {
        link.catRacePlayer = nil
        guard player.link === link else { return }  // a newer connection owns the player
        player.link = nil
        self.logger.log(level: self.isStopping ? .debug : .info, "player disconnected", metadata: ["player": "\(player.id)"])
        if let match = player.match {
            match.disconnect(seat: player.seat, link: link)
        } else {
            // Nothing to remember: the same id connecting again is a new player, exactly as
            // if it had never left. This keeps the registry bounded by live connections and seats.
            self.players[player.id] = nil
        }
    }

    private func matchEnded(_ match: Match<CatRaceGame>, outcome: MatchOutcome<Int>) {
        self.matches[match.id] = nil
        self.release(match)
        self.recorder?.raceEnded(match, outcome: outcome)
    }

    /// A player with a stored id took its seat: the world's own race or the host of another records it.
    private func racerIdentified(_ storedID: PlayerID, seat: Int, in match: Match<CatRaceGame>) {
        if self.matches[match.id] === match {
            self.recorder?.racerIdentified(storedID, seat: seat, in: match)
        } else {
            self.onInvitedRacerIdentified?(storedID, seat, match)
        }
    }

    private func takeMatchID() -> MatchID {
        if let source = self.matchIDSource { return source() }
        defer { self.nextMatchID += 1 }
        return self.nextMatchID
    }

    private func release(_ match: Match<CatRaceGame>) {
        for seat in match.seats {
            guard let player = self.players[seat.player], player.match === match else { continue }
            player.match = nil
            if player.link == nil { self.players[player.id] = nil }
        }
    }

    private func refuse(_ refusal: CatRaceRequestRefusal, link: any CatRaceLink) {
        self.count(refusal.rawValue)
        // Debug: a client may repeat a refused request at its message rate; each is counted.
        self.logger.debug(
            "request refused",
            metadata: ["player": "\(link.catRacePlayer?.id ?? "-")", "reason": "\(refusal.rawValue)"])
    }

    private func count(_ reason: String) {
        self.refusalCounters[reason]?.increment()
    }
}

/// Cat Race events as the tutorial's frames (4-byte length, type, fields).
public var catRaceFrameEncoder: EventEncoder<CatRaceServerMessage> {
    EventEncoder(encoding: .catRace) { message, buffer in message.encodeFrame(into: &buffer) }
}
