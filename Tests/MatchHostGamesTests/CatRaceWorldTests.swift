import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import Testing

@Suite struct CatRaceWorldTests {
    @Test func aNewPlayerIsNotInAMatch() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        #expect(a.take() == [.notInMatch])
    }

    @Test func twoRacersRaceToGameOverWithTheMoversIndex() throws {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1", alias: "Ann")
        let b = fixture.connect("G:2", alias: "Bo")
        _ = a.take(); _ = b.take()
        fixture.start(["G:2", "G:1"], from: a)
        // Seats follow the order of the ids in START_MATCH, not connect order (Q6).
        let expected = MatchStarted(
            state: .active,
            racers: [.init(playerID: "G:2", alias: "Bo", posX: 25), .init(playerID: "G:1", alias: "Ann", posX: 25)])
        #expect(a.take() == [.matchStarted(expected)])
        #expect(b.take() == [.matchStarted(expected)])

        fixture.race(a)
        let bSaw = b.take()
        // 42 moves, each with the mover's index (1), not the recipient's (Q1); then GAME_OVER.
        #expect(bSaw.count == 43)
        #expect(bSaw.dropLast().allSatisfy { if case .playerMoved(let m) = $0 { return m.playerIndex == 1 } else { return false } })
        #expect(bSaw[41] == .playerMoved(PlayerMoved(playerIndex: 1, posX: 445)))
        #expect(bSaw.last == .gameOver(GameOver(winnerIndex: 1)))
        #expect(a.take() == [.gameOver(GameOver(winnerIndex: 1))])

        // Moves after the win are ignored.
        fixture.move(b, to: 35)
        #expect(a.take().isEmpty)
    }

    @Test func restartResetsEveryoneAndOnlyAfterAWin() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let b = fixture.connect("G:2")
        fixture.start(["G:1", "G:2"], from: a)
        fixture.move(b, to: 35)
        _ = a.take(); _ = b.take()
        fixture.world.restartMatch(on: b)  // race still running: refused
        #expect(a.take().isEmpty)
        fixture.race(a)
        _ = a.take(); _ = b.take()
        fixture.world.restartMatch(on: b)
        let snapshot = a.take()
        #expect(snapshot.count == 1)
        #expect(snapshot.first?.matchStarted?.state == .active)
        #expect(snapshot.first?.matchStarted?.racers.map(\.posX) == [25, 25])
        #expect(b.take() == snapshot)
    }

    @Test func movesAreValidatedByTheServer() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let b = fixture.connect("G:2")
        fixture.start(["G:1", "G:2"], from: a)
        _ = b.take()
        fixture.move(a, to: 31)  // not a whole step
        fixture.move(a, to: 25)  // not forward
        fixture.move(a, to: 15)  // backwards
        #expect(b.take().isEmpty)
        // A bucket of 5 steps: five taps at once pass, the sixth is refused.
        for x in stride(from: 35 as UInt32, through: 75, by: 10) { fixture.move(a, to: x) }
        fixture.move(a, to: 85)
        #expect(b.take().count == 5)
        // The bucket refills at 20 steps a second: 50 ms later one more step is allowed.
        fixture.clock.advance(by: .milliseconds(49))
        fixture.move(a, to: 85)
        #expect(b.take().isEmpty)
        fixture.clock.advance(by: .milliseconds(1))
        fixture.move(a, to: 85)
        #expect(b.take() == [.playerMoved(PlayerMoved(playerIndex: 0, posX: 85))])
        // Two steps at once catch up a client whose previous tap was refused.
        fixture.clock.advance(by: .milliseconds(100))
        fixture.move(a, to: 105)
        #expect(b.take() == [.playerMoved(PlayerMoved(playerIndex: 0, posX: 105))])
        // A claim of more steps than the bucket holds moves as many as it holds, so a client
        // whose taps a stalled network delivered at once, steps ahead of the server, catches up
        // as it taps on. A jump to the finish, or -1 from a client (which won the original),
        // gains nothing over tapping at the limit.
        fixture.clock.advance(by: .seconds(1))
        fixture.move(a, to: 445)
        #expect(b.take() == [.playerMoved(PlayerMoved(playerIndex: 0, posX: 155))])
        fixture.move(a, to: 445)
        #expect(b.take().isEmpty, "an empty bucket moves nothing")
        fixture.clock.advance(by: .milliseconds(100))
        fixture.move(a, to: 4_294_967_295)
        #expect(b.take() == [.playerMoved(PlayerMoved(playerIndex: 0, posX: 175))])
    }

    @Test func graceExpiresAThirtySecondAbsence() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let bLink = fixture.connect("G:2")
        fixture.start(["G:1", "G:2"], from: a)
        _ = a.take()
        fixture.world.connectionClosed(bLink)
        fixture.clock.advance(by: .milliseconds(29_999))
        #expect(a.take().isEmpty)
        #expect(fixture.world.matchCount == 1)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(a.take() == [.notInMatch])
        #expect(fixture.world.matchCount == 0)
        // B was only held for its seat; the registry forgets it.
        #expect(fixture.world.player("G:2") == nil)
        #expect(fixture.world.player("G:1")?.match == nil)
    }

    @Test func graceIsCancelledWhenTheRacerReturns() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let b = fixture.connect("G:2")
        fixture.start(["G:1", "G:2"], from: a)
        fixture.move(a, to: 35)
        _ = a.take(); _ = b.take()
        fixture.world.connectionClosed(b)
        fixture.clock.advance(by: .seconds(20))
        let b2 = fixture.connect("G:2", alias: "Bobby", continueMatch: true)
        // Only the returning racer gets the race as it stands.
        let snapshot = b2.take()
        #expect(snapshot.first?.matchStarted?.racers.map(\.posX) == [35, 25])
        // A player back under a new alias is shown under it (the tutorial's quirk Q8 fixed).
        #expect(snapshot.first?.matchStarted?.racers[1].alias == "Bobby")
        #expect(a.take().isEmpty)
        // The original shut the match down 30-40 s after the drop even so (Q2).
        fixture.clock.advance(by: .seconds(60))
        #expect(a.take().isEmpty)
        #expect(fixture.world.matchCount == 1)
        fixture.move(b2, to: 35)
        #expect(a.take() == [.playerMoved(PlayerMoved(playerIndex: 1, posX: 35))])
    }

    @Test func continueMatchZeroQuitsTheMatchForEveryone() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let b = fixture.connect("G:2")
        fixture.start(["G:1", "G:2"], from: a)
        _ = a.take(); _ = b.take()
        fixture.world.connectionClosed(b)
        let b2 = fixture.connect("G:2", continueMatch: false)
        #expect(a.take() == [.notInMatch])
        #expect(b2.take() == [.notInMatch])
        #expect(fixture.world.matchCount == 0)
        // A new match starts every racer at 25 again (Q3).
        fixture.start(["G:1", "G:2"], from: a)
        #expect(a.take().first?.matchStarted?.racers.map(\.posX) == [25, 25])
    }

    @Test func aReservedSeatIsFilledLate() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1", alias: "Ann")
        _ = a.take()
        fixture.start(["G:1", "G:3"], from: a)
        #expect(a.take().first?.matchStarted?.racers.map(\.alias) == ["Ann", ""])
        fixture.clock.advance(by: .seconds(10))
        // Whatever continueMatch says, the invited player lands in its seat.
        let c = fixture.connect("G:3", alias: "Cat", continueMatch: false)
        let snapshot = c.take()
        #expect(snapshot.first?.matchStarted?.racers.map(\.alias) == ["Ann", "Cat"])
        #expect(a.take() == snapshot)  // everyone sees the new alias
        fixture.move(c, to: 35)
        #expect(a.take() == [.playerMoved(PlayerMoved(playerIndex: 1, posX: 35))])
    }

    @Test func aReservedSeatNeverTakenEndsTheMatchLikeADisconnect() {
        let fixture = WorldFixture(grace: .seconds(5))
        let a = fixture.connect("G:1")
        fixture.start(["G:1", "G:9"], from: a)
        _ = a.take()
        fixture.clock.advance(by: .seconds(5))
        #expect(a.take() == [.notInMatch])
        #expect(fixture.world.playerCount == 1)
    }

    @Test func startMatchRefusals() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let b = fixture.connect("G:2")
        let stranger = RecordingLink()
        _ = a.take(); _ = b.take()
        fixture.start(["G:1"], from: a)  // fewer than 2
        fixture.start((0..<17).map { "G:\($0)" }, from: a)  // more than 16
        fixture.start(["G:1", "G:1"], from: a)  // duplicate
        fixture.start(["G:2", "G:3"], from: a)  // sender not racing
        fixture.start(["G:1", "G:2"], from: stranger)  // never said who it is
        #expect(fixture.world.matchCount == 0)
        #expect(a.take().isEmpty && b.take().isEmpty)
        fixture.start(["G:1", "G:2"], from: a)
        _ = a.take(); _ = b.take()
        // The other device of the same Game Center match sends its START_MATCH too: no effect.
        fixture.start(["G:1", "G:2"], from: b)
        #expect(fixture.world.matchCount == 1)
        #expect(a.take().isEmpty && b.take().isEmpty)
    }

    @Test func theRacerLimitIsConfigurable() {
        let fixture = WorldFixture(maxRacers: 4)
        let links = (0..<5).map { fixture.connect("G:\($0)") }
        fixture.start((0..<5).map { "G:\($0)" }, from: links[0])
        #expect(fixture.world.matchCount == 0)
        fixture.start((0..<4).map { "G:\($0)" }, from: links[0])
        #expect(fixture.world.matchCount == 1)
        #expect(links[3].take().last?.matchStarted?.racers.count == 4)
    }

    @Test func sixteenRacersRace() {
        let fixture = WorldFixture()
        let links = (0..<16).map { fixture.connect("G:\($0)") }
        fixture.start((0..<16).map { "G:\($0)" }, from: links[0])
        for link in links { #expect(link.take().last?.matchStarted?.racers.count == 16) }
        fixture.move(links[7], to: 35)
        for (index, link) in links.enumerated() {
            #expect(link.take() == (index == 7 ? [] : [.playerMoved(PlayerMoved(playerIndex: 7, posX: 35))]))
        }
        fixture.race(links[15])
        for link in links { #expect(link.take().last == .gameOver(GameOver(winnerIndex: 15))) }
    }

    @Test func notifyReadyReachesTheInviter() {
        let fixture = WorldFixture()
        let inviter = fixture.connect("G:1")
        let invitee = fixture.connect("G:2")
        _ = inviter.take(); _ = invitee.take()
        fixture.world.notifyReady(NotifyReady(playerID: "G:1"), on: invitee)
        #expect(inviter.take() == [.notifyReady(NotifyReady(playerID: "G:2"))])
        #expect(invitee.take().isEmpty)
        fixture.world.notifyReady(NotifyReady(playerID: "G:404"), on: invitee)  // absent: dropped
        #expect(inviter.take().isEmpty)
    }

    @Test func theNewestConnectionOwnsThePlayer() {
        let fixture = WorldFixture()
        let a = fixture.connect("G:1")
        let b = fixture.connect("G:2")
        fixture.start(["G:1", "G:2"], from: a)
        let a2 = fixture.connect("G:1", continueMatch: true)
        _ = a.take(); _ = a2.take(); _ = b.take()
        // The older connection speaks for nobody now, and its closing changes nothing.
        fixture.move(a, to: 35)
        #expect(b.take().isEmpty)
        fixture.world.connectionClosed(a)
        fixture.clock.advance(by: .seconds(60))
        #expect(fixture.world.matchCount == 1)
        fixture.move(a2, to: 35)
        #expect(b.take() == [.playerMoved(PlayerMoved(playerIndex: 0, posX: 35))])
    }

    @Test func theRegistryForgetsIdlePlayers() {
        let fixture = WorldFixture()
        for index in 0..<100 {
            let link = fixture.connect("G:\(index)")
            fixture.world.connectionClosed(link)
        }
        #expect(fixture.world.playerCount == 0)
    }
}
