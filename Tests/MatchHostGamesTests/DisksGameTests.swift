import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import Testing

@Suite struct DisksGameTests {
    /// 20 ticks a second (50 ms) so that spawn and expiry times fall on ticks.
    private static func options(
        spawnInterval: TimeAmount = .milliseconds(600), diskLifetime: TimeAmount = .milliseconds(2500),
        maxLiveDisks: Int = 8,
        diskRadius: UInt16 = 60, scoreLimit: UInt16 = 20, timeLimit: TimeAmount = .seconds(60), minimumPlayers: Int = 2,
        maxTapsPerSecond: Int = 20, seed: UInt64 = 42
    ) -> DisksGame.Options {
        DisksGame.Options(
            ticksPerSecond: 20, spawnInterval: spawnInterval, diskLifetime: diskLifetime, maxLiveDisks: maxLiveDisks,
            diskRadius: diskRadius, scoreLimit: scoreLimit, timeLimit: timeLimit, minimumPlayers: minimumPlayers,
            maxTapsPerSecond: maxTapsPerSecond, seed: seed)
    }

    /// A match with `players` connected players (`p0`, `p1`...) after its first tick, which starts play.
    private func started(_ options: DisksGame.Options = Self.options(), players: Int = 2) -> (
        DisksFixture, [DisksRecordingLink]
    ) {
        let fixture = DisksFixture(options)
        let links = (0..<players).flatMap { fixture.join("p\($0)") }
        fixture.tick()
        return (fixture, links)
    }

    // MARK: Phases

    @Test func waitsForEnoughPlayersThenTellsEveryoneThatPlayStarted() throws {
        let fixture = DisksFixture(Self.options())
        let a = fixture.join("a")[0]
        #expect(a.states.count == 1)
        #expect(a.states.first?.phase == .waiting)
        #expect(a.states.first?.timeLeftMilliseconds == 60_000)
        #expect(a.states.first?.scores == [DisksScore(seat: 0, playerID: "a", score: 0)])
        fixture.tick(10)
        #expect(fixture.game.phase == .waiting)
        #expect(a.ticks.isEmpty)
        fixture.tap(seat: 0, x: 500, y: 500)
        #expect(a.misses == [DisksTapMissed(x: 500, y: 500, reason: .notPlaying)])

        let b = fixture.join("b")[0]
        #expect(b.states.map(\.phase) == [.waiting])
        a.clear()
        b.clear()
        fixture.tick()
        #expect(fixture.game.phase == .playing)
        for link in [a, b] {
            #expect(link.messages.count == 2)
            guard case .state(let state) = link.messages.first, case .tick(let tick) = link.messages.last else {
                Issue.record("expected STATE then TICK, got \(link.messages)")
                continue
            }
            #expect(state.phase == .playing)
            #expect(state.tick == 11)
            #expect(state.timeLeftMilliseconds == 60_000)
            #expect(state.disks.isEmpty)
            #expect(state.scores.map(\.playerID) == ["a", "b"])
            #expect(tick.tick == 11)
            #expect(tick.spawned.count == 1)
            #expect(link.deliveries.allSatisfy { $0.reliable })
        }
    }

    // MARK: Spawning and expiry

    /// The disks a match spawns in its first 3 seconds of play.
    private func spawnedInThreeSeconds(seed: UInt64) -> [DisksTick] {
        let (fixture, links) = self.started(Self.options(diskLifetime: .seconds(10), maxLiveDisks: 100, seed: seed))
        fixture.tick(60)
        return links[0].ticks
    }

    @Test func disksSpawnAtTheRateWhereTheSeedSays() {
        let ticks = self.spawnedInThreeSeconds(seed: 42)
        #expect(ticks.count == 61)
        // One every 600 ms, 12 ticks of 50 ms, from the first tick of play.
        let spawnTicks = ticks.indices.filter { !ticks[$0].spawned.isEmpty }
        #expect(spawnTicks == [0, 12, 24, 36, 48, 60])
        #expect(ticks.allSatisfy { $0.spawned.count <= 1 })
        let disks = ticks.flatMap(\.spawned)
        #expect(disks.map(\.id) == [1, 2, 3, 4, 5, 6])
        for disk in disks {
            #expect(disk.radius == 60)
            #expect(disk.color < 6)
            #expect(
                (60...940).contains(disk.x) && (60...940).contains(disk.y), "disk \(disk) is not wholly on the board")
        }
        #expect(Set(disks.map { [$0.x, $0.y] }).count == 6, "six disks at six points")

        #expect(self.spawnedInThreeSeconds(seed: 42).flatMap(\.spawned) == disks)
        #expect(self.spawnedInThreeSeconds(seed: 43).flatMap(\.spawned) != disks)
    }

    @Test func neverMoreLiveDisksThanTheMaximum() {
        let (fixture, links) = self.started(
            Self.options(spawnInterval: .milliseconds(50), diskLifetime: .seconds(10), maxLiveDisks: 3))
        fixture.tick(9)
        #expect(fixture.game.liveDiskCount == 3)
        #expect(links[0].ticks.flatMap(\.spawned).count == 3)
        fixture.tap(seat: 0, on: fixture.liveDisks[0])
        #expect(fixture.game.liveDiskCount == 2)
        fixture.tick()
        #expect(fixture.game.liveDiskCount == 3)
        #expect(links[0].ticks.flatMap(\.spawned).map(\.id) == [1, 2, 3, 4])
    }

    @Test func unhitDisksExpireAfterTheirLifetimeAndHitOnesSilently() {
        let (fixture, links) = self.started()
        let second = 12
        fixture.tick(second)
        let disk2 = fixture.liveDisks[1]
        #expect(disk2.id == 2)
        fixture.tap(seat: 0, on: disk2)
        // Disk 1 was spawned on the first tick of play: 2.5 s is 50 ticks later.
        fixture.tick(49 - second)
        #expect(links[0].ticks.allSatisfy { $0.expired.isEmpty })
        #expect(fixture.liveDisks.map(\.id).contains(1))
        fixture.tick()
        #expect(links[0].ticks.last?.expired == [1])
        #expect(!fixture.liveDisks.map(\.id).contains(1))
        // Disk 2's time is up 12 ticks later; it was hit, so it is not reported as expired.
        fixture.tick(12)
        #expect(links[0].ticks.flatMap(\.expired) == [1])
        #expect(links[1].ticks.flatMap(\.hits).map(\.diskID) == [2])
    }

    // MARK: Taps

    @Test func theFirstTapWinsAndTheSecondIsToldItWasTooLate() {
        let (fixture, links) = self.started()
        let (a, b) = (links[0], links[1])
        let disk = fixture.liveDisks[0]
        a.clear()
        b.clear()
        fixture.tap(seat: 0, on: disk)
        fixture.tap(seat: 1, on: disk)
        #expect(a.deliveries.isEmpty, "a hit is announced in the next TICK, not at once")
        #expect(b.misses == [DisksTapMissed(x: disk.x, y: disk.y, reason: .alreadyHit)])
        #expect(b.deliveries.map(\.reliable) == [false])
        fixture.tick()
        for link in [a, b] {
            #expect(link.ticks.map(\.hits) == [[DisksHit(diskID: disk.id, seat: 0, score: 1)]])
        }
        #expect(fixture.game.score(seat: 0) == 1)
        #expect(fixture.game.score(seat: 1) == 0)
        // Still "already hit" after the TICK: a slow tapper is told why.
        b.clear()
        fixture.tap(seat: 1, on: disk)
        #expect(b.misses.map(\.reason) == [.alreadyHit])
    }

    @Test func aTapOutsideEveryDiskMissesAndTheEdgeCounts() {
        let (fixture, links) = self.started()
        let disk = fixture.liveDisks[0]
        #expect(fixture.liveDisks.count == 1)
        links[1].clear()
        // Inside the disk's square but outside its circle: 43² + 43² > 60².
        fixture.tap(seat: 1, x: disk.x + 43, y: disk.y + 43)
        fixture.tap(seat: 1, x: 0, y: 0)
        fixture.tap(seat: 1, x: .max, y: .max)
        #expect(links[1].misses.map(\.reason) == [.noDisk, .noDisk, .noDisk])
        #expect(links[1].misses.first == DisksTapMissed(x: disk.x + 43, y: disk.y + 43, reason: .noDisk))
        fixture.tap(seat: 0, x: disk.x + 60, y: disk.y)
        fixture.tick()
        #expect(links[1].ticks.last?.hits == [DisksHit(diskID: disk.id, seat: 0, score: 1)])
    }

    @Test func onOverlappingDisksTheNewestIsHit() {
        // A radius of half the board puts every disk at the centre.
        let (fixture, links) = self.started(
            Self.options(spawnInterval: .milliseconds(50), diskLifetime: .seconds(10), diskRadius: 500))
        fixture.tick(2)
        #expect(fixture.liveDisks.map(\.id) == [1, 2, 3])
        #expect(fixture.liveDisks.allSatisfy { $0.x == 500 && $0.y == 500 })
        for _ in 0..<4 { fixture.tap(seat: 0, x: 500, y: 500) }
        #expect(links[0].misses.map(\.reason) == [.alreadyHit], "the fourth tap finds only hit disks")
        fixture.tick()
        #expect(links[1].ticks.last?.hits.map(\.diskID) == [3, 2, 1])
        #expect(links[1].ticks.last?.spawned.map(\.id) == [4])
        fixture.tap(seat: 0, x: 500, y: 500)
        fixture.tap(seat: 1, x: 500, y: 500)
        #expect(links[1].misses.map(\.reason) == [.alreadyHit])
        fixture.tick()
        #expect(links[1].ticks.last?.hits.map(\.diskID) == [4])
    }

    @Test func tapsBeyondTheRateAreIgnoredAndCounted() {
        let (fixture, links) = self.started(Self.options(maxTapsPerSecond: 5))
        var limited: [Int] = []
        fixture.game.onRateLimited = { limited.append($0) }
        for link in links { link.clear() }
        // (0, 0) is never in a disk, so every tap that counts gets TAP_MISSED.
        for _ in 0..<8 { fixture.tap(seat: 0, x: 0, y: 0) }
        #expect(links[0].misses.count == 5)
        #expect(fixture.game.rateLimitedTaps == 3)
        #expect(limited == [0, 0, 0])
        for _ in 0..<5 { fixture.tap(seat: 1, x: 0, y: 0) }
        #expect(links[1].misses.count == 5, "each player has its own allowance")
        // One tap every 200 ms after the burst.
        fixture.clock.advance(by: .milliseconds(199))
        fixture.tap(seat: 0, x: 0, y: 0)
        #expect(links[0].misses.count == 5)
        fixture.clock.advance(by: .milliseconds(1))
        fixture.tap(seat: 0, x: 0, y: 0)
        fixture.tap(seat: 0, x: 0, y: 0)
        #expect(links[0].misses.count == 6)
        #expect(fixture.game.rateLimitedTaps == 5)
    }

    // MARK: Ticks

    @Test func exactlyOneTickBroadcastPerTick() {
        let (fixture, links) = self.started(players: 4)
        fixture.tick(100)
        #expect(fixture.encodeCount(.tick) == 101, "one encode per tick for all players")
        for link in links {
            let ticks = link.ticks
            #expect(ticks.count == 101)
            #expect(ticks.map(\.tick) == Array(1...101))
            #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $1.serverTime - $0.serverTime == 50_000_000 })
            #expect(ticks.map(\.timeLeftMilliseconds) == (0...100).map { 60_000 - UInt32($0) * 50 })
            // Empty ticks only keep time and may be dropped; ticks with news must arrive.
            let tickDeliveries = link.deliveries.filter {
                if case .tick = $0.message { return true } else { return false }
            }
            #expect(
                tickDeliveries.allSatisfy { delivery in
                    guard case .tick(let tick) = delivery.message else { return false }
                    return delivery.reliable == !tick.isEmpty
                })
            #expect(ticks.contains(where: \.isEmpty) && ticks.contains { !$0.isEmpty })
        }
        // Every player got the same buffer for a tick.
        let first = links.map { $0.deliveries.last!.frame }
        for frame in first {
            frame.withUnsafeReadableBytes { a in
                first[0].withUnsafeReadableBytes { b in #expect(a.baseAddress == b.baseAddress) }
            }
        }
    }

    // MARK: The end

    @Test func reachingTheScoreLimitEndsTheGameAtOnce() throws {
        let (fixture, links) = self.started(
            Self.options(spawnInterval: .milliseconds(50), diskLifetime: .seconds(10), scoreLimit: 3))
        fixture.tick(3)
        let disks = fixture.liveDisks
        fixture.tap(seat: 0, on: disks[0])
        fixture.tap(seat: 1, on: disks[1])
        fixture.tap(seat: 0, on: disks[2])
        fixture.tick()
        #expect(fixture.game.phase == .playing)
        for link in links { link.clear() }
        fixture.tap(seat: 0, on: disks[3])
        #expect(fixture.match.isEnded)
        #expect(fixture.game.phase == .over)
        for link in links {
            #expect(link.messages.count == 2)
            guard case .tick(let tick) = link.messages.first, case .gameOver(let over) = link.messages.last else {
                Issue.record("expected TICK then GAME_OVER, got \(link.messages)")
                continue
            }
            #expect(tick.hits == [DisksHit(diskID: disks[3].id, seat: 0, score: 3)])
            #expect(tick.tick == 6)
            #expect(over.reason == .scoreLimit)
            #expect(over.winners == [0])
            #expect(
                over.scores == [
                    DisksScore(seat: 0, playerID: "p0", score: 3), DisksScore(seat: 1, playerID: "p1", score: 1),
                ])
        }
        let result = try #require(fixture.result)
        #expect(result.reason == .scoreLimit)
        #expect(result.winners == ["p0"])
        #expect(result.player("p0") == DisksResult.Player(playerID: "p0", seat: 0, score: 3, won: true, left: false))
        #expect(result.player("p1") == DisksResult.Player(playerID: "p1", seat: 1, score: 1, won: false, left: false))
        #expect(fixture.clock.pendingCount == 0, "no tick after the end")
    }

    /// Plays a 1-second game in which each player hits as many disks as `hits` says.
    private func timedGame(hits: [Int]) -> (DisksFixture, [DisksRecordingLink]) {
        let (fixture, links) = self.started(
            Self.options(
                spawnInterval: .milliseconds(50), diskLifetime: .seconds(10), maxLiveDisks: 20, timeLimit: .seconds(1)),
            players: hits.count)
        fixture.tick(9)
        var disks = fixture.liveDisks[...]
        for (seat, count) in hits.enumerated() {
            for _ in 0..<count { fixture.tap(seat: seat, on: disks.popFirst()!) }
        }
        // Play started on tick 1; the second is up on tick 21.
        fixture.tick(10)
        #expect(!fixture.match.isEnded)
        fixture.tick()
        #expect(fixture.match.isEnded)
        return (fixture, links)
    }

    @Test func atTheTimeLimitTheHighestScoreWins() throws {
        let (fixture, links) = self.timedGame(hits: [1, 2])
        let messages = links[0].messages.suffix(2)
        guard case .tick(let tick) = messages.first, case .gameOver(let over) = messages.last else {
            Issue.record("expected TICK then GAME_OVER, got \(messages)")
            return
        }
        #expect(tick.timeLeftMilliseconds == 0)
        #expect(over.reason == .timeLimit)
        #expect(over.winners == [1])
        #expect(over.scores.map(\.score) == [1, 2])
        let result = try #require(fixture.result)
        #expect(result.winners == ["p1"])
        #expect(result.players.map(\.won) == [false, true])
    }

    @Test func aTieAtTheTimeLimitMakesEveryTiedPlayerAWinner() throws {
        let (fixture, links) = self.timedGame(hits: [2, 2, 1])
        #expect(links[2].gameOvers.map(\.winners) == [[0, 1]])
        let result = try #require(fixture.result)
        #expect(result.winners == ["p0", "p1"])
        #expect(result.players.map(\.won) == [true, true, false])
        #expect(result.description == "time limit; won by p0, p1")
    }

    @Test func nobodyWinsWhenNobodyScored() throws {
        let (fixture, links) = self.timedGame(hits: [0, 0])
        #expect(links[0].gameOvers.map(\.winners) == [[]])
        #expect(try #require(fixture.result).winners.isEmpty)
    }

    @Test func whenTheOpponentsLeaveTheLastOneWins() throws {
        let (fixture, links) = self.started(players: 3)
        fixture.tap(seat: 2, on: fixture.liveDisks[0])
        fixture.tick(5)
        fixture.match.leave(seat: 1)
        #expect(!fixture.match.isEnded)
        fixture.match.leave(seat: 2)
        #expect(fixture.match.isEnded)
        #expect(
            links[0].gameOvers == [
                DisksGameOver(
                    reason: .opponentsLeft, winners: [0],
                    scores: [
                        DisksScore(seat: 0, playerID: "p0", score: 0), DisksScore(seat: 1, playerID: "p1", score: 0),
                        DisksScore(seat: 2, playerID: "p2", score: 1),
                    ])
            ])
        #expect(links[2].gameOvers.isEmpty, "a player who left hears nothing more")
        let result = try #require(fixture.result)
        #expect(result.reason == .opponentsLeft)
        #expect(result.winners == ["p0"])
        #expect(result.player("p2") == DisksResult.Player(playerID: "p2", seat: 2, score: 1, won: false, left: true))
    }

    @Test func anOpponentAwayPastTheGracePeriodHasLeft() throws {
        let (fixture, links) = self.started()
        fixture.match.disconnect(seat: 1, link: links[1])
        fixture.clock.advance(by: .milliseconds(9_999))
        #expect(!fixture.match.isEnded)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(fixture.match.isEnded)
        #expect(try #require(fixture.result).winners == ["p0"])
        #expect(links[0].gameOvers.map(\.reason) == [.opponentsLeft])
    }

    @Test func whenEveryoneLeavesTheMatchIsAbandoned() {
        let waiting = DisksFixture(Self.options())
        let links = waiting.join("a")
        waiting.tick(3)
        waiting.match.leave(seat: 0)
        #expect(waiting.match.isEnded)
        guard case .abandoned = waiting.outcome else {
            Issue.record("expected abandoned, got \(String(describing: waiting.outcome))")
            return
        }
        #expect(links[0].gameOvers.isEmpty)

        // Playing alone (a minimum of 1): leaving abandons rather than hands a win to nobody.
        let (solo, soloLinks) = self.started(Self.options(minimumPlayers: 1), players: 1)
        #expect(solo.game.phase == .playing)
        solo.match.leave(seat: 0)
        #expect(solo.match.isEnded)
        #expect(solo.result == nil)
        #expect(soloLinks[0].gameOvers.isEmpty)
    }

    // MARK: Joining and returning

    @Test func aReturningPlayerGetsTheStateWithTheLiveDisks() throws {
        let (fixture, links) = self.started(Self.options(diskLifetime: .seconds(10)))
        let (a, b) = (links[0], links[1])
        fixture.tick(30)
        let hit = fixture.liveDisks[1]
        fixture.tap(seat: 0, on: hit)
        fixture.match.disconnect(seat: 1, link: b)
        fixture.tick(12)
        a.clear()
        b.clear()
        fixture.match.connect(seat: 1, link: b)
        #expect(a.deliveries.isEmpty)
        #expect(b.deliveries.map(\.reliable) == [true])
        let state = try #require(b.states.first)
        #expect(state.phase == .playing)
        #expect(state.tick == 43)
        #expect(state.timeLeftMilliseconds == 60_000 - 42 * 50)
        #expect(state.scoreLimit == 20)
        #expect(state.boardWidth == 1000 && state.boardHeight == 1000)
        #expect(state.disks.map(\.id) == [1, 3, 4], "disk 2 was hit")
        #expect(state.disks == fixture.liveDisks)
        #expect(
            state.scores == [
                DisksScore(seat: 0, playerID: "p0", score: 1), DisksScore(seat: 1, playerID: "p1", score: 0),
            ])
    }

    @Test func aPlayerArrivingAtAReservedSeatOrJoiningLateGetsTheState() throws {
        let (fixture, links) = self.started()
        fixture.tick(12)
        let reserved = fixture.match.join("late", link: nil)
        #expect(reserved == .success(2))
        let late = DisksRecordingLink()
        fixture.match.connect(seat: 2, link: late)
        #expect(late.states.map(\.disks.count) == [2])
        #expect(late.states.first?.scores.map(\.playerID) == ["p0", "p1", "late"])
        let joiner = fixture.join("joiner")[0]
        #expect(joiner.states.map(\.phase) == [.playing])
        #expect(links[0].states.map(\.phase) == [.waiting, .playing], "the others got no STATE for the late players")
        fixture.tap(seat: 3, on: fixture.liveDisks[0])
        fixture.tick()
        #expect(links[0].ticks.last?.hits == [DisksHit(diskID: 1, seat: 3, score: 1)])
    }

    @Test func playersComingAndGoingUseUpTheMatchsSeatsButNeverBreakItsMessages() throws {
        let (fixture, links) = self.started()
        // Seat indices are never reused: a game taking joins under way gives out a seat to every
        // newcomer, and STATE and GAME_OVER list them all. The 256th would not fit a list's count.
        for number in 2..<Match<DisksGame>.seatLimit {
            let link = fixture.join("passer-by \(number)")[0]
            #expect(link.states.last?.scores.count == number + 1)
            fixture.match.leave(seat: number)
        }
        let refused = fixture.match.join("one too many", link: DisksRecordingLink())
        #expect(refused == .failure(.seatsUsedUp(limit: 255)))
        #expect(fixture.match.seats.count == 255)
        fixture.match.leave(seat: 1)
        #expect(links[0].gameOvers.first?.scores.count == 255)
        #expect(fixture.result?.winners == ["p0"])
    }

    @Test func sixteenPlayers() throws {
        let (fixture, links) = self.started(players: 16)
        #expect(links.allSatisfy { $0.states.map(\.phase) == [.waiting, .playing] })
        #expect(links[0].states.last?.scores.count == 16)
        #expect(fixture.encodeCount(.state) == 16 + 1, "one STATE per joiner, one for everyone at the start")
        fixture.tick(24)
        let disk = fixture.liveDisks[0]
        for link in links { link.clear() }
        for seat in 0..<16 { fixture.tap(seat: seat, on: disk) }
        #expect(links[0].deliveries.isEmpty)
        #expect(links[1...].allSatisfy { $0.misses == [DisksTapMissed(x: disk.x, y: disk.y, reason: .alreadyHit)] })
        let ticksBefore = fixture.encodeCount(.tick)
        fixture.tick()
        #expect(fixture.encodeCount(.tick) == ticksBefore + 1)
        #expect(links.allSatisfy { $0.ticks.map(\.hits) == [[DisksHit(diskID: disk.id, seat: 0, score: 1)]] })
        // Three players hit the three live disks between two ticks: one TICK carries all three.
        fixture.tick(11)
        let live = fixture.liveDisks
        #expect(live.map(\.id) == [2, 3, 4])
        for (seat, disk) in zip(1..., live) { fixture.tap(seat: seat, on: disk) }
        fixture.tick()
        #expect(fixture.encodeCount(.tick) == ticksBefore + 13)
        #expect(
            links.allSatisfy {
                $0.ticks.last?.hits == [
                    DisksHit(diskID: 2, seat: 1, score: 1), DisksHit(diskID: 3, seat: 2, score: 1),
                    DisksHit(diskID: 4, seat: 3, score: 1),
                ]
            })
    }
}
