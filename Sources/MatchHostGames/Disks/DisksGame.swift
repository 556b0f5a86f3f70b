import MatchHostCore
import MatchHostWire
import NIOCore

/// The Disks rules on the match runtime: the server spawns coloured disks at random points,
/// the first tap to reach it hits a disk, and the server keeps the score.
///
/// Phases: ``DisksPhase/waiting`` until ``Options/minimumPlayers`` are connected (checked each
/// tick), then ``DisksPhase/playing`` (STATE to everyone, then a disk every
/// ``Options/spawnInterval`` and the time limit running) until a player reaches
/// ``Options/scoreLimit``, the time is up, or the others have left; then GAME_OVER to everyone
/// and the match ends with a ``DisksResult``.
///
/// One TICK per tick goes to everyone: what spawned, was hit since the last tick, or expired.
/// A tick with nothing in it only keeps time, so it goes unreliably (a player who is away does
/// not get a backlog of them); one with news goes reliably. Taps are applied as they arrive
/// (first tap wins) and announced in the next TICK; a tap that hits nothing gets TAP_MISSED,
/// to the tapper only. Taps past ``Options/maxTapsPerSecond`` are ignored and counted.
///
/// `tick(in:)` reuses its lists: after warm-up, a tick allocates only the broadcast's buffer.
public final class DisksGame: GameHandler {
    /// A Disks client message (TAP), as decoded from `MATCH_INPUT`.
    public typealias Input = DisksClientMessage
    /// A Disks server message, to be encoded into `MATCH_EVENT`.
    public typealias Event = DisksServerMessage
    /// See ``DisksResult``.
    public typealias Result = DisksResult

    /// The mode name native clients use to create a Disks match.
    public static let mode = "disks"

    /// The options this match was created with.
    public let options: Options
    /// ``Options/tickInterval``.
    public let tickInterval: TimeAmount?
    /// Where the game is.
    public private(set) var phase: DisksPhase = .waiting
    /// The number of ticks run since the match started.
    public private(set) var tickNumber: UInt32 = 0
    /// Taps ignored for coming faster than ``Options/maxTapsPerSecond``.
    public private(set) var rateLimitedTaps = 0
    /// Called with the seat of every tap ignored for its rate, for logs and metrics.
    public var onRateLimited: ((Int) -> Void)?

    private var scores: [UInt16] = []
    private var limiters: [DisksTapLimiter] = []
    private var field: DisksField
    private var random: DisksRandom
    private var endsAt: NIODeadline = .uptimeNanoseconds(0)
    private var nextSpawnAt: NIODeadline = .uptimeNanoseconds(0)
    // What the next TICK reports; emptied, keeping their storage, after each one.
    private var spawned: [DisksDisk] = []
    private var hits: [DisksHit] = []
    private var expired: [UInt32] = []

    /// Creates a game in the waiting phase.
    public init(options: Options) {
        self.options = options
        self.tickInterval = options.tickInterval
        self.random = DisksRandom(seed: options.seed)
        // Hit disks stay in the field until they would have expired, so it holds a few more than the live limit.
        self.field = DisksField(expectedCount: options.maxLiveDisks * 2)
        self.spawned.reserveCapacity(4)
        self.hits.reserveCapacity(options.maxLiveDisks)
        self.expired.reserveCapacity(options.maxLiveDisks)
    }

    /// The score of the player at `seat`.
    public func score(seat: Int) -> UInt16 {
        self.scores[seat]
    }

    /// How many disks can be hit now.
    public var liveDiskCount: Int { self.field.liveCount }

    /// The whole game as STATE reports it.
    public func state(in match: Match<DisksGame>) -> DisksState {
        let now = match.clock.now
        return DisksState(
            phase: self.phase, tick: self.tickNumber, serverTime: UInt64(now.uptimeNanoseconds),
            timeLeftMilliseconds: self.timeLeftMilliseconds(at: now), scoreLimit: self.options.scoreLimit,
            disks: self.field.liveDisks, scores: self.scoreList(in: match))
    }

    // MARK: GameHandler

    /// A new player starts at 0; if here, it gets STATE.
    public func playerJoined(_ player: PlayerID, seat: Int, present: Bool, in match: Match<DisksGame>) {
        self.scores.append(0)
        self.limiters.append(DisksTapLimiter(rate: self.options.maxTapsPerSecond))
        if present {
            match.send(.state(self.state(in: match)), to: .only(seat: seat))
        }
    }

    /// A player arriving at its reserved seat, coming back, or on a new connection gets STATE.
    public func playerRejoined(seat: Int, firstArrival: Bool, in match: Match<DisksGame>) {
        match.send(.state(self.state(in: match)), to: .only(seat: seat))
    }

    /// Everyone gone: the match is abandoned. During play, when the game needs two players
    /// and one is left, that one wins.
    public func playerLeft(seat: Int, reason: LeaveReason, in match: Match<DisksGame>) {
        guard self.phase != .over else { return }
        let remaining = match.activeSeatCount
        if remaining == 0 {
            self.phase = .over
            match.end(.abandoned(reason: "every player left"))
        } else if self.phase == .playing, remaining == 1, self.options.minimumPlayers >= 2 {
            self.finish(.opponentsLeft, at: match.clock.now, in: match)
        }
    }

    /// Applies a tap: a hit (announced in the next TICK) or TAP_MISSED to the tapper.
    public func receive(_ input: DisksClientMessage, fromSeat seat: Int, in match: Match<DisksGame>) {
        switch input {
        case .tap(let tap):
            let now = match.clock.now
            guard self.limiters[seat].allow(at: now) else {
                self.rateLimitedTaps += 1
                self.onRateLimited?(seat)
                return
            }
            guard self.phase == .playing else {
                self.miss(tap, .notPlaying, seat: seat, in: match)
                return
            }
            switch self.field.tap(x: tap.x, y: tap.y) {
            case .noDisk:
                self.miss(tap, .noDisk, seat: seat, in: match)
            case .alreadyHit:
                self.miss(tap, .alreadyHit, seat: seat, in: match)
            case .hit(let diskID):
                let score = self.scores[seat] == .max ? .max : self.scores[seat] + 1
                self.scores[seat] = score
                self.hits.append(DisksHit(diskID: diskID, seat: UInt8(seat), score: score))
                if score >= self.options.scoreLimit {
                    // The game ends now, not at the next tick: this TICK shows the winning hit.
                    self.tickNumber &+= 1
                    self.broadcastTick(at: now, in: match)
                    self.finish(.scoreLimit, at: now, in: match)
                }
            }
        }
    }

    /// Starts play once enough players are here; during play expires and spawns disks,
    /// sends the TICK, and ends the game at the time limit.
    public func tick(in match: Match<DisksGame>) {
        // The tick's due time, not the clock's now (later on a busy loop): clients and the
        // benchmark measure tick-to-delivery from it.
        let now = match.tickDeadline
        self.tickNumber &+= 1
        switch self.phase {
        case .over:
            return
        case .waiting:
            guard self.connectedCount(in: match) >= self.options.minimumPlayers else { return }
            self.phase = .playing
            self.endsAt = now + self.options.timeLimit
            self.nextSpawnAt = now
            match.send(.state(self.state(in: match)), to: .all)
        case .playing:
            break
        }
        self.field.removeExpired(at: now, into: &self.expired)
        while self.nextSpawnAt <= now {
            if self.field.liveCount < self.options.maxLiveDisks {
                let disk = self.field.spawn(
                    radius: self.options.diskRadius, colorCount: self.options.colorCount,
                    expiresAt: now + self.options.diskLifetime, random: &self.random)
                self.spawned.append(disk)
            }
            self.nextSpawnAt = self.nextSpawnAt + self.options.spawnInterval
        }
        self.broadcastTick(at: now, in: match)
        if now >= self.endsAt {
            self.finish(.timeLimit, at: now, in: match)
        }
    }

    // MARK: Helpers

    /// Sends one TICK with everything pending, then empties the pending lists, keeping their
    /// storage. The event is built in here so that its references to the lists are gone by the
    /// time they are emptied (emptying a shared array would allocate a new one).
    private func broadcastTick(at now: NIODeadline, in match: Match<DisksGame>) {
        self.sendTick(at: now, in: match)
        self.spawned.removeAll(keepingCapacity: true)
        self.hits.removeAll(keepingCapacity: true)
        self.expired.removeAll(keepingCapacity: true)
    }

    private func sendTick(at now: NIODeadline, in match: Match<DisksGame>) {
        let tick = DisksTick(
            tick: self.tickNumber, serverTime: UInt64(now.uptimeNanoseconds),
            timeLeftMilliseconds: self.timeLeftMilliseconds(at: now), spawned: self.spawned, hits: self.hits,
            expired: self.expired)
        match.send(.tick(tick), to: .all, reliably: !tick.isEmpty)
    }

    private func miss(_ tap: DisksTap, _ reason: DisksMissReason, seat: Int, in match: Match<DisksGame>) {
        match.send(
            .tapMissed(DisksTapMissed(x: tap.x, y: tap.y, reason: reason)), to: .only(seat: seat), reliably: false)
    }

    /// The match ends with its result, announced by GAME_OVER to everyone (once the result is
    /// stored, where the match's owner stores it: see ``Match/holdsEndAnnouncement``).
    private func finish(_ reason: DisksGameOverReason, at now: NIODeadline, in match: Match<DisksGame>) {
        self.phase = .over
        let winners = self.winners(for: reason, in: match)
        let gameOver = DisksGameOver(reason: reason, winners: winners.map { UInt8($0) }, scores: self.scoreList(in: match))
        let players = match.seats.indices.map { seat in
            DisksResult.Player(
                playerID: match.seats[seat].player, seat: seat, score: self.scores[seat], won: winners.contains(seat),
                left: match.seats[seat].presence == .left)
        }
        match.end(.finished(DisksResult(reason: reason, players: players))) { match in
            match.send(.gameOver(gameOver), to: .all)
        }
    }

    /// The seats still in the game with the top score: one at the score limit or when the others
    /// left, all tied at the time limit, and nobody if nobody scored.
    private func winners(for reason: DisksGameOverReason, in match: Match<DisksGame>) -> [Int] {
        let present = match.seats.indices.filter { match.seats[$0].presence != .left }
        if reason == .opponentsLeft { return present }
        let top = present.map { self.scores[$0] }.max() ?? 0
        guard top > 0 else { return [] }
        return present.filter { self.scores[$0] == top }
    }

    private func scoreList(in match: Match<DisksGame>) -> [DisksScore] {
        match.seats.indices.map { seat in
            DisksScore(seat: UInt8(seat), playerID: match.seats[seat].player, score: self.scores[seat])
        }
    }

    private func connectedCount(in match: Match<DisksGame>) -> Int {
        match.seats.reduce(0) { $0 + ($1.presence == .connected ? 1 : 0) }
    }

    private func timeLeftMilliseconds(at now: NIODeadline) -> UInt32 {
        switch self.phase {
        case .waiting: return UInt32(clamping: self.options.timeLimit.nanoseconds / 1_000_000)
        case .playing: return UInt32(clamping: max(0, (self.endsAt - now).nanoseconds) / 1_000_000)
        case .over: return 0
        }
    }
}
