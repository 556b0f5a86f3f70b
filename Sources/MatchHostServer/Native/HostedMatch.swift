import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

/// A native session's place in one match: the ``PlayerLink`` the match delivers through.
///
/// It delivers into the session, not a connection, so events for a player whose connection
/// dropped are kept (within the backlog bound) and resent on resume.
///
/// A player's seat is made before its MATCH_JOINED (or MATCHMAKER_MATCHED) goes out, and the
/// game may send to it at once (its STATE; with matchmaking, the PRESENCE of players seated
/// after it). A link made for a join holds those until ``welcome()``, after the response, so
/// that a client never hears of a match before it is told it is in it.
final class SessionSeatLink: PlayerLink {
    let encoding = WireEncoding.native
    /// The player's session; a newer one when the player authenticates again
    /// (``NativeWorld/sessionStarted(_:)`` hands the seat over).
    var session: Session
    /// The reliable frames held until the welcome; nil once welcomed. At most what the game
    /// sends in the one loop turn between the seat and the response.
    private var held: [ByteBuffer]?

    /// - Parameter welcomed: false for a seat whose join response has not gone out yet.
    init(session: Session, welcomed: Bool) {
        self.session = session
        self.held = welcomed ? nil : []
    }

    var keepsDeliveringWhileAway: Bool { true }

    func deliver(_ frame: ByteBuffer) {
        if self.held != nil {
            self.held?.append(frame)
        } else {
            self.session.sendReliable(frame)
        }
    }

    /// Unreliable frames before the welcome are dropped: they may be, and are stale by then.
    func deliverUnreliably(_ frame: ByteBuffer) {
        guard self.held == nil else { return }
        self.session.sendUnreliable(frame)
    }

    /// The join's response has gone out: what the game sent meanwhile follows it, in order.
    func welcome() {
        guard let frames = self.held else { return }
        self.held = nil
        for frame in frames {
            self.session.sendReliable(frame)
        }
    }
}

/// A match as the native protocol sees it, whatever its game: the same requests (join,
/// leave, data) reach any game's ``Match`` through this.
protocol HostedMatch: AnyObject {
    var id: MatchID { get }
    var mode: String { get }
    var label: String { get }
    var isEnded: Bool { get }
    /// The most players.
    var capacity: Int { get }
    /// Players seated and not gone.
    var activePlayerCount: Int { get }
    /// Whether a new player could take a seat now (``Match/hasRoom``).
    var hasRoom: Bool { get }
    /// The code that joins a private match; nil for a public one.
    var inviteCode: String? { get set }
    /// Whether the lobby lists it (public matches created by a player).
    var isListed: Bool { get set }
    /// Called once when the match ends. Its players hear how it ended (the game's last events,
    /// then MATCH_ENDED) only when the owner calls ``announceEnd()``: after it has stored the
    /// result.
    var onEnd: ((any HostedMatch) -> Void)? { get set }
    /// Called after every change of a seat's presence (the lobby shows the player count).
    var onChange: ((any HostedMatch) -> Void)? { get set }
    /// Called when a round of the match is won (a Cat Race race), with the match's standing
    /// so far as storage keeps it, and `announce`, which tells the players: the owner calls it
    /// once the standing is stored, so that nobody hears of a result a crash could lose.
    var onStanding: ((_ match: any HostedMatch, _ standing: MatchResultRecord, _ announce: @escaping () -> Void) -> Void)? { get set }
    /// The sessions seated in the match and not gone.
    var seatedSessions: [Session] { get }
    /// The links of the seats not left (a native player's; a tutorial racer's is no session's).
    var seatLinks: [SessionSeatLink] { get }
    /// Every player who took a seat, in seat order (those gone too).
    var seatPlayers: [PlayerID] { get }
    /// How the match is stored.
    var storageKind: MatchStorageKind { get }
    /// How the match ended, as storage keeps it; nil until it ends (and for a relay).
    var storedEnding: StoredEnding? { get }
    /// The reason MATCH_ENDED gives; nil until it ends.
    var endReason: String? { get }
    /// A turn-based game's whole state once play has started (nil before, and for other games):
    /// what is stored when the match is.
    func storedTurnState() -> [UInt8]?
    func info() -> NativeMatchInfo
    func join(_ player: PlayerID, link: SessionSeatLink) -> Result<Int, JoinRefusal>
    /// Holds a seat for `player`, who is not connected yet (a restored game's players); its
    /// grace period starts now.
    func reserve(_ player: PlayerID) -> Result<Int, JoinRefusal>
    /// The player at `seat` has been told it joined (its MATCH_JOINED response went out).
    func welcomed(seat: Int)
    func leave(seat: Int, reason: LeaveReason)
    func away(seat: Int, link: SessionSeatLink)
    func back(seat: Int, link: SessionSeatLink)
    /// Hands a `SEND_DATA` to the game.
    /// - Returns: false if the game takes no data (only `relay` does) or none of the targets is
    ///   in the match: the data is dropped.
    func sendData(fromSeat seat: Int, targets: [String], payload: ByteBuffer, reliable: Bool) -> Bool
    /// Hands a `MATCH_INPUT` to the game.
    /// - Throws: the game's decoding error for input it cannot read (the connection is closed).
    func input(fromSeat seat: Int, bytes: ByteBuffer) throws
    func end(reason: String)
    /// Tells the players still seated how the match ended (see ``onEnd``), once.
    func announceEnd()
    /// Ends the match in this process without telling its players: a stored turn-based game
    /// at a graceful stop, which goes on after the restart (its players reconnect and get
    /// MATCH_RESUMED, as after a crash), so a MATCH_ENDED now would be untrue.
    func suspend(reason: String)
}

/// Hosts a ``Match`` of any game for native sessions: tells the other players of every
/// presence change, and everyone still seated how the match ended when its owner announces it
/// (``announceEnd()``).
final class NativeMatch<Handler: GameHandler>: HostedMatch {
    /// Turns a `SEND_DATA` into the game's input, or `nil` to drop it.
    typealias DataAdapter = (_ match: Match<Handler>, _ seat: Int, _ targets: [String], _ payload: ByteBuffer, _ reliable: Bool) ->
        Handler.Input?
    /// Decodes a `MATCH_INPUT`, or returns `nil` for input the game takes no notice of.
    typealias InputDecoder = (_ bytes: ByteBuffer) throws -> Handler.Input?

    let match: Match<Handler>
    let mode: String
    let label: String
    var inviteCode: String?
    var isListed = true
    var onEnd: ((any HostedMatch) -> Void)?
    var onChange: ((any HostedMatch) -> Void)?
    var onStanding: ((_ match: any HostedMatch, _ standing: MatchResultRecord, _ announce: @escaping () -> Void) -> Void)?
    /// Called after each joining player's MATCH_JOINED response and the events held for it
    /// (Cat Race shows everyone the new line-up).
    var afterJoin: ((Match<Handler>, Int) -> Void)?
    var storageKind = MatchStorageKind.notStored
    /// Turns how the match ended into what storage keeps (set with ``storageKind``).
    var storeEnding: ((MatchOutcome<Handler.Result>, Match<Handler>) -> StoredEnding)?
    /// The game's state to store, once play has started (turn-based games).
    var turnState: ((Match<Handler>) -> [UInt8]?)?
    private(set) var storedEnding: StoredEnding?
    private(set) var endReason: String?
    /// Set by ``suspend(reason:)``: the players are not told the match ended.
    private var isSuspending = false
    private var isEndAnnounced = false
    private let dataInput: DataAdapter?
    private let decodeInput: InputDecoder?
    private let allocator = ByteBufferAllocator()

    init(match: Match<Handler>, mode: String, label: String, dataInput: DataAdapter?, decodeInput: InputDecoder?) {
        self.match = match
        self.mode = mode
        self.label = label
        self.dataInput = dataInput
        self.decodeInput = decodeInput
        match.onPresenceChange = { [unowned self] match, seat, change in
            self.announce(change, of: seat, in: match)
            self.onChange?(self)
        }
        match.holdsEndAnnouncement = true
        match.onEnd = { [unowned self] match, outcome in
            self.storedEnding = self.storeEnding?(outcome, match)
            self.endReason = outcome.description
            guard let onEnd = self.onEnd else { return self.announceEnd() }
            onEnd(self)
        }
        match.start()
    }

    func announceEnd() {
        guard let reason = self.endReason, !self.isEndAnnounced else { return }
        self.isEndAnnounced = true
        self.match.announceEnd()
        guard !self.isSuspending else { return }
        let ended = NativeServerMessage.matchEnded(matchID: self.match.id, reason: reason).encoded(allocator: self.allocator)
        for seat in self.match.seats where seat.presence != .left && seat.link?.encoding == .native {
            seat.link?.deliver(ended)
        }
    }

    var id: MatchID { self.match.id }
    var isEnded: Bool { self.match.isEnded }
    var capacity: Int { self.match.capacity }
    var activePlayerCount: Int { self.match.activeSeatCount }
    var hasRoom: Bool { self.match.hasRoom }

    var seatedSessions: [Session] { self.seatLinks.map(\.session) }

    var seatLinks: [SessionSeatLink] {
        self.match.seats.compactMap { seat in seat.presence == .left ? nil : seat.link as? SessionSeatLink }
    }

    var seatPlayers: [PlayerID] { self.match.seats.map(\.player) }

    func storedTurnState() -> [UInt8]? {
        self.turnState?(self.match)
    }

    func info() -> NativeMatchInfo {
        NativeMatchInfo(
            matchID: self.match.id, mode: self.mode, label: self.label, capacity: UInt8(clamping: self.match.capacity),
            players: self.match.seats.compactMap { seat in
                switch seat.presence {
                case .connected: return .init(playerID: seat.player, presence: .connected)
                case .away: return .init(playerID: seat.player, presence: .away)
                case .reserved: return .init(playerID: seat.player, presence: .reserved)
                case .left: return nil
                }
            },
            inviteCode: self.inviteCode ?? "")
    }

    func join(_ player: PlayerID, link: SessionSeatLink) -> Result<Int, JoinRefusal> {
        self.match.join(player, link: link)
    }

    func reserve(_ player: PlayerID) -> Result<Int, JoinRefusal> {
        self.match.join(player, link: nil)
    }

    func welcomed(seat: Int) {
        guard !self.match.isEnded else { return }
        self.afterJoin?(self.match, seat)
    }

    func leave(seat: Int, reason: LeaveReason) {
        self.match.leave(seat: seat, reason: reason)
    }

    func away(seat: Int, link: SessionSeatLink) {
        self.match.disconnect(seat: seat, link: link)
    }

    func back(seat: Int, link: SessionSeatLink) {
        self.match.connect(seat: seat, link: link)
    }

    func sendData(fromSeat seat: Int, targets: [String], payload: ByteBuffer, reliable: Bool) -> Bool {
        guard let input = self.dataInput?(self.match, seat, targets, payload, reliable) else { return false }
        self.match.receive(input, fromSeat: seat)
        return true
    }

    func input(fromSeat seat: Int, bytes: ByteBuffer) throws {
        guard let input = try self.decodeInput?(bytes) else { return }
        self.match.receive(input, fromSeat: seat)
    }

    func end(reason: String) {
        self.match.end(.abandoned(reason: reason))
    }

    func suspend(reason: String) {
        self.isSuspending = true
        self.match.suspend(reason: reason)
    }

    /// One PRESENCE message, encoded once, to every other seat that can take it.
    private func announce(_ change: PresenceChange, of seat: Int, in match: Match<Handler>) {
        let wire: (NativePresenceChange, NativeLeaveReason)
        switch change {
        case .joined: wire = (.joined, .none)
        case .disconnected: wire = (.disconnected, .none)
        case .reconnected: wire = (.reconnected, .none)
        case .left(.left): wire = (.left, .asked)
        case .left(.graceExpired): wire = (.left, .graceExpired)
        case .left(.sessionEnded): wire = (.left, .sessionEnded)
        }
        let message = NativeServerMessage.presence(
            matchID: match.id, playerID: match.seats[seat].player, change: wire.0, reason: wire.1
        ).encoded(allocator: self.allocator)
        // Tutorial clients in a mixed Cat Race have no PRESENCE message.
        for index in match.seats.indices where index != seat && match.seats[index].link?.encoding == .native {
            match.seats[index].link?.deliver(message)
        }
    }
}

extension NativeMatch where Handler == RelayGame {
    /// A relay match: `SEND_DATA` targets are mapped from player ids to seats; ids not in the
    /// match are skipped, and data addressed only to such ids is dropped.
    static func relay(match: Match<RelayGame>, label: String) -> NativeMatch<RelayGame> {
        NativeMatch(
            match: match, mode: RelayGame.mode, label: label,
            dataInput: { match, _, targets, payload, reliable in
                // Each seat once: the list has up to 255 ids, a match at most its capacity of seats.
                var seats: [Int] = []
                for target in targets {
                    if let seat = match.seatIndex(of: target), !seats.contains(seat) { seats.append(seat) }
                }
                if !targets.isEmpty && seats.isEmpty { return nil }
                return RelayInput(targetSeats: seats, payload: payload, reliable: reliable)
            },
            decodeInput: nil)
    }
}

extension NativeMatch where Handler == CatRaceGame {
    /// A Cat Race over the native protocol: MATCH_INPUT carries a Cat Race client message body
    /// (MOVED_SELF or RESTART_MATCH; the others mean nothing inside a match and are ignored),
    /// MATCH_EVENT a Cat Race server message body. Every join shows everyone the line-up
    /// (MATCH_STARTED), as a reserved seat filled late does on port 1955.
    /// START_MATCH names tutorial clients (by their Cat Race player ids) to race in this
    /// match: `invite` reserves their seats. A native racer shows as the start of its id until
    /// `aliasOf` answers with its stored alias (SET_ALIAS), then by that: the line-up goes out
    /// again if it changed.
    static func catRace(
        match: Match<CatRaceGame>, label: String, invite: @escaping (Match<CatRaceGame>, [PlayerID]) -> Void,
        aliasOf: @escaping (PlayerID, @escaping (String) -> Void) -> Void
    ) -> NativeMatch<CatRaceGame> {
        let hosted = NativeMatch(
            match: match, mode: CatRaceGame.mode, label: label, dataInput: nil,
            decodeInput: { [unowned match] bytes in
                switch try CatRaceClientMessage(frameBody: bytes) {
                case .movedSelf(let moved): return .move(toX: moved.posX)
                case .restartMatch: return .restart
                case .startMatch(let start):
                    invite(match, start.playerIDs)
                    return nil
                case .playerConnected, .notifyReady: return nil
                }
            })
        hosted.afterJoin = { match, seat in
            let player = match.seats[seat].player
            // A player back in its seat keeps the alias it had.
            if match.handler.alias(seat: seat).isEmpty {
                match.handler.setAlias(NativeAuthenticator.defaultAlias(of: player), seat: seat)
            }
            match.send(.matchStarted(match.handler.snapshot(in: match)), to: .all)
            aliasOf(player) { [weak match] alias in
                guard let match, !match.isEnded, match.seats.indices.contains(seat), match.seats[seat].player == player,
                    match.handler.alias(seat: seat) != alias
                else { return }
                match.handler.setAlias(alias, seat: seat)
                match.send(.matchStarted(match.handler.snapshot(in: match)), to: .all)
            }
        }
        return hosted
    }
}

/// The native encoding of Cat Race events: `MATCH_EVENT` around the Cat Race frame (whose
/// 4-byte length prefix is exactly the `bytes` field's count).
func catRaceNativeEncoder(matchID: MatchID) -> EventEncoder<CatRaceServerMessage> {
    EventEncoder(encoding: .native) { event, buffer in
        buffer.writeWireByte(NativeMessageType.matchEvent.rawValue)
        buffer.writeNativeUInt64(matchID)
        event.encodeFrame(into: &buffer)
    }
}

/// The native encoding of relay events: `MATCH_DATA`.
func relayEncoder(matchID: MatchID) -> EventEncoder<RelayData> {
    EventEncoder(encoding: .native) { event, buffer in
        NativeServerMessage.matchData(matchID: matchID, sender: event.sender, payload: event.payload).encode(into: &buffer)
    }
}
