import Logging
import MatchHostCore
import MatchHostWire
import NIOCore

/// What a racer can do.
public enum CatRaceInput: Sendable, Hashable {
    /// MOVED_SELF: the racer claims this absolute x.
    case move(toX: UInt32)
    /// RESTART_MATCH: race again after a win.
    case restart
}

/// Why the server did not apply a racer's input. Refusals are silent on the wire (the
/// protocol has no error message); they are logged and counted.
public enum CatRaceRefusal: String, Sendable, Hashable, CaseIterable {
    /// A move while the race is over.
    case raceOver = "race_over"
    /// A move to the racer's own position or behind it.
    case notForward = "not_forward"
    /// A move that is not a whole number of 10-point steps.
    case notWholeSteps = "not_whole_steps"
    /// More steps than the racer's bucket holds (tapping faster than the limit, or a jump): the
    /// racer moved as many as the bucket held, or none if it was empty.
    case tooFast = "too_fast"
    /// RESTART_MATCH while the race is still running.
    case raceNotOver = "race_not_over"
}

/// Options of a Cat Race match.
public struct CatRaceOptions: Sendable, Hashable {
    /// Steps per second refilled into each racer's bucket (`--max-tap-rate`, default 20).
    public var maxTapRate: Double
    /// Steps a racer's bucket holds when full (5).
    public var bucketCapacity: Int

    /// Creates options.
    public init(maxTapRate: Double = 20, bucketCapacity: Int = 5) {
        precondition(maxTapRate > 0 && bucketCapacity > 0, "tap rate and bucket must be positive")
        self.maxTapRate = maxTapRate
        self.bucketCapacity = bucketCapacity
    }
}

/// The Cat Race rules on the match runtime: the server, not the client, decides where a
/// racer is and who won.
///
/// Each racer has a bucket of at most ``CatRaceOptions/bucketCapacity`` steps, refilled
/// continuously at ``CatRaceOptions/maxTapRate`` steps per second and full at every start
/// and restart. MOVED_SELF(x) is a claim of k whole steps of 10 ahead (k ≥ 1): the racer
/// moves min(k, the bucket's whole steps) of them, and the rest are refused (``CatRaceRefusal/tooFast``);
/// anything else is refused, logged and counted. Moving part of a claim, not refusing it whole,
/// is what lets a client whose taps a stalled network delivered in a burst catch up: the
/// tutorial's client claims absolute positions, so once it is more steps ahead than a bucket
/// holds, no whole claim could ever pass again. It gains nothing over tapping at the limit.
/// The first racer at or past x = 445 wins.
public final class CatRaceGame: GameHandler {
    /// Cat Race events are its wire messages; the native protocol will wrap them.
    public typealias Event = CatRaceServerMessage
    /// See ``CatRaceInput``.
    public typealias Input = CatRaceInput
    /// The winning seat. Cat Race matches restart, so a match has many winners and itself only
    /// ever ends abandoned; each race's winner is logged and reported to ``onRaceWon``.
    public typealias Result = Int

    struct Racer {
        var alias: String
        var x: UInt32 = CatRaceTrack.startX
        /// Bucket content in nano-steps, so refill arithmetic stays exact in integers.
        var tokens: Int64
        var refilledAt: NIODeadline
    }

    /// The mode name native clients use to create a Cat Race.
    public static let mode = "catrace"

    /// The options this match was created with.
    public let options: CatRaceOptions
    /// The race's state as MATCH_STARTED reports it.
    public private(set) var state: MatchStarted.State = .active
    /// Called for every refused input, for logs and metrics.
    public var onRefusal: ((CatRaceRefusal, Int) -> Void)?
    /// Called with the winner's seat each time a race is won (a match runs a race per restart),
    /// so that the host can keep results. The race's GAME_OVER goes out when the host calls
    /// `announce`: once the result is committed (or the store failed it), so that no racer is
    /// told of a result a crash could lose. Until then the race takes no move, a RESTART_MATCH
    /// waits for the GAME_OVER, and MATCH_STARTED shows the race as still active; a match that
    /// ends meanwhile announces nothing (its racers are told it ended). Without this, GAME_OVER
    /// goes out at once.
    public var onRaceWon: ((_ seat: Int, _ announce: @escaping () -> Void) -> Void)?
    /// While set, a racer taking its reserved seat shows nobody the line-up: the host seating
    /// several racers at once (START_MATCH in a native race) sends MATCH_STARTED once, after
    /// the last, so that no client sees the line-up twice.
    public var holdsLineUp = false

    private var racers: [Racer] = []
    /// The last race's winner, while its GAME_OVER waits for ``onRaceWon``'s announcement.
    private var unannouncedWinner: Int?
    /// A RESTART_MATCH that came while the GAME_OVER waited: made right after it. The
    /// tutorial's protocol cannot refuse one, and a client that dropped it would wait forever.
    private var restartsAfterAnnouncement = false
    private let capacityNanos: Int64

    /// Creates a race.
    public init(options: CatRaceOptions) {
        self.options = options
        self.capacityNanos = Int64(options.bucketCapacity) * 1_000_000_000
    }

    /// Sets the alias MATCH_STARTED shows for the racer at `seat` (a returning player may
    /// have a new one).
    public func setAlias(_ alias: String, seat: Int) {
        self.racers[seat].alias = alias
    }

    /// The alias MATCH_STARTED shows for the racer at `seat` (empty until one is set).
    public func alias(seat: Int) -> String {
        self.racers[seat].alias
    }

    /// The MATCH_STARTED snapshot of the race.
    public func snapshot(in match: Match<CatRaceGame>) -> MatchStarted {
        MatchStarted(
            // A race whose result is not told yet still looks active: a MATCH_STARTED must not
            // tell the result first (a racer who joins or comes back then gets it).
            state: self.unannouncedWinner == nil ? self.state : .active,
            racers: match.seats.indices.map { seat in
                MatchStarted.Racer(
                    playerID: match.seats[seat].player, alias: self.racers[seat].alias, posX: self.racers[seat].x)
            })
    }

    // MARK: GameHandler

    /// Room for 2 to 16 racers is enforced by the match's capacity; any player may join.
    public func joinAttempt(_ player: PlayerID, in match: Match<CatRaceGame>) -> JoinDecision { .accept }

    /// A new racer starts at the line with a full bucket.
    public func playerJoined(_ player: PlayerID, seat: Int, present: Bool, in match: Match<CatRaceGame>) {
        self.racers.append(Racer(alias: "", tokens: self.capacityNanos, refilledAt: match.clock.now))
    }

    /// A racer taking a reserved seat: everyone gets a fresh MATCH_STARTED so the new alias
    /// shows (unless the host ``holdsLineUp``). A racer coming back: only it gets the race as
    /// it is now.
    public func playerRejoined(seat: Int, firstArrival: Bool, in match: Match<CatRaceGame>) {
        if firstArrival && self.holdsLineUp { return }
        let snapshot = CatRaceServerMessage.matchStarted(self.snapshot(in: match))
        match.send(snapshot, to: firstArrival ? .all : .only(seat: seat))
    }

    /// A racer who stays away a whole grace period ends the match for everyone.
    public func playerLeft(seat: Int, reason: LeaveReason, in match: Match<CatRaceGame>) {
        let racer = "racer \(match.seats[seat].player)"
        switch reason {
        case .left: self.quit(reason: "\(racer) left", in: match)
        case .graceExpired: self.quit(reason: "\(racer) stayed away past the grace period", in: match)
        case .sessionEnded: self.quit(reason: "\(racer)'s session ended", in: match)
        }
    }

    /// Applies a move or a restart, or refuses it.
    public func receive(_ input: CatRaceInput, fromSeat seat: Int, in match: Match<CatRaceGame>) {
        switch input {
        case .move(let claimed):
            let (moved, refusal) = self.move(seat: seat, to: claimed, now: match.clock.now)
            if let refusal { self.onRefusal?(refusal, seat) }
            guard let x = moved else { return }
            match.send(.playerMoved(PlayerMoved(playerIndex: UInt8(seat), posX: x)), to: .allExcept(seat: seat))
            if x >= CatRaceTrack.finishX {
                self.state = .gameOver
                match.logger.info("race won", metadata: ["winner": "\(match.seats[seat].player)"])
                guard let onRaceWon = self.onRaceWon else {
                    return match.send(.gameOver(GameOver(winnerIndex: UInt8(seat))), to: .all)
                }
                self.unannouncedWinner = seat
                onRaceWon(seat) { [weak self, weak match] in
                    guard let self, let match, let winner = self.unannouncedWinner, !match.isEnded else { return }
                    self.unannouncedWinner = nil
                    match.send(.gameOver(GameOver(winnerIndex: UInt8(winner))), to: .all)
                    if self.restartsAfterAnnouncement {
                        self.restartsAfterAnnouncement = false
                        self.restart(in: match)
                    }
                }
            }
        case .restart:
            guard self.state == .gameOver else {
                self.onRefusal?(.raceNotOver, seat)
                return
            }
            guard self.unannouncedWinner == nil else {
                self.restartsAfterAnnouncement = true
                return
            }
            self.restart(in: match)
        }
    }

    /// Every racer back at the start with a full bucket, and MATCH_STARTED to all.
    private func restart(in match: Match<CatRaceGame>) {
        self.state = .active
        let now = match.clock.now
        for index in self.racers.indices {
            self.racers[index].x = CatRaceTrack.startX
            self.racers[index].tokens = self.capacityNanos
            self.racers[index].refilledAt = now
        }
        match.send(.matchStarted(self.snapshot(in: match)), to: .all)
    }

    /// Ends the match: NOT_IN_MATCH to every connected racer, then the match is over.
    /// Used when a racer quits (PLAYER_CONNECTED with continueMatch 0) or stays away.
    public func quit(reason: String, in match: Match<CatRaceGame>) {
        match.send(.notInMatch, to: .all)
        match.end(.abandoned(reason: reason))
    }

    /// The pure move rule: where the racer moved to (`nil`: nowhere), and why the claim was
    /// refused, or the part of it that was.
    func move(seat: Int, to x: UInt32, now: NIODeadline) -> (moved: UInt32?, refusal: CatRaceRefusal?) {
        guard self.state == .active else { return (nil, .raceOver) }
        var racer = self.racers[seat]
        guard x > racer.x else { return (nil, .notForward) }
        let delta = x - racer.x
        guard delta % CatRaceTrack.stepX == 0 else { return (nil, .notWholeSteps) }
        let steps = Int64(delta / CatRaceTrack.stepX)
        let elapsed = max(0, (now - racer.refilledAt).nanoseconds)
        let refill = Double(elapsed) * self.options.maxTapRate
        racer.tokens = refill >= Double(self.capacityNanos) ? self.capacityNanos : min(self.capacityNanos, racer.tokens + Int64(refill))
        racer.refilledAt = now
        let taken = min(steps, racer.tokens / 1_000_000_000)
        guard taken > 0 else {
            self.racers[seat] = racer
            return (nil, .tooFast)
        }
        racer.tokens -= taken * 1_000_000_000
        // No overflow: `taken` ≤ `steps`, so this is at most the claimed x.
        racer.x += UInt32(taken) * CatRaceTrack.stepX
        self.racers[seat] = racer
        return (racer.x, taken < steps ? .tooFast : nil)
    }
}
