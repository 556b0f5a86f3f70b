import Logging
import MatchHostCore
import NIOCore
import Testing

/// A minimal game: counts ticks and echoes inputs to everyone else.
private final class EchoGame: GameHandler {
    typealias Options = TimeAmount?
    typealias Input = UInt8
    typealias Event = UInt8
    typealias Result = Void

    let tickInterval: TimeAmount?
    var ticks = 0
    var lefts: [(Int, LeaveReason)] = []
    var rejoins: [(Int, Bool)] = []

    init(options: TimeAmount?) { self.tickInterval = options }
    func tick(in match: Match<EchoGame>) { self.ticks += 1 }
    func receive(_ input: UInt8, fromSeat seat: Int, in match: Match<EchoGame>) {
        match.send(input, to: .allExcept(seat: seat))
    }
    func playerLeft(seat: Int, reason: LeaveReason, in match: Match<EchoGame>) { self.lefts.append((seat, reason)) }
    func playerRejoined(seat: Int, firstArrival: Bool, in match: Match<EchoGame>) {
        self.rejoins.append((seat, firstArrival))
    }
}

private final class CountingLink: PlayerLink {
    let encoding = WireEncoding.catRace
    var frames: [ByteBuffer] = []
    func deliver(_ frame: ByteBuffer) { self.frames.append(frame) }
}

@Suite struct MatchRuntimeTests {
    private let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func makeMatch(tick: TimeAmount?, clock: ManualClock, encodes: Counter) -> Match<EchoGame> {
        Match(
            id: 1, handler: EchoGame(options: tick),
            encoders: [
                EventEncoder(encoding: .catRace) { event, buffer in
                    encodes.value += 1
                    buffer.writeFrame { $0.writeInteger(event) }
                }
            ],
            clock: clock, gracePeriod: .seconds(5), capacity: 16, logger: self.logger)
    }

    final class Counter { var value = 0 }

    @Test func ticksAtAFixedRateOnTheManualClock() {
        let clock = ManualClock()
        let match = self.makeMatch(tick: .milliseconds(100), clock: clock, encodes: Counter())
        match.start()
        clock.advance(by: .milliseconds(999))
        #expect(match.handler.ticks == 9)
        clock.advance(by: .milliseconds(1))
        #expect(match.handler.ticks == 10)
        match.end(.abandoned(reason: "test"))
        clock.advance(by: .seconds(1))
        #expect(match.handler.ticks == 10)
        #expect(clock.pendingCount == 0)
    }

    @Test func aTurnBasedGameNeverTicks() {
        let clock = ManualClock()
        let match = self.makeMatch(tick: nil, clock: clock, encodes: Counter())
        match.start()
        #expect(clock.pendingCount == 0)
    }

    @Test func aBroadcastIsEncodedOnceAndTheSameBufferGoesToEveryRecipient() throws {
        let clock = ManualClock()
        let encodes = Counter()
        let match = self.makeMatch(tick: nil, clock: clock, encodes: encodes)
        let links = (0..<16).map { _ in CountingLink() }
        for (index, link) in links.enumerated() { _ = match.join("p\(index)", link: link) }
        match.receive(42, fromSeat: 3)
        #expect(encodes.value == 1)
        #expect(links[3].frames.isEmpty)
        let delivered = links.enumerated().filter { $0.offset != 3 }.map { $0.element.frames }
        #expect(delivered.allSatisfy { $0.count == 1 })
        // Same storage: every recipient got a view of one buffer, not a copy.
        let first = delivered[0][0]
        for frames in delivered {
            frames[0].withUnsafeReadableBytes { a in
                first.withUnsafeReadableBytes { b in #expect(a.baseAddress == b.baseAddress) }
            }
        }
    }

    @Test func chosenSeatsGetOneCopyEachOfOneEncodingHoweverOftenTheyAreListed() {
        let clock = ManualClock()
        let encodes = Counter()
        let match = self.makeMatch(tick: nil, clock: clock, encodes: encodes)
        let links = (0..<4).map { _ in CountingLink() }
        for (index, link) in links.enumerated() { _ = match.join("p\(index)", link: link) }
        // Seat 2 named 255 times (as a SEND_DATA's target list may), seat 0 once, a seat that
        // does not exist once.
        match.send(7, to: .seats(Array(repeating: 2, count: 254) + [0, 9]))
        #expect(encodes.value == 1)
        #expect(links.map(\.frames.count) == [1, 0, 1, 0])
        links[2].frames[0].withUnsafeReadableBytes { a in
            links[0].frames[0].withUnsafeReadableBytes { b in #expect(a.baseAddress == b.baseAddress) }
        }
    }

    @Test func theGamesLastEventsGoOutWithTheEndUnlessTheOwnerHoldsThem() {
        for holds in [false, true] {
            let clock = ManualClock()
            let match = self.makeMatch(tick: .milliseconds(100), clock: clock, encodes: Counter())
            let links = [CountingLink(), CountingLink()]
            for (index, link) in links.enumerated() { _ = match.join("p\(index)", link: link) }
            match.holdsEndAnnouncement = holds
            var framesWhenOwnerHeard: Int?
            match.onEnd = { _, _ in framesWhenOwnerHeard = links[0].frames.count }
            match.start()
            match.end(.finished(())) { match in match.send(7, to: .all) }
            #expect(match.isEnded)
            #expect(clock.pendingCount == 0, "the tick stops at the end, announced or not")
            // Not held: the last events go out before the owner hears of the end, as if sent just before it.
            #expect(framesWhenOwnerHeard == (holds ? 0 : 1))
            #expect(links.map(\.frames.count) == (holds ? [0, 0] : [1, 1]))
            match.announceEnd()
            match.announceEnd()
            #expect(links.map(\.frames.count) == [1, 1], "announced once")
        }
    }

    @Test func graceRunsFromTheDropAndIsCancelledByReturn() {
        let clock = ManualClock()
        let match = self.makeMatch(tick: nil, clock: clock, encodes: Counter())
        let a = CountingLink()
        let b = CountingLink()
        _ = match.join("a", link: a)
        _ = match.join("b", link: b)
        match.disconnect(seat: 1, link: b)
        clock.advance(by: .seconds(4))
        match.connect(seat: 1, link: b)
        clock.advance(by: .seconds(10))
        #expect(match.handler.lefts.isEmpty)
        #expect(match.handler.rejoins.count == 1)
        match.disconnect(seat: 1, link: b)
        clock.advance(by: .milliseconds(4999))
        #expect(match.handler.lefts.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(match.handler.lefts.count == 1)
        #expect(match.handler.lefts.first?.1 == .graceExpired)
    }

    @Test func aTimerThatFiresAfterCancellationDoesNothing() {
        // An event loop may already have dequeued a timer when it is cancelled. Model that
        // with a clock whose cancel does nothing: the match must still ignore stale timers.
        let clock = LeakyClock()
        let match = Match(
            id: 3, handler: EchoGame(options: nil), encoders: [], clock: clock, gracePeriod: .seconds(5), capacity: 4,
            logger: self.logger)
        let link = CountingLink()
        _ = match.join("a", link: link)
        match.disconnect(seat: 0, link: link)  // timer 1, due at 5 s
        clock.advance(by: .seconds(3))
        match.connect(seat: 0, link: link)  // cancels timer 1 (but it still fires)
        match.disconnect(seat: 0, link: link)  // timer 2, due at 8 s
        clock.advance(by: .seconds(2))  // timer 1 fires at 5 s: must not expire the seat
        #expect(match.handler.lefts.isEmpty)
        clock.advance(by: .seconds(3))  // timer 2, the live one
        #expect(match.handler.lefts.count == 1)
    }

    @Test func leavingFreesTheSeatForGoodAndStopsItsGraceTimer() {
        let clock = ManualClock()
        let match = self.makeMatch(tick: nil, clock: clock, encodes: Counter())
        let a = CountingLink()
        let b = CountingLink()
        _ = match.join("a", link: a)
        _ = match.join("b", link: b)
        match.disconnect(seat: 1, link: b)
        match.leave(seat: 1)
        #expect(match.seats[1].presence == .left)
        #expect(match.handler.lefts.count == 1)
        #expect(match.handler.lefts.first?.1 == .left)
        clock.advance(by: .seconds(10))  // the grace timer was stopped: no second leave
        #expect(match.handler.lefts.count == 1)
        match.connect(seat: 1, link: b)  // a left seat cannot be taken back
        #expect(match.seats[1].presence == .left)
        match.receive(7, fromSeat: 0)
        #expect(b.frames.isEmpty)
        #expect(match.activeSeatCount == 1)
    }

    @Test func aStaleConnectionClosingDoesNotUnseatTheNewerOne() {
        let clock = ManualClock()
        let match = self.makeMatch(tick: nil, clock: clock, encodes: Counter())
        let old = CountingLink()
        let new = CountingLink()
        _ = match.join("a", link: old)
        match.connect(seat: 0, link: new)
        match.disconnect(seat: 0, link: old)
        #expect(match.seats[0].presence == .connected)
        #expect(match.seats[0].link === new)
    }

    @Test func capacityIsEnforced() {
        let clock = ManualClock()
        let match = Match(
            id: 2, handler: EchoGame(options: nil), encoders: [], clock: clock, gracePeriod: .seconds(1), capacity: 2,
            logger: self.logger)
        #expect((try? match.join("a", link: nil).get()) == 0)
        #expect((try? match.join("b", link: nil).get()) == 1)
        #expect(match.join("c", link: nil) == .failure(.full(capacity: 2)))
        #expect(match.join("a", link: nil) == .failure(.alreadySeated))
    }

    @Test func aMatchGivesOutAtMostItsSeatLimitOverItsLife() {
        let match = Match(
            id: 3, handler: EchoGame(options: nil), encoders: [], clock: ManualClock(), gracePeriod: .seconds(1), capacity: 2,
            logger: self.logger)
        #expect((try? match.join("stays", link: nil).get()) == 0)
        #expect(match.hasRoom)
        for number in 1..<Match<EchoGame>.seatLimit {
            #expect((try? match.join("guest \(number)", link: nil).get()) == number)
            match.leave(seat: number)
        }
        #expect(match.activeSeatCount == 1)
        #expect(!match.hasRoom, "the lobby must not call it joinable")
        #expect(match.join("late", link: nil) == .failure(.seatsUsedUp(limit: Match<EchoGame>.seatLimit)))
        #expect(match.seats.count == 255)
    }
}

/// A manual clock whose timers cannot be cancelled, like a timer an event loop already dequeued.
private final class LeakyClock: MatchClock {
    let inner = ManualClock()
    var now: NIODeadline { self.inner.now }
    func schedule(at deadline: NIODeadline, _ body: @escaping () -> Void) -> MatchTimer {
        _ = self.inner.schedule(at: deadline, body)
        return MatchTimer {}
    }
    func advance(by amount: TimeAmount) { self.inner.advance(by: amount) }
}
