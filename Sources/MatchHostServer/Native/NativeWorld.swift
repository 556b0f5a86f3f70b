import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import Metrics
import NIOCore

/// Limits and timing of the native protocol, from ``ServerConfiguration``.
struct NativeWorldOptions {
    var gameIDs: Set<String>
    var sessionGrace: TimeAmount
    var seatGrace: TimeAmount
    var maxBacklogBytes: Int
    var maxPlayersPerMatch: Int
    /// The most racers in one race (``ServerConfiguration/maxRacers``), as on the Cat Race port.
    var maxRacers = 16
    var maxMatchesPerPlayer: Int
    var maxPendingStoredRequests: Int = 16
    /// The most sessions live at once (``ServerConfiguration/maxSessions``).
    var maxSessions: Int = 40_000
    var catRace: CatRaceOptions
    /// What every `disks` match is created with (its seed aside).
    var disks = DisksGame.Options()
    /// How long a Four in a Row player has for a move.
    var turnTimeLimit: TimeAmount = .seconds(30)
    var welcome: NativeWelcome
    /// How often lobby changes are published to subscribers.
    var lobbyInterval: TimeAmount = .milliseconds(50)
    /// The matchmaker's passes, relaxation and limits.
    var matchmaker = MatchmakerConfiguration()
    /// The most devices a player may have (``ServerConfiguration/maxDevicesPerPlayer``).
    var maxDevicesPerPlayer = 10
    /// How long a link code links (``ServerConfiguration/linkCodeLifetime``).
    var linkCodeLifetime: Duration = .seconds(600)
    /// What SET_ALIAS accepts.
    var aliasRules = AliasRules()
    /// The key link codes are held and stored by (``DeviceLinkCodes/keyedDigest(key:)``): the
    /// server's secret key (``ServerConfiguration/tokenSigningKey``), kept so that options
    /// printed whole show no key.
    var linkCodeKey = SecretBytes((0..<32).map { _ in UInt8.random(in: 0...255) })
}

/// Everything behind the native port: sessions, authentication and the matches they play,
/// on one event loop so that a message goes from a connection into a match without a hop.
///
/// Connections call in with decoded frames; the world answers through sessions.
final class NativeWorld {
    let options: NativeWorldOptions
    let sessions: SessionRegistry
    let authenticator: NativeAuthenticator
    /// Standalone ACKs wait here up to 200 ms for a RELIABLE frame to carry them instead.
    let acknowledgements: AcknowledgementBatcher
    /// Players, matches and results on disk (or in memory), reached without blocking the loop.
    let storage: WorldStore
    /// Which matches are stored, and what restored or abandoned matches wait for their players.
    var storedMatches = StoredMatchesState()
    let clock: any MatchClock
    private(set) var logger: Logger
    var matches: [MatchID: any HostedMatch] = [:]
    /// Each live session's seats, by match. Keyed by the session object, not its id string:
    /// every SEND_DATA looks its seat up here, and hashing an address is cheaper than 32
    /// characters. An entry lives exactly as long as its session (removed when it ends).
    var seats: [ObjectIdentifier: [MatchID: (seat: Int, link: SessionSeatLink)]] = [:]
    /// A replaced session's seats, by the session that takes them over in ``sessionStarted(_:)``
    /// (an entry only between the two, within one call).
    var seatsHandedOver: [ObjectIdentifier: (old: Session, seats: [MatchID: (seat: Int, link: SessionSeatLink)])] = [:]
    /// Each player's stored-data requests waiting for the store (an entry only while some
    /// are). By player, not session: authenticating again must not start a fresh allowance.
    var storedRequestsPending: [PlayerID: Int] = [:]
    /// New players per source network (`--max-new-players-per-minute`), shared with the Cat
    /// Race port.
    let registrations: NetworkBudget
    /// `--max-new-matches-per-minute`, shared with the Cat Race port.
    let matchCreations: NetworkBudget
    /// `--max-failed-joins-per-minute`: wrong invite codes and party ids.
    let failedJoins: NetworkBudget
    /// `--max-value-bytes-per-minute`.
    let valueWrites: NetworkBudget
    /// The banned players (read at start, then kept up to date by ``setBan(_:of:completion:)``).
    var bans: [PlayerID: PlayerBan] = [:]
    /// Continues after the largest stored match id (``start(from:)``), so ids never repeat.
    var nextMatchID: MatchID = 1
    /// Private matches by invite code.
    private var inviteCodes: [String: MatchID] = [:]
    /// Makes invite and link codes.
    var codeGenerator = SystemRandomNumberGenerator()
    /// The link codes handed out, each good for one new device of its player.
    var linkCodes: DeviceLinkCodes
    var parties = PartyDirectory()
    let matchmaker: Matchmaker
    /// Each queued ticket's players, to tell them when it goes.
    var ticketPlayers: [String: [PlayerID]] = [:]
    /// The queued tickets of each party.
    var partyTickets: [String: [String]] = [:]
    /// The party of each queued party ticket: a ticket leaving finds its party without a scan
    /// of every party's tickets.
    var ticketParty: [String: String] = [:]
    private(set) var modes = NativeGameModes()
    /// The Cat Race port's world, when it shares this world's loop: native catrace matches
    /// seat its tutorial clients.
    var catRaceWorld: CatRaceWorld?
    private(set) var lobby: LobbyFeed!
    let allocator = ByteBufferAllocator()
    private let droppedData = Counter(label: "matchhost_native_dropped_data_total")
    /// Round-trip times measured by the server's pings.
    let roundTrips = Metrics.Timer(label: "matchhost_native_round_trip")
    /// AUTHENTICATEs refused because ``NativeWorldOptions/maxSessions`` sessions were live.
    let sessionsRefused = Counter(label: "matchhost_sessions_refused_total")

    init(
        options: NativeWorldOptions, authenticator: NativeAuthenticator, clock: any MatchClock, storage: WorldStore,
        registrations: NetworkBudget, matchCreations: NetworkBudget, failedJoins: NetworkBudget,
        valueWrites: NetworkBudget, logger: Logger
    ) {
        self.options = options
        self.authenticator = authenticator
        self.clock = clock
        self.storage = storage
        self.logger = logger
        self.acknowledgements = AcknowledgementBatcher(clock: clock, delay: .milliseconds(200))
        self.registrations = registrations
        self.matchCreations = matchCreations
        self.failedJoins = failedJoins
        self.valueWrites = valueWrites
        self.matchmaker = Matchmaker(configuration: options.matchmaker, clock: clock)
        self.linkCodes = DeviceLinkCodes(lifetime: options.linkCodeLifetime, digest: DeviceLinkCodes.keyedDigest(key: options.linkCodeKey.bytes))
        self.sessions = SessionRegistry(
            clock: clock, gracePeriod: options.sessionGrace, maximumBacklogBytes: options.maxBacklogBytes, logger: logger)
        self.sessions.onSessionAway = { [unowned self] session in
            for (matchID, entry) in self.seats[ObjectIdentifier(session)] ?? [:] {
                self.matches[matchID]?.away(seat: entry.seat, link: entry.link)
            }
        }
        self.sessions.onSessionBack = { [unowned self] session in
            for (matchID, entry) in self.seats[ObjectIdentifier(session)] ?? [:] {
                self.matches[matchID]?.back(seat: entry.seat, link: entry.link)
            }
        }
        self.sessions.onSessionEnded = { [unowned self] session in
            self.endsLeft(by: session)
            let entries = self.seats.removeValue(forKey: ObjectIdentifier(session)) ?? [:]
            for (matchID, entry) in entries {
                self.matches[matchID]?.leave(seat: entry.seat, reason: .sessionEnded)
            }
            self.lobby.sessionEnded(session)
            self.leaveParty(player: session.playerID, partyID: nil)
            self.playerGone(session.playerID)
        }
        self.sessions.onSessionReplaced = { [unowned self] old, new in
            self.endsLeft(by: old)
            // The player keeps its seats: the newer session takes them once AUTHENTICATED
            // is out (``sessionStarted(_:)``). What else the old session had ends with it.
            self.seatsHandedOver[ObjectIdentifier(new)] = (old, self.seats.removeValue(forKey: ObjectIdentifier(old)) ?? [:])
            self.lobby.sessionEnded(old)
            self.leaveParty(player: old.playerID, partyID: nil)
            self.playerGone(old.playerID)
        }
        self.modes = NativeGameModes.builtIn(
            maxPlayers: options.maxPlayersPerMatch, maxRacers: options.maxRacers, catRace: options.catRace, disks: options.disks,
            turnTimeLimit: options.turnTimeLimit,
            catRaceInvite: { [unowned self] match, players in self.invite(players, toRace: match) },
            aliasOf: { [unowned self] player, then in
                // After the player's SET_ALIAS (or the operator's rename) the server already took.
                self.storage.read(in: .player(player), { store in try await store.player(id: player)?.alias }) { result in
                    if case .success(let alias?) = result { then(alias) }
                }
            })
        self.lobby = LobbyFeed(clock: clock, interval: options.lobbyInterval) { [unowned self] mode, matchID in
            guard let match = self.matches[matchID], match.mode == mode, match.isListed, !match.isEnded else { return nil }
            let players = match.activePlayerCount
            return NativeLobbyEntry(
                matchID: matchID, label: match.label, players: UInt8(clamping: players), capacity: UInt8(clamping: match.capacity),
                joinable: match.hasRoom)
        }
        self.matchmaker.start { [unowned self] groups in self.groupsFormed(groups) }
    }

    /// How many matches run.
    var matchCount: Int { self.matches.count }

    // MARK: - Messages from sessions

    /// `RATE_LIMITED` if `request` is over one of its network's budgets (each admitted request
    /// is counted against it), nil otherwise.
    private func overBudget(_ request: NativeRequest, from network: String) -> NativeError? {
        let now = self.clock.now
        switch request {
        // A ticket asks for a new match as CREATE_MATCH does: matchmaking, then leaving, in a
        // loop would otherwise store matches without bound.
        case .createMatch, .matchmake:
            guard !self.matchCreations.admit(network, now: now) else { return nil }
            return NativeError(
                .rateLimited, "this network has asked for its most new matches this minute (--max-new-matches-per-minute); try again later")
        // Only wrong guesses count (after the lookup); a network out of them is not told
        // whether its next one is right.
        case .joinByCode, .joinParty:
            guard !self.failedJoins.allows(network, now: now) else { return nil }
            self.failedJoins.countRefusal()
            return NativeError(
                .rateLimited,
                "this network has named too many invite codes or parties that do not exist this minute (--max-failed-joins-per-minute); try again later")
        // Aliases are written to the same database, and count against the same bytes; one the
        // rules refuse writes nothing, and is refused for that.
        case .setAlias(let alias) where self.options.aliasRules.refusal(of: alias) != nil:
            return nil
        case .writeValue, .setAlias:
            guard !self.valueWrites.admit(network, now: now, cost: request.storedBytes) else { return nil }
            return NativeError(
                .rateLimited, "this network has written its most value bytes this minute (--max-value-bytes-per-minute); try again later")
        default:
            return nil
        }
    }

    /// Handles one message from `session`'s player.
    /// - Throws: a decoding error for game input the game cannot read.
    /// - Parameter network: the network the message came from (``NetworkBudget/source(of:)``).
    func handle(_ message: NativeClientMessage, from session: Session, network: String, reliable: Bool) throws {
        if case .request(let id, let request) = message, let refusal = self.overBudget(request, from: network) {
            self.logger.debug("request refused: over a network's budget", metadata: ["source": "\(network)", "error": "\(refusal)"])
            return session.sendReliable(NativeServerMessage.requestError(id: id, refusal).encoded(allocator: self.allocator))
        }
        switch message {
        case .request(let id, .subscribeLobby(let mode)) where self.subscribe(session, to: mode, requestID: id):
            return
        case .request(let id, let request) where request.isAnsweredFromStorage:
            self.answerFromStorage(request, id: id, for: session)
        case .request(let id, let request):
            let reply: NativeServerMessage
            let result = self.perform(request, for: session)
            if case .failure(let error) = result, request.isGuess(refusedWith: error.code) {
                self.failedJoins.charge(network, now: self.clock.now)
            }
            switch result {
            case .success(let response): reply = .response(id: id, response)
            case .failure(let error):
                self.logger.debug(
                    "request refused", metadata: ["player": "\(session.playerID)", "error": "\(error)"])
                reply = .requestError(id: id, error)
            }
            session.sendReliable(reply.encoded(allocator: self.allocator))
            if case .success(.matchJoined(let info)) = result {
                self.welcomed(session, in: info.matchID)
            }
        case .unknownRequest(let id, let kind):
            let error = NativeError(.unknownRequest, "request kind \(kind) is not known to this server")
            session.sendReliable(NativeServerMessage.requestError(id: id, error).encoded(allocator: self.allocator))
        case .sendData(let matchID, let targets, let payload):
            guard let entry = self.seats[ObjectIdentifier(session)]?[matchID], let match = self.matches[matchID] else {
                self.droppedData.increment()
                self.logger.debug(
                    "data for a match the player is not in dropped", metadata: ["player": "\(session.playerID)", "match": "\(matchID)"])
                return
            }
            guard match.sendData(fromSeat: entry.seat, targets: targets, payload: payload, reliable: reliable) else {
                self.droppedData.increment()
                self.logger.debug(
                    "data the match does not take dropped (not a relay match, or no target in it)",
                    metadata: ["player": "\(session.playerID)", "match": "\(matchID)", "mode": "\(match.mode)"])
                return
            }
        case .matchInput(let matchID, let input):
            guard let entry = self.seats[ObjectIdentifier(session)]?[matchID], let match = self.matches[matchID] else {
                self.droppedData.increment()
                self.logger.debug(
                    "input for a match the player is not in dropped", metadata: ["player": "\(session.playerID)", "match": "\(matchID)"])
                return
            }
            try match.input(fromSeat: entry.seat, bytes: input)
        }
    }

    private func perform(_ request: NativeRequest, for session: Session) -> Result<NativeResponse, NativeError> {
        switch request {
        case .createMatch(let mode, let maxPlayers, let label, let isPrivate):
            return self.createMatch(mode: mode, maxPlayers: Int(maxPlayers), label: label, isPrivate: isPrivate, for: session)
                .flatMap { self.join($0.id, session: session) }.map { .matchJoined($0) }
        case .joinMatch(let matchID):
            // Match ids count up, so an id is no secret. Only a listed match is open to anyone
            // with its id; a private one takes its code, and one the matchmaker formed (or a
            // game restored after a restart) only its own players.
            if let match = self.matches[matchID], !match.isListed, !match.seatPlayers.contains(session.playerID) {
                let how = match.inviteCode != nil ? "it is private: join it with its invite code (JOIN_BY_CODE)" : "it is open only to its own players"
                return .failure(NativeError(.joinRefused, "match \(matchID) cannot be joined by its id: \(how)"))
            }
            return self.join(matchID, session: session).map { .matchJoined($0) }
        case .joinByCode(let code):
            guard let matchID = self.inviteCodes[InviteCode.normalized(code)] else {
                return .failure(NativeError(.noSuchMatch, "no match with invite code \(code)"))
            }
            return self.join(matchID, session: session).map { .matchJoined($0) }
        case .leaveMatch(let matchID):
            guard let entry = self.seats[ObjectIdentifier(session)]?[matchID], let match = self.matches[matchID] else {
                return .failure(NativeError(.notInMatch, "not in match \(matchID)"))
            }
            self.seats[ObjectIdentifier(session)]?[matchID] = nil
            match.leave(seat: entry.seat, reason: .left)
            return .success(.matchLeft(matchID))
        case .listMatches(let query):
            guard self.modes[query.mode] != nil else { return .failure(self.unknownMode(query.mode)) }
            let page = self.lobby.page(query)
            return .success(.matchList(entries: page.entries, next: page.next))
        case .subscribeLobby(let mode):
            // Only an unknown mode gets here: `handle` answers the others in place (see
            // `subscribe(_:to:requestID:)`), as their entries must follow the response.
            return .failure(self.unknownMode(mode))
        case .unsubscribeLobby(let mode):
            self.lobby.unsubscribe(session, from: mode)
            return .success(.done)
        case .createParty(let maxSize):
            switch self.parties.create(leader: session.playerID, maxSize: maxSize == 0 ? PartyDirectory.maximumSize : Int(maxSize)) {
            case .success(let party): return .success(.party(Self.wire(party)))
            case .failure(let refusal): return .failure(Self.error(refusal))
            }
        case .joinParty(let partyID):
            switch self.parties.join(partyID, player: session.playerID) {
            case .success(let party):
                self.partyTicketsVoided(party.id, reason: "the party changed")
                self.partyChanged(party, except: session.playerID)
                return .success(.party(Self.wire(party)))
            case .failure(let refusal): return .failure(Self.error(refusal))
            }
        case .leaveParty(let partyID):
            guard self.leaveParty(player: session.playerID, partyID: partyID) else {
                return .failure(NativeError(.noSuchParty, "not in party \(partyID)"))
            }
            return .success(.done)
        case .matchmake(let ticket):
            return self.matchmake(ticket, for: session)
        case .cancelTicket(let id):
            return self.cancelTicket(id, for: session)
        case .getProfile, .getMatchHistory, .getLeaderboard, .readValue, .writeValue, .deleteValue, .createLinkCode, .listDevices,
            .unlinkDevice, .setAlias, .getAliases:
            return .failure(NativeError(.unknownRequest, "internal: answered from storage"))
        }
    }

    /// Answers SUBSCRIBE_LOBBY itself: its response has to go out before the entries that follow.
    private func subscribe(_ session: Session, to mode: String, requestID: UInt32) -> Bool {
        guard self.modes[mode] != nil else { return false }
        self.lobby.subscribe(session, to: mode) { count in
            session.sendReliable(
                NativeServerMessage.response(id: requestID, .lobbySubscribed(mode: mode, count: count)).encoded(allocator: self.allocator))
        }
        return true
    }

    func unknownMode(_ mode: String) -> NativeError {
        NativeError(.unknownMode, "no game mode \"\(mode)\"; this server has: \(self.modes.names.joined(separator: ", "))")
    }

    /// Creates a match of `mode` (no players yet). Private matches get an invite code and stay out of the lobby.
    func createMatch(mode: String, maxPlayers: Int, label: String, isPrivate: Bool, isListed: Bool = true, for session: Session?)
        -> Result<any HostedMatch, NativeError>
    {
        guard let gameMode = self.modes[mode] else { return .failure(self.unknownMode(mode)) }
        let capacity = maxPlayers == 0 ? gameMode.defaultCapacity : maxPlayers
        guard gameMode.capacities.contains(capacity) else {
            let range = gameMode.capacities
            return .failure(
                NativeError(
                    .badArgument,
                    "maxPlayers for \(mode) must be \(range.lowerBound) to \(range.upperBound) (\(gameMode.capacityOptions)), or 0 for \(gameMode.defaultCapacity)"))
        }
        if let session, self.matchesHeld(by: session.playerID) >= self.options.maxMatchesPerPlayer {
            return .failure(self.tooManyMatches)
        }
        let id = self.takeMatchID()
        let hosted = gameMode.make(
            MatchSetup(
                id: id, capacity: capacity, label: label, clock: self.clock, seatGrace: self.options.seatGrace, logger: self.logger,
                storage: self.storage))
        if isPrivate {
            var code = InviteCode.random(using: &self.codeGenerator)
            while self.inviteCodes[code] != nil { code = InviteCode.random(using: &self.codeGenerator) }
            hosted.inviteCode = code
            self.inviteCodes[code] = id
        }
        hosted.isListed = isListed && !isPrivate
        self.register(hosted)
        self.logger.info(
            "match created",
            metadata: ["match": "\(id)", "mode": "\(mode)", "player": "\(session?.playerID ?? "matchmaker")", "private": "\(isPrivate)"])
        return .success(hosted)
    }

    /// Makes `hosted` one of the world's matches: listed, reachable by id, cleaned up when it ends.
    func register(_ hosted: any HostedMatch) {
        hosted.onEnd = { [unowned self] ended in
            self.releaseWaitingSeats(of: ended)
            self.recordEnd(of: ended)
            self.matches[ended.id] = nil
            if let race = ended as? NativeMatch<CatRaceGame> { self.catRaceWorld?.invitedMatchEnded(race.match) }
            if let code = ended.inviteCode { self.inviteCodes[code] = nil }
            for session in ended.seatedSessions {
                self.seats[ObjectIdentifier(session)]?[ended.id] = nil
            }
            self.lobby.matchChanged(ended.id, mode: ended.mode)
        }
        hosted.onChange = { [unowned self] changed in
            self.lobby.matchChanged(changed.id, mode: changed.mode)
        }
        hosted.onStanding = { [unowned self] match, standing, announce in
            self.recordStanding(standing, of: match, then: announce)
        }
        self.matches[hosted.id] = hosted
        self.lobby.matchChanged(hosted.id, mode: hosted.mode)
    }

    var tooManyMatches: NativeError {
        NativeError(
            .tooManyMatches, "already in \(self.options.maxMatchesPerPlayer) matches, counting one for queued tickets (--max-matches-per-player)")
    }

    /// The matches `player` is in, and one more while it waits in the matchmaker's queue
    /// (however many tickets: when one forms a match, the others go). So a match the
    /// matchmaker forms never takes a player past `--max-matches-per-player`.
    func matchesHeld(by player: PlayerID) -> Int {
        let seated = self.sessions.session(of: player).map { self.seats[ObjectIdentifier($0)]?.count ?? 0 } ?? 0
        return seated + (self.matchmaker.hasTickets(of: player) ? 1 : 0)
    }

    /// Seats `session`'s player in a match.
    func join(_ matchID: MatchID, session: Session) -> Result<NativeMatchInfo, NativeError> {
        guard let match = self.matches[matchID], !match.isEnded else {
            return .failure(NativeError(.noSuchMatch, "no match \(matchID)"))
        }
        if self.seats[ObjectIdentifier(session)]?[matchID] != nil {
            return .failure(NativeError(.alreadyInMatch, "already in match \(matchID)"))
        }
        guard self.matchesHeld(by: session.playerID) < self.options.maxMatchesPerPlayer else {
            return .failure(self.tooManyMatches)
        }
        let link = SessionSeatLink(session: session, welcomed: false)
        switch match.join(session.playerID, link: link) {
        case .success(let seat):
            self.seats[ObjectIdentifier(session), default: [:]][matchID] = (seat, link)
            self.recordSeat(in: match, player: session.playerID)
            return .success(match.info())
        case .failure(let refusal):
            switch refusal {
            case .matchEnded: return .failure(NativeError(.matchEnded, "\(refusal)"))
            case .alreadySeated: return .failure(NativeError(.alreadyInMatch, "\(refusal)"))
            case .full, .seatsUsedUp: return .failure(NativeError(.matchFull, "\(refusal)"))
            case .refusedByGame: return .failure(NativeError(.joinRefused, "\(refusal)"))
            }
        }
    }

    /// Why a client from `source` may not register a new player now (no room for its session,
    /// or its network's budget spent), or nil if it may (then counted).
    func registrationRefusal(from source: String) -> NativeError? {
        // Checked before the player is made: a device refused after it would be registered
        // with a secret its client never learned.
        if let full = self.sessionLimitRefusal() { return full }
        guard self.registrations.admit(source, now: self.clock.now) else {
            self.logger.debug("new player refused: too many from this network", metadata: ["source": "\(source)"])
            return NativeError(.rateLimited, "too many new players from this network (--max-new-players-per-minute); try again in a minute")
        }
        return nil
    }

    /// SERVER_FULL if `--max-sessions` sessions are live (counted), nil if one more may start.
    func sessionLimitRefusal() -> NativeError? {
        guard self.sessions.count >= self.options.maxSessions else { return nil }
        self.sessionsRefused.increment()
        return NativeError(.serverFull, "the server holds its most sessions (\(self.options.maxSessions), --max-sessions); try again later")
    }

    /// `session`'s player has had its MATCH_JOINED (or MATCHMAKER_MATCHED): what the match sent
    /// it meanwhile goes out now, and the game hears of it.
    func welcomed(_ session: Session, in matchID: MatchID) {
        guard let entry = self.seats[ObjectIdentifier(session)]?[matchID] else { return }
        entry.link.welcome()
        self.matches[matchID]?.welcomed(seat: entry.seat)
    }

    /// START_MATCH in a native catrace match: reserves a seat for each named tutorial client
    /// (a Cat Race port player id) and seats it when it is, or once it gets, connected there;
    /// then shows everyone the line-up, once. Ids already seated, of native players signed in
    /// now, or of tutorial clients in another race are skipped. (An offline native player's id
    /// is not known here without the store; its seat goes to a tutorial client claiming the id,
    /// as any id may be claimed on port 1955.)
    private func invite(_ ids: [PlayerID], toRace match: Match<CatRaceGame>) {
        guard let tutorial = self.catRaceWorld else {
            self.logger.debug("START_MATCH in a native race, but the Cat Race port is not on this loop", metadata: ["match": "\(match.id)"])
            return
        }
        match.handler.holdsLineUp = true
        defer { match.handler.holdsLineUp = false }
        for id in ids where match.seatIndex(of: id) == nil && self.sessions.session(of: id) == nil {
            guard tutorial.isFree(id) else {
                // Debug: one START_MATCH may name a busy id 255 times.
                self.logger.debug("invited racer is in another race", metadata: ["match": "\(match.id)", "player": "\(id)"])
                continue
            }
            guard case .success(let seat) = match.join(id, link: nil) else { break }
            _ = tutorial.seatInvited(id, in: match, seat: seat)
            self.logger.info("tutorial client invited", metadata: ["match": "\(match.id)", "player": "\(id)"])
        }
        match.send(.matchStarted(match.handler.snapshot(in: match)), to: .all)
    }

    // MARK: - Parties

    /// Takes `player` out of its party (of `partyID`, when given) and tells the others.
    @discardableResult
    func leaveParty(player: PlayerID, partyID: String?) -> Bool {
        guard let (before, after) = self.parties.leave(player: player, party: partyID) else { return false }
        self.partyLeft(before: before, after: after, player: player)
        if after.members.isEmpty {
            // Disbanded: every former member but the leaver hears of it.
            let message = NativeServerMessage.partyUpdate(Self.wire(after)).encoded(allocator: self.allocator)
            for member in before.members where member != player {
                self.sessions.session(of: member)?.sendReliable(message)
            }
        } else {
            self.partyChanged(after, except: player)
        }
        return true
    }

    /// Called when a party loses a member or is disbanded: its queued tickets go.
    func partyLeft(before: Party, after: Party, player: PlayerID) {
        self.partyTicketsVoided(before.id, reason: after.members.isEmpty ? "the party was disbanded" : "\(player) left the party")
    }

    /// Sends the party as it is now to every member but `player`.
    func partyChanged(_ party: Party, except player: PlayerID) {
        let message = NativeServerMessage.partyUpdate(Self.wire(party)).encoded(allocator: self.allocator)
        for member in party.members where member != player {
            self.sessions.session(of: member)?.sendReliable(message)
        }
    }

    static func wire(_ party: Party) -> NativePartyInfo {
        NativePartyInfo(partyID: party.id, leader: party.leader, maxSize: UInt8(party.maxSize), members: party.members)
    }

    static func error(_ refusal: PartyRefusal) -> NativeError {
        switch refusal {
        case .noSuchParty, .notAMember: return NativeError(.noSuchParty, refusal.description)
        case .full: return NativeError(.partyFull, refusal.description)
        case .alreadyInParty: return NativeError(.alreadyInParty, refusal.description)
        case .badSize: return NativeError(.badArgument, refusal.description)
        }
    }

    /// `session`'s player said goodbye: the session ends and its matches see it leave.
    func goodbye(_ session: Session) {
        self.sessions.end(session, error: nil)
    }

    /// Ends every match (players are told MATCH_ENDED) and every session (SHUTTING_DOWN),
    /// except stored turn-based games, which are put away quietly: they stay stored as running
    /// and continue after the restart, where their players get MATCH_RESUMED. (A game still
    /// waiting for its second player is not stored, and ends like the others, as does every
    /// game when the store dies with the server.)
    func shutDown() {
        self.endMatchesForShutdown()
        self.announceEndsBeingStored()
        // One line for them all: each session's end is at debug.
        self.logger.info("ending every session", metadata: ["sessions": "\(self.sessions.count)"])
        self.sessions.endAll(error: NativeError(.shuttingDown, "the server is shutting down"))
    }

    /// The first half of ``shutDown()``, for a stop that lets the results being written be
    /// told once committed, before the sessions end: no more matchmaking, and every match ended
    /// or put away as ``shutDown()`` does. Sessions stay; matches made meanwhile end with them.
    func endMatchesForShutdown() {
        self.matchmaker.stop()
        self.storedMatches.isShuttingDown = true
        let storeOutlivesServer = self.storage.store.outlivesServer
        for match in Array(self.matches.values) {
            if match.storageKind == .turnBased, storeOutlivesServer, self.storedMatches.recordedPlayers[match.id] != nil {
                match.suspend(reason: NativeWorld.savedGameShutdownReason)
            } else {
                match.end(reason: "server shutting down")
            }
        }
    }
}

extension NativeRequest {
    /// Whether this request, refused with `code`, was a wrong guess at a secret: an invite
    /// code or a party id that names nothing (`--max-failed-joins-per-minute`).
    fileprivate func isGuess(refusedWith code: NativeErrorCode) -> Bool {
        switch (self, code) {
        case (.joinByCode, .noSuchMatch), (.joinParty, .noSuchParty): return true
        default: return false
        }
    }
}
