import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import Testing

/// Keeps what the world reports to its recorder.
private final class RecorderLog: CatRaceRecorder {
    enum Entry: Equatable {
        case started(MatchID, racers: [Int: PlayerID])
        case identified(PlayerID, seat: Int, MatchID)
        case ended(MatchID, outcome: String)
    }

    var entries: [Entry] = []
    var racesWon: [Int] = []
    /// When set, races' announcements wait here instead of running at once (a store writing).
    var holdsAnnouncements = false
    var heldAnnouncements: [() -> Void] = []

    func raceStarted(_ match: Match<CatRaceGame>, racers: [(seat: Int, storedID: PlayerID)]) {
        self.entries.append(.started(match.id, racers: Dictionary(uniqueKeysWithValues: racers.map { ($0.seat, $0.storedID) })))
        match.handler.onRaceWon = { [unowned self] seat, announce in
            self.racesWon.append(seat)
            if self.holdsAnnouncements { self.heldAnnouncements.append(announce) } else { announce() }
        }
    }

    func racerIdentified(_ storedID: PlayerID, seat: Int, in match: Match<CatRaceGame>) {
        self.entries.append(.identified(storedID, seat: seat, match.id))
    }

    func raceEnded(_ match: Match<CatRaceGame>, outcome: MatchOutcome<Int>) {
        self.entries.append(.ended(match.id, outcome: "\(outcome)"))
    }
}

@Suite("Cat Race world with a store: identities and what it records")
struct CatRaceWorldRecordingTests {
    private func connect(
        _ fixture: WorldFixture, _ id: String, alias: String, stored: CatRaceStoredIdentity?, continueMatch: Bool = true
    ) -> RecordingLink {
        let link = RecordingLink()
        fixture.world.playerConnected(PlayerConnected(playerID: id, alias: alias, continueMatch: continueMatch), identity: stored, on: link)
        return link
    }

    @Test func aNewPlayerTakesItsStoredIdentityAndAKnownOneKeepsIt() {
        #expect(WorldFixture().world.waitsForStore(PlayerConnected(playerID: "G:1", alias: "Zed", continueMatch: true)))
        let fixture = WorldFixture()
        #expect(fixture.world.isNewPlayer("G:1"))
        let a = self.connect(fixture, "G:1", alias: "Zed", stored: CatRaceStoredIdentity(playerID: "s1", alias: "Abby"))
        #expect(a.take() == [.notInMatch])
        #expect(fixture.world.player("G:1")?.storedID == "s1")
        #expect(fixture.world.player("G:1")?.alias == "Abby", "the stored alias, not the message's")
        #expect(!fixture.world.isNewPlayer("G:1"))

        // A second connection for a player the world holds waits for the store only to store a
        // new alias.
        #expect(!fixture.world.waitsForStore(PlayerConnected(playerID: "G:1", alias: "Abby", continueMatch: true)))
        #expect(fixture.world.waitsForStore(PlayerConnected(playerID: "G:1", alias: "Other", continueMatch: true)))
        _ = self.connect(fixture, "G:1", alias: "Abby", stored: nil)
        #expect(fixture.world.storedIdentity(of: "G:1") == CatRaceStoredIdentity(playerID: "s1", alias: "Abby"))
        _ = self.connect(fixture, "G:1", alias: "Other", stored: CatRaceStoredIdentity(playerID: "s1", alias: "Other"))
        #expect(fixture.world.storedIdentity(of: "G:1") == CatRaceStoredIdentity(playerID: "s1", alias: "Other"))
    }

    @Test func racesReportTheirIdentifiedRacersLateArrivalsAndTheirEnd() {
        let fixture = WorldFixture()
        let log = RecorderLog()
        fixture.world.recorder = log
        fixture.world.continueMatchIDs(after: 41)
        let a = self.connect(fixture, "G:1", alias: "Abby", stored: CatRaceStoredIdentity(playerID: "s1", alias: "Abby"))
        _ = a.take()
        fixture.start(["G:9", "G:1"], from: a)
        #expect(log.entries == [.started(42, racers: [1: "s1"])], "the reserved seat has no stored id yet")
        #expect(fixture.world.isNewPlayer("G:9"), "a reserved seat's player is looked up when it connects")

        let b = self.connect(fixture, "G:9", alias: "Bo", stored: CatRaceStoredIdentity(playerID: "s9", alias: "Bo"))
        #expect(log.entries.last == .identified("s9", seat: 0, 42))
        #expect(b.take().first?.matchStarted?.racers.map(\.alias) == ["Bo", "Abby"])

        fixture.race(a)
        #expect(log.racesWon == [1])
        fixture.world.connectionClosed(b)
        fixture.clock.advance(by: .seconds(30))
        #expect(log.entries.last == .ended(42, outcome: "\(MatchOutcome<Int>.abandoned(reason: "racer G:9 stayed away past the grace period"))"))
        #expect(log.entries.count == 3)
    }

    /// GAME_OVER is the race's result told, so it waits for the recorder's announcement: the
    /// race takes no move meanwhile, still looks active to a racer who comes back, makes a
    /// restart asked for meanwhile right after the GAME_OVER, and a match that ends first
    /// announces nothing.
    @Test func gameOverWaitsForTheRecordersAnnouncement() {
        let fixture = WorldFixture()
        let log = RecorderLog()
        log.holdsAnnouncements = true
        fixture.world.recorder = log
        let a = self.connect(fixture, "G:1", alias: "A", stored: CatRaceStoredIdentity(playerID: "s1", alias: "A"))
        let b = self.connect(fixture, "G:2", alias: "B", stored: CatRaceStoredIdentity(playerID: "s2", alias: "B"))
        fixture.start(["G:1", "G:2"], from: a)
        _ = a.take()
        _ = b.take()

        fixture.race(a)
        #expect(log.racesWon == [0])
        #expect(b.take().last == .playerMoved(PlayerMoved(playerIndex: 0, posX: CatRaceTrack.finishX)))
        #expect(a.take().isEmpty)
        fixture.move(b, to: 35)
        fixture.world.restartMatch(on: b)
        #expect(a.take().isEmpty && b.take().isEmpty, "no move and no restart before GAME_OVER")
        fixture.world.connectionClosed(b)
        let back = self.connect(fixture, "G:2", alias: "B", stored: nil)
        let rejoined = back.take().compactMap(\.matchStarted)
        #expect(rejoined.map(\.state) == [.active], "the result is not told by a MATCH_STARTED first")
        #expect(rejoined.first?.racers.map(\.posX) == [CatRaceTrack.finishX, CatRaceTrack.startX])

        log.heldAnnouncements.removeFirst()()
        let started = MatchStarted(
            state: .active,
            racers: [
                MatchStarted.Racer(playerID: "G:1", alias: "A", posX: CatRaceTrack.startX),
                MatchStarted.Racer(playerID: "G:2", alias: "B", posX: CatRaceTrack.startX),
            ])
        #expect(a.take() == [.gameOver(GameOver(winnerIndex: 0)), .matchStarted(started)], "then the restart asked for meanwhile")
        #expect(back.take() == [.gameOver(GameOver(winnerIndex: 0)), .matchStarted(started)])

        // The next race is won, then a racer quits before its result is stored.
        fixture.race(back)
        #expect(log.racesWon == [0, 1])
        _ = a.take()
        fixture.world.playerConnected(PlayerConnected(playerID: "G:1", alias: "A", continueMatch: false), on: a)
        #expect(back.take() == [CatRaceServerMessage.notInMatch])
        log.heldAnnouncements.removeFirst()()
        #expect(a.take().allSatisfy { $0 != .gameOver(GameOver(winnerIndex: 1)) })
        #expect(back.take().isEmpty, "the match is over: its last race is not announced after it")
    }

    @Test func raceIDsComeFromTheSourceWhenOneIsSet() {
        let fixture = WorldFixture()
        let log = RecorderLog()
        fixture.world.recorder = log
        var issued: [MatchID] = []
        fixture.world.matchIDSource = {
            issued.append(100 + MatchID(issued.count))
            return issued.last!
        }
        let a = self.connect(fixture, "G:1", alias: "A", stored: CatRaceStoredIdentity(playerID: "s1", alias: "A"))
        let b = self.connect(fixture, "G:2", alias: "B", stored: CatRaceStoredIdentity(playerID: "s2", alias: "B"))
        fixture.start(["G:1", "G:2"], from: a)
        #expect(log.entries == [.started(100, racers: [0: "s1", 1: "s2"])])
        _ = b
    }

    @Test func aTutorialClientSeatedInAnotherHostsRaceIsReportedToThatHost() throws {
        let fixture = WorldFixture()
        let log = RecorderLog()
        fixture.world.recorder = log
        var reported: [(PlayerID, Int)] = []
        fixture.world.onInvitedRacerIdentified = { storedID, seat, _ in reported.append((storedID, seat)) }
        let hosted = Match(
            id: 7, handler: CatRaceGame(options: CatRaceOptions()), encoders: [catRaceFrameEncoder], clock: fixture.clock,
            gracePeriod: .seconds(30), capacity: 4, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        _ = hosted.join("native-host", link: RecordingLink())
        hosted.start()

        // Connected already: reported at once.
        _ = self.connect(fixture, "G:1", alias: "A", stored: CatRaceStoredIdentity(playerID: "s1", alias: "A"))
        #expect(fixture.world.seatInvited("G:1", in: hosted, seat: try hosted.join("G:1", link: nil).get()))
        // Not connected yet: reported when it connects.
        #expect(fixture.world.seatInvited("G:2", in: hosted, seat: try hosted.join("G:2", link: nil).get()))
        #expect(reported.map(\.0) == ["s1"])
        _ = self.connect(fixture, "G:2", alias: "B", stored: CatRaceStoredIdentity(playerID: "s2", alias: "B"))
        #expect(reported.map(\.0) == ["s1", "s2"])
        #expect(reported.map(\.1) == [1, 2])
        #expect(log.entries.isEmpty, "the world's recorder only hears of the world's own races")
    }
}
