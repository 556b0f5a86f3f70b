import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

/// A native player's link stand-in: decodes every Disks message the match sends it and keeps
/// how it came (reliably or not) and the buffer itself.
final class DisksRecordingLink: PlayerLink {
    struct Delivery {
        var message: DisksServerMessage
        var reliable: Bool
        var frame: ByteBuffer
    }

    let encoding = WireEncoding.native
    let keepsDeliveringWhileAway: Bool
    private(set) var deliveries: [Delivery] = []

    init(keepsDeliveringWhileAway: Bool = false) {
        self.keepsDeliveringWhileAway = keepsDeliveringWhileAway
    }

    func deliver(_ frame: ByteBuffer) { self.record(frame, reliable: true) }
    func deliverUnreliably(_ frame: ByteBuffer) { self.record(frame, reliable: false) }

    private func record(_ frame: ByteBuffer, reliable: Bool) {
        // The test encoder writes the bare Disks body; decoding it checks the codec as well.
        self.deliveries.append(
            Delivery(message: try! DisksServerMessage(body: frame), reliable: reliable, frame: frame))
    }

    var messages: [DisksServerMessage] { self.deliveries.map(\.message) }

    var ticks: [DisksTick] {
        self.messages.compactMap { if case .tick(let tick) = $0 { return tick } else { return nil } }
    }

    var states: [DisksState] {
        self.messages.compactMap { if case .state(let state) = $0 { return state } else { return nil } }
    }

    var misses: [DisksTapMissed] {
        self.messages.compactMap { if case .tapMissed(let miss) = $0 { return miss } else { return nil } }
    }

    var gameOvers: [DisksGameOver] {
        self.messages.compactMap { if case .gameOver(let over) = $0 { return over } else { return nil } }
    }

    /// Forgets what arrived so far.
    func clear() {
        self.deliveries.removeAll()
    }
}

/// A Disks match on a manual clock, started (ticking) at creation as the server does.
final class DisksFixture {
    let clock = ManualClock()
    let match: Match<DisksGame>
    private(set) var outcome: MatchOutcome<DisksResult>?

    init(
        _ options: DisksGame.Options = DisksGame.Options(ticksPerSecond: 20, seed: 42), capacity: Int = 16,
        grace: TimeAmount = .seconds(10)
    ) {
        let box = EncodeCounter()
        self.match = Match(
            id: 7, handler: DisksGame(options: options),
            encoders: [
                EventEncoder(encoding: .native) { event, buffer in
                    box.counts[event.type, default: 0] += 1
                    event.encode(into: &buffer)
                }
            ],
            clock: self.clock, gracePeriod: grace, capacity: capacity,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        self.counter = box
        self.match.onEnd = { [unowned self] _, outcome in self.outcome = outcome }
        self.match.start()
    }

    /// Encodes per message type, to check one encode per broadcast.
    private final class EncodeCounter { var counts: [DisksServerMessageType: Int] = [:] }
    private let counter: EncodeCounter

    var game: DisksGame { self.match.handler }
    var interval: TimeAmount { self.game.options.tickInterval }

    func encodeCount(_ type: DisksServerMessageType) -> Int { self.counter.counts[type, default: 0] }

    /// Seats connected players, one link each.
    func join(_ ids: String...) -> [DisksRecordingLink] {
        ids.map { id in
            let link = DisksRecordingLink()
            _ = self.match.join(id, link: link)
            return link
        }
    }

    /// Runs `count` ticks.
    func tick(_ count: Int = 1) {
        self.clock.advance(by: .nanoseconds(self.interval.nanoseconds * Int64(count)))
    }

    func tap(seat: Int, x: UInt16, y: UInt16) {
        self.match.receive(.tap(DisksTap(x: x, y: y)), fromSeat: seat)
    }

    /// Taps the centre of `disk`.
    func tap(seat: Int, on disk: DisksDisk) {
        self.tap(seat: seat, x: disk.x, y: disk.y)
    }

    /// The disks that can be hit now, oldest first.
    var liveDisks: [DisksDisk] { self.game.state(in: self.match).disks }

    /// The finished result, if the match finished (not abandoned).
    var result: DisksResult? {
        if case .finished(let result) = self.outcome { return result }
        return nil
    }
}
