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
    var maxMatchesPerPlayer: Int
    var catRace: CatRaceOptions
    var welcome: NativeWelcome
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
    private let clock: any MatchClock
    private var logger: Logger
    private var matches: [MatchID: any HostedMatch] = [:]
    /// Each live session's seats, by match. Keyed by the session object, not its id string:
    /// every SEND_DATA looks its seat up here, and hashing an address is cheaper than 32
    /// characters. An entry lives exactly as long as its session (removed when it ends).
    private var seats: [ObjectIdentifier: [MatchID: (seat: Int, link: SessionSeatLink)]] = [:]
    private var nextMatchID: MatchID = 1
    private let allocator = ByteBufferAllocator()
    private let droppedData = Counter(label: "matchhost_native_dropped_data_total")
    /// Round-trip times measured by the server's pings.
    let roundTrips = Metrics.Timer(label: "matchhost_native_round_trip")

    init(options: NativeWorldOptions, authenticator: NativeAuthenticator, clock: any MatchClock, logger: Logger) {
        self.options = options
        self.authenticator = authenticator
        self.clock = clock
        self.logger = logger
        self.acknowledgements = AcknowledgementBatcher(clock: clock, delay: .milliseconds(200))
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
            let entries = self.seats.removeValue(forKey: ObjectIdentifier(session)) ?? [:]
            for (matchID, entry) in entries {
                self.matches[matchID]?.leave(seat: entry.seat, reason: .sessionEnded)
            }
        }
    }

    /// How many matches run.
    var matchCount: Int { self.matches.count }

    // MARK: - Messages from sessions

    /// Handles one message from `session`'s player.
    /// - Throws: a decoding error for game input the game cannot read.
    func handle(_ message: NativeClientMessage, from session: Session, reliable: Bool) throws {
        switch message {
        case .request(let id, let request):
            let reply: NativeServerMessage
            let result = self.perform(request, for: session)
            switch result {
            case .success(let response): reply = .response(id: id, response)
            case .failure(let error):
                self.logger.debug(
                    "request refused", metadata: ["player": "\(session.playerID)", "error": "\(error)"])
                reply = .requestError(id: id, error)
            }
            session.sendReliable(reply.encoded(allocator: self.allocator))
            if case .success(.matchJoined(let info)) = result, let match = self.matches[info.matchID],
                let entry = self.seats[ObjectIdentifier(session)]?[info.matchID]
            {
                match.welcomed(seat: entry.seat)
            }
        case .sendData(let matchID, let targets, let payload):
            guard let entry = self.seats[ObjectIdentifier(session)]?[matchID], let match = self.matches[matchID] else {
                self.droppedData.increment()
                self.logger.debug(
                    "data for a match the player is not in dropped", metadata: ["player": "\(session.playerID)", "match": "\(matchID)"])
                return
            }
            match.sendData(fromSeat: entry.seat, targets: targets, payload: payload, reliable: reliable)
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
        case .createMatch(let mode, let maxPlayers, let label):
            return self.createMatch(mode: mode, maxPlayers: Int(maxPlayers), label: label, for: session).map { .matchJoined($0) }
        case .joinMatch(let matchID):
            return self.join(matchID, session: session).map { .matchJoined($0) }
        case .leaveMatch(let matchID):
            guard let entry = self.seats[ObjectIdentifier(session)]?[matchID], let match = self.matches[matchID] else {
                return .failure(NativeError(.notInMatch, "not in match \(matchID)"))
            }
            self.seats[ObjectIdentifier(session)]?[matchID] = nil
            match.leave(seat: entry.seat, reason: .left)
            return .success(.matchLeft(matchID))
        }
    }

    private func createMatch(mode: String, maxPlayers: Int, label: String, for session: Session) -> Result<NativeMatchInfo, NativeError> {
        guard Self.modes.contains(mode) else {
            return .failure(NativeError(.unknownMode, "no game mode \"\(mode)\"; this server has: \(Self.modes.joined(separator: ", "))"))
        }
        let limit = self.options.maxPlayersPerMatch
        let capacity = maxPlayers == 0 ? limit : maxPlayers
        guard (2...limit).contains(capacity) else {
            return .failure(NativeError(.badArgument, "maxPlayers must be 2 to \(limit) (--max-players), or 0 for \(limit)"))
        }
        guard (self.seats[ObjectIdentifier(session)]?.count ?? 0) < self.options.maxMatchesPerPlayer else {
            return .failure(self.tooManyMatches)
        }
        let id = self.nextMatchID
        self.nextMatchID += 1
        let hosted: any HostedMatch
        if mode == CatRaceGame.mode {
            let game = CatRaceGame(options: self.options.catRace)
            let match = Match(
                id: id, handler: game, encoders: [catRaceNativeEncoder(matchID: id)], clock: self.clock,
                gracePeriod: self.options.seatGrace, capacity: capacity, logger: self.logger)
            hosted = NativeMatch.catRace(match: match, label: label)
        } else {
            let match = Match(
                id: id, handler: RelayGame(options: .init()), encoders: [relayEncoder(matchID: id)], clock: self.clock,
                gracePeriod: self.options.seatGrace, capacity: capacity, logger: self.logger)
            hosted = NativeMatch.relay(match: match, label: label)
        }
        hosted.onEnd = { [unowned self] ended in
            self.matches[ended.id] = nil
            for session in ended.seatedSessions {
                self.seats[ObjectIdentifier(session)]?[ended.id] = nil
            }
        }
        self.matches[id] = hosted
        self.logger.info("match created", metadata: ["match": "\(id)", "mode": "\(mode)", "player": "\(session.playerID)"])
        return self.join(id, session: session)
    }

    /// The game modes a native client can create.
    static let modes = [RelayGame.mode, CatRaceGame.mode]

    private var tooManyMatches: NativeError {
        NativeError(.tooManyMatches, "already in \(self.options.maxMatchesPerPlayer) matches (--max-matches-per-player)")
    }

    private func join(_ matchID: MatchID, session: Session) -> Result<NativeMatchInfo, NativeError> {
        guard let match = self.matches[matchID], !match.isEnded else {
            return .failure(NativeError(.noSuchMatch, "no match \(matchID)"))
        }
        if self.seats[ObjectIdentifier(session)]?[matchID] != nil {
            return .failure(NativeError(.alreadyInMatch, "already in match \(matchID)"))
        }
        guard (self.seats[ObjectIdentifier(session)]?.count ?? 0) < self.options.maxMatchesPerPlayer else {
            return .failure(self.tooManyMatches)
        }
        let link = SessionSeatLink(session: session)
        switch match.join(session.playerID, link: link) {
        case .success(let seat):
            self.seats[ObjectIdentifier(session), default: [:]][matchID] = (seat, link)
            return .success(match.info())
        case .failure(let refusal):
            switch refusal {
            case .matchEnded: return .failure(NativeError(.matchEnded, "\(refusal)"))
            case .alreadySeated: return .failure(NativeError(.alreadyInMatch, "\(refusal)"))
            case .full: return .failure(NativeError(.matchFull, "\(refusal)"))
            case .refusedByGame: return .failure(NativeError(.joinRefused, "\(refusal)"))
            }
        }
    }

    /// `session`'s player said goodbye: the session ends and its matches see it leave.
    func goodbye(_ session: Session) {
        self.sessions.end(session, error: nil)
    }

    /// Ends every match (players are told MATCH_ENDED) and every session (SHUTTING_DOWN).
    func shutDown() {
        for match in Array(self.matches.values) {
            match.end(reason: "server shutting down")
        }
        self.sessions.endAll(error: NativeError(.shuttingDown, "the server is shutting down"))
    }
}
