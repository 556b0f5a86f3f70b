import Logging
import NIOCore

/// Identifies a match on this server.
public typealias MatchID = UInt64

/// Who a match event is for, by seat index.
public enum Audience: Sendable, Hashable {
    /// Every connected player.
    case all
    /// Every connected player but the one at this seat.
    case allExcept(seat: Int)
    /// Only the player at this seat, if connected.
    case only(seat: Int)
    /// Only the players at these seats, if connected: each once however often it is listed,
    /// and the event encoded once for all of them, as for a broadcast.
    case seats([Int])

    /// Whether the player at `seat` is in this audience (connected or not).
    fileprivate func includes(_ seat: Int) -> Bool {
        switch self {
        case .all: true
        case .allExcept(let excluded): seat != excluded
        case .only(let only): seat == only
        case .seats(let seats): seats.contains(seat)
        }
    }
}

/// Whether a seat's player is here.
public enum Presence: Sendable, Hashable {
    /// Connected; events reach it.
    case connected
    /// Its connection dropped; its grace timer runs.
    case away
    /// Seat held for a player who has not arrived yet; its grace timer runs.
    case reserved
    /// Gone for good; the seat keeps its index so other seats' indices never shift.
    case left
}

/// One running game: its players' seats, presence and the game's handler, confined to
/// one event loop.
///
/// The transport side calls ``join(_:link:)``, ``connect(seat:link:)``,
/// ``disconnect(seat:link:)``, ``leave(seat:)`` and ``receive(_:fromSeat:)``; the
/// game's handler calls ``send(_:to:)`` and ``end(_:)``. Every call must be made on the
/// match's event loop (or, in tests, on the thread that owns its ``ManualClock``).
///
/// A broadcast is encoded once per wire format among its recipients, and the same
/// buffer is handed to every recipient's ``PlayerLink``: no per-recipient encoding and
/// no per-recipient allocation.
public final class Match<Handler: GameHandler> {
    /// One player's place in the match.
    public struct Seat {
        /// The player in this seat.
        public let player: PlayerID
        /// Whether the player is here.
        public internal(set) var presence: Presence
        /// The player's connection while connected.
        public internal(set) var link: (any PlayerLink)?
        var graceTimer: MatchTimer?
        /// Bumped whenever the grace timer is started or stopped. An event loop may already
        /// have dequeued a timer when it is cancelled, so a firing timer checks that it is
        /// still the current one.
        var graceGeneration = 0
    }

    /// This match's id.
    public let id: MatchID
    /// The game's rules and state.
    public let handler: Handler
    /// Time and timers for this match.
    public let clock: any MatchClock
    /// How long an absent player keeps its seat.
    public let gracePeriod: TimeAmount
    /// The most seats this match may have.
    public let capacity: Int
    /// A logger carrying the match id.
    public var logger: Logger

    /// The seats, in join order; indices are stable for the match's life.
    public private(set) var seats: [Seat] = []
    /// When the tick now running (or the last one) was due: a game stamps its tick with this
    /// rather than the clock's now, which on a busy loop is a little later.
    public private(set) var tickDeadline = NIODeadline.uptimeNanoseconds(0)
    /// Whether ``end(_:)`` has run; an ended match ignores every call.
    public private(set) var isEnded = false
    /// Set by an owner that stores results: the game's last events (the `announcing` of
    /// ``end(_:announcing:)``, GAME_OVER say) then wait until it calls ``announceEnd()``, once
    /// the result is committed, so that no player is told a result a crash could lose.
    /// Otherwise they go out as the match ends.
    public var holdsEndAnnouncement = false
    /// Called once when the match ends, so that its owner can unbind players.
    public var onEnd: ((Match<Handler>, MatchOutcome<Handler.Result>) -> Void)?
    /// Called on every presence change of a seat, just before the handler hears of it, so that
    /// a transport can tell the other players before whatever the game does about it (a race
    /// that ends when a racer leaves says who left, then that it ended).
    public var onPresenceChange: ((Match<Handler>, Int, PresenceChange) -> Void)?

    private let encoders: [EventEncoder<Handler.Event>?]
    private let allocator: ByteBufferAllocator
    private var encodedScratch: [ByteBuffer?]
    private var tickTimer: MatchTimer?
    private var endAnnouncement: ((Match<Handler>) -> Void)?

    /// Creates a match. Call ``start()`` once the initial seats are placed.
    /// - Parameters:
    ///   - id: the match's id.
    ///   - handler: the game.
    ///   - encoders: one per wire format the match's players may speak.
    ///   - clock: time and timers; an ``EventLoopClock`` in production.
    ///   - gracePeriod: how long an absent or not-yet-arrived player keeps its seat.
    ///   - capacity: the most seats, at most 255 (seat indices go on the wire as a byte).
    ///   - logger: the base logger; the match adds its id.
    public init(
        id: MatchID,
        handler: Handler,
        encoders: [EventEncoder<Handler.Event>],
        clock: any MatchClock,
        gracePeriod: TimeAmount,
        capacity: Int,
        logger: Logger,
        allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) {
        precondition((1...255).contains(capacity), "a match holds 1 to 255 seats")
        self.id = id
        self.handler = handler
        self.clock = clock
        self.gracePeriod = gracePeriod
        self.capacity = capacity
        var table = [EventEncoder<Handler.Event>?](repeating: nil, count: WireEncoding.count)
        for encoder in encoders { table[encoder.encoding.rawValue] = encoder }
        self.encoders = table
        self.encodedScratch = [ByteBuffer?](repeating: nil, count: WireEncoding.count)
        self.allocator = allocator
        self.logger = logger
        self.logger[metadataKey: "match"] = "\(id)"
    }

    /// Starts the game's tick, if it has one. Ticks run at fixed deadlines
    /// (start + n × interval), so a late tick does not push the later ones back.
    public func start() {
        guard let interval = self.handler.tickInterval, !self.isEnded, self.tickTimer == nil else { return }
        self.scheduleTick(at: self.clock.now + interval, interval: interval)
    }

    private func scheduleTick(at deadline: NIODeadline, interval: TimeAmount) {
        // Weak: a cancelled timer may still run once if the loop had already dequeued it.
        self.tickTimer = self.clock.schedule(at: deadline) { [weak self] in
            guard let self, !self.isEnded else { return }
            self.tickDeadline = deadline
            self.handler.tick(in: self)
            guard !self.isEnded else { return }
            // Skip ticks that are already overdue rather than running a burst of them.
            var next = deadline + interval
            let now = self.clock.now
            while next <= now { next = next + interval }
            self.scheduleTick(at: next, interval: interval)
        }
    }

    // MARK: - Seats

    /// The seat index of `player`, if it has one.
    public func seatIndex(of player: PlayerID) -> Int? {
        self.seats.firstIndex { $0.player == player }
    }

    /// How many seats are not ``Presence/left``.
    public var activeSeatCount: Int {
        self.seats.reduce(0) { $0 + ($1.presence == .left ? 0 : 1) }
    }

    /// The most seats a match gives out over its life, counting the seats of players who
    /// have left (a seat keeps its index for good, and seat indices and per-seat lists go on
    /// the wire with a one-byte count). Without it, players joining and leaving a game that
    /// takes joins under way would grow the seats, and every message listing them, without end.
    public static var seatLimit: Int { 255 }

    /// Whether a new player could take a seat now, as far as the match goes (its game may
    /// still refuse): it has not ended, has a free seat, and has seats of its life left.
    public var hasRoom: Bool {
        !self.isEnded && self.activeSeatCount < self.capacity && self.seats.count < Self.seatLimit
    }

    /// Seats `player`. With a `link` the player is connected at once; without one the seat
    /// is reserved and its grace timer starts now.
    /// - Returns: the seat index, or the refusal (match ended or full, already seated, every
    ///   seat of its life given out, or the game said no).
    public func join(_ player: PlayerID, link: (any PlayerLink)?) -> Result<Int, JoinRefusal> {
        guard !self.isEnded else { return .failure(.matchEnded) }
        guard self.seatIndex(of: player) == nil else { return .failure(.alreadySeated) }
        guard self.activeSeatCount < self.capacity else { return .failure(.full(capacity: self.capacity)) }
        guard self.seats.count < Self.seatLimit else { return .failure(.seatsUsedUp(limit: Self.seatLimit)) }
        if case .refuse(let reason) = self.handler.joinAttempt(player, in: self) {
            return .failure(.refusedByGame(reason))
        }
        let seat = self.seats.count
        self.seats.append(Seat(player: player, presence: link == nil ? .reserved : .connected, link: link))
        if link == nil { self.startGrace(seat: seat) }
        self.onPresenceChange?(self, seat, .joined(present: link != nil))
        self.handler.playerJoined(player, seat: seat, present: link != nil, in: self)
        return .success(seat)
    }

    /// The player at `seat` is here on `link`: it arrives at a reserved seat, comes back
    /// within its grace period, or (already connected) moves to a newer connection.
    public func connect(seat: Int, link: any PlayerLink) {
        guard !self.isEnded, self.seats.indices.contains(seat) else { return }
        let previous = self.seats[seat].presence
        switch previous {
        case .left:
            return
        case .connected:
            self.seats[seat].link = link
            self.handler.playerRejoined(seat: seat, firstArrival: false, in: self)
        case .away, .reserved:
            self.stopGrace(seat: seat)
            self.seats[seat].presence = .connected
            self.seats[seat].link = link
            self.onPresenceChange?(self, seat, .reconnected(firstArrival: previous == .reserved))
            self.handler.playerRejoined(seat: seat, firstArrival: previous == .reserved, in: self)
        }
    }

    /// The connection `link` of the player at `seat` dropped. Ignored if the seat has
    /// moved to another connection since. A link that ``PlayerLink/keepsDeliveringWhileAway``
    /// stays attached and goes on taking events for the player's return.
    public func disconnect(seat: Int, link: any PlayerLink) {
        guard !self.isEnded, self.seats.indices.contains(seat),
            self.seats[seat].presence == .connected, self.seats[seat].link === link
        else { return }
        self.seats[seat].presence = .away
        if !link.keepsDeliveringWhileAway { self.seats[seat].link = nil }
        self.startGrace(seat: seat)
        self.onPresenceChange?(self, seat, .disconnected)
        self.handler.playerDisconnected(seat: seat, in: self)
    }

    /// The player at `seat` leaves for good.
    public func leave(seat: Int, reason: LeaveReason = .left) {
        self.removeSeat(seat, reason: reason)
    }

    private func startGrace(seat: Int) {
        self.seats[seat].graceGeneration += 1
        let generation = self.seats[seat].graceGeneration
        self.seats[seat].graceTimer = self.clock.schedule(after: self.gracePeriod) { [weak self] in
            guard let self, !self.isEnded, self.seats[seat].graceGeneration == generation else { return }
            self.logger.info("grace period expired", metadata: ["player": "\(self.seats[seat].player)"])
            self.removeSeat(seat, reason: .graceExpired)
        }
    }

    private func stopGrace(seat: Int) {
        self.seats[seat].graceGeneration += 1
        self.seats[seat].graceTimer?.cancel()
        self.seats[seat].graceTimer = nil
    }

    private func removeSeat(_ seat: Int, reason: LeaveReason) {
        guard !self.isEnded, self.seats.indices.contains(seat), self.seats[seat].presence != .left else { return }
        self.stopGrace(seat: seat)
        self.seats[seat].presence = .left
        self.seats[seat].link = nil
        self.onPresenceChange?(self, seat, .left(reason))
        self.handler.playerLeft(seat: seat, reason: reason, in: self)
    }

    // MARK: - Inputs and events

    /// Hands an input from the player at `seat` to the game. Inputs from seats that are
    /// not connected, or to an ended match, are dropped.
    public func receive(_ input: Handler.Input, fromSeat seat: Int) {
        guard !self.isEnded, self.seats.indices.contains(seat), self.seats[seat].presence == .connected else { return }
        self.handler.receive(input, fromSeat: seat, in: self)
    }

    /// Sends `event` to `audience`: encoded once per wire format in use, the same buffer
    /// written to every recipient.
    /// - Parameter reliably: false for events a player may miss (positions superseded by the
    ///   next tick, say); links that can drop them under pressure do.
    public func send(_ event: Handler.Event, to audience: Audience, reliably: Bool = true) {
        switch audience {
        case .only(let seat):
            guard self.seats.indices.contains(seat), let link = self.seats[seat].link else { return }
            let frame = self.encode(event, as: link.encoding)
            if reliably { link.deliver(frame) } else { link.deliverUnreliably(frame) }
        case .all, .allExcept, .seats:
            for index in self.seats.indices where audience.includes(index) {
                guard let link = self.seats[index].link else { continue }
                let slot = link.encoding.rawValue
                if self.encodedScratch[slot] == nil {
                    self.encodedScratch[slot] = self.encode(event, as: link.encoding)
                }
                if reliably {
                    link.deliver(self.encodedScratch[slot]!)
                } else {
                    link.deliverUnreliably(self.encodedScratch[slot]!)
                }
            }
            // Clear after, not before: the scratch is empty between broadcasts and holds no buffer.
            for index in self.encodedScratch.indices { self.encodedScratch[index] = nil }
        }
    }

    private func encode(_ event: Handler.Event, as encoding: WireEncoding) -> ByteBuffer {
        guard let encoder = self.encoders[encoding.rawValue] else {
            preconditionFailure("match \(self.id) has no encoder for wire encoding \(encoding.rawValue)")
        }
        var buffer = self.allocator.buffer(capacity: 64)
        encoder.encode(event, &buffer)
        return buffer
    }

    /// Ends the match: stops its tick and every grace timer, then tells the owner.
    /// Send any final events before calling this; later calls on the match do nothing.
    public func end(_ outcome: MatchOutcome<Handler.Result>) {
        self.end(outcome, announcing: nil)
    }

    /// Ends the match as ``end(_:)`` does, with events that tell its players how it ended:
    /// `announcement` sends them (to the seats as they are at the end), at once, or, when the
    /// owner ``holdsEndAnnouncement``, when it calls ``announceEnd()``.
    public func end(_ outcome: MatchOutcome<Handler.Result>, announcing announcement: ((Match<Handler>) -> Void)?) {
        self.finish(outcome, announcing: announcement, logged: "match ended")
    }

    /// Ends the match in this process only, for an owner that keeps it elsewhere and brings it
    /// back later (a stored turn-based game at a graceful stop): as ``end(_:)`` with
    /// `.abandoned(reason)`, but the log says it was suspended, not ended.
    public func suspend(reason: String) {
        self.finish(.abandoned(reason: reason), announcing: nil, logged: "match suspended")
    }

    private func finish(_ outcome: MatchOutcome<Handler.Result>, announcing announcement: ((Match<Handler>) -> Void)?, logged message: Logger.Message) {
        guard !self.isEnded else { return }
        self.isEnded = true
        self.tickTimer?.cancel()
        self.tickTimer = nil
        for index in self.seats.indices {
            self.stopGrace(seat: index)
        }
        self.endAnnouncement = announcement
        if !self.holdsEndAnnouncement { self.announceEnd() }
        self.logger.info(message, metadata: ["outcome": "\(outcome)"])
        self.onEnd?(self, outcome)
        self.onEnd = nil
    }

    /// Sends the events the game ended the match with (see ``holdsEndAnnouncement``), once;
    /// later calls do nothing.
    public func announceEnd() {
        guard let announcement = self.endAnnouncement else { return }
        self.endAnnouncement = nil
        announcement(self)
    }
}

/// Why ``Match/join(_:link:)`` did not seat a player.
public enum JoinRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The match has ended.
    case matchEnded
    /// The player already has a seat.
    case alreadySeated
    /// Every seat is taken.
    case full(capacity: Int)
    /// The match has given out ``Match/seatLimit`` seats over its life, counting those of
    /// players who left: it takes no one new.
    case seatsUsedUp(limit: Int)
    /// The game refused, for this reason.
    case refusedByGame(String)

    /// A short text for logs and error replies.
    public var description: String {
        switch self {
        case .matchEnded: return "the match has ended"
        case .alreadySeated: return "the player is already in this match"
        case .full(let capacity): return "the match is full (\(capacity) players)"
        case .seatsUsedUp(let limit): return "the match has seated the most players it takes over its life (\(limit)); start a new one"
        case .refusedByGame(let reason): return reason
        }
    }
}
