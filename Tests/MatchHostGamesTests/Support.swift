import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

/// A connection stand-in that decodes and keeps everything the world sends it.
final class RecordingLink: CatRaceLink {
    let encoding = WireEncoding.catRace
    var catRacePlayer: CatRacePlayer?
    private(set) var received: [CatRaceServerMessage] = []
    /// Buffers delivered, to check that a broadcast shares one buffer.
    private(set) var frames: [ByteBuffer] = []

    func deliver(_ frame: ByteBuffer) {
        self.frames.append(frame)
        let body = frame.getSlice(at: frame.readerIndex + 4, length: frame.readableBytes - 4)!
        self.received.append(try! CatRaceServerMessage(frameBody: body))
    }

    /// Returns and forgets what arrived so far.
    func take() -> [CatRaceServerMessage] {
        defer { self.received.removeAll() }
        return self.received
    }
}

/// A Cat Race world on a manual clock, with helpers that speak for players.
final class WorldFixture {
    let clock = ManualClock()
    let world: CatRaceWorld

    init(grace: TimeAmount = .seconds(30), maxTapRate: Double = 20, maxRacers: Int = 16) {
        self.world = CatRaceWorld(
            options: CatRaceWorldOptions(
                gracePeriod: grace, maxRacers: maxRacers, race: CatRaceOptions(maxTapRate: maxTapRate)),
            clock: self.clock, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @discardableResult
    func connect(_ id: String, alias: String? = nil, continueMatch: Bool = true, on link: RecordingLink = RecordingLink())
        -> RecordingLink
    {
        self.world.playerConnected(
            PlayerConnected(playerID: id, alias: alias ?? "alias-\(id)", continueMatch: continueMatch), on: link)
        return link
    }

    func start(_ ids: [String], from link: RecordingLink) {
        self.world.startMatch(StartMatch(playerIDs: ids), on: link)
    }

    func move(_ link: RecordingLink, to x: UInt32) {
        self.world.movedSelf(MovedSelf(posX: x), on: link)
    }

    /// Taps `link` forward step by step to the finish, waiting out the tap-rate limit.
    func race(_ link: RecordingLink, from start: UInt32 = 25) {
        var x = start
        while x < CatRaceTrack.finishX {
            x += 10
            self.move(link, to: x)
            self.clock.advance(by: .milliseconds(50))
        }
    }
}

extension CatRaceServerMessage {
    var matchStarted: MatchStarted? {
        if case .matchStarted(let message) = self { return message }
        return nil
    }
}
