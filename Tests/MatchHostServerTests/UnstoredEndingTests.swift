import Logging
import MatchHostCore
import MatchHostProcessTesting
@testable import MatchHostServer
import NIOCore
import NIOPosix
import Testing

/// A match's result that the database failed (a full disk) is kept and written again, on the
/// world's clock (here a manual one), until the database takes it, or the server stops.
@Suite("WorldStore: results the database failed are written again")
struct UnstoredEndingTests {
    /// A world's store on the shared loop, over ``StorageOutageTests/FullDiskStore``, on a manual clock.
    final class Fixture: Sendable {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let store = StorageOutageTests.FullDiskStore()
        let log = LogLines()
        let world: NIOLoopBound<WorldStore>
        let clock: NIOLoopBound<ManualClock>
        let result = MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost)])

        init(limit: Int = 10_000) async throws {
            let (loop, store, log) = (self.loop, self.store, self.log)
            let logger = {
                var logger = log.logger
                logger.logLevel = .debug
                return logger
            }()
            // The outage's own clock stands still: on a loaded machine a test outlasts the
            // interval of "storage still failing" warnings, which these tests do not look at.
            let start = NIODeadline.now()
            let outages = StorageOutageMonitor(logger: logger) { start }
            (self.world, self.clock) = try await loop.submit {
                let clock = ManualClock()
                let world = WorldStore(
                    store: store, eventLoop: loop, clock: clock, logger: logger, outages: outages, maximumUnstoredEndings: limit)
                return (NIOLoopBound(world, eventLoop: loop), NIOLoopBound(clock, eventLoop: loop))
            }.get()
            for match: MatchID in 5...7 {
                try await store.inner.recordMatchStarted(id: match, game: "disks", mode: "", players: ["a", "b"], startedAt: 1)
            }
        }

        /// With the disk `full` or not, runs `body` on the loop, then waits until every write of
        /// matches 5 to 7 queued so far is done, and again for the retries they set off.
        func run(full: Bool, _ body: @escaping @Sendable (WorldStore, ManualClock) -> Void) async throws {
            self.store.failing.withLockedValue { $0 = full }
            let (world, clock) = (self.world, self.clock)
            try await self.loop.submit { body(world.value, clock.value) }.get()
            for _ in 1...2 {
                for match: MatchID in 5...7 {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        self.loop.execute { world.value.read(in: .match(match), { _ in }) { _ in continuation.resume() } }
                    }
                }
            }
        }

        func end(_ match: MatchID, full: Bool) async throws {
            let result = self.result
            try await self.run(full: full) { world, _ in world.recordEnding(.finished(result), of: match, players: ["a", "b"]) }
        }

        func advance(_ seconds: Int64, full: Bool) async throws {
            try await self.run(full: full) { _, clock in clock.advance(by: .seconds(seconds)) }
        }

        func waiting() async throws -> [MatchID] {
            let world = self.world
            return try await self.loop.submit { world.value.unstoredEndings.map(\.match) }.get()
        }

        func isStored(_ match: MatchID) async throws -> Bool {
            try await self.store.inner.match(id: match)?.state == .finished(self.result)
        }
    }

    @Test func aResultIsWrittenAgainAfterASecondThenLessOftenWhileTheDatabaseKeepsFailingIt() async throws {
        let fixture = try await Fixture()
        try await fixture.end(5, full: true)
        #expect(try await fixture.waiting() == [5])
        try await fixture.advance(1, full: true)
        #expect(try await fixture.waiting() == [5], "tried again after 1 s, failed again")
        // The disk has room again, but the next try is 2 s after the last.
        try await fixture.advance(1, full: false)
        #expect(try await fixture.waiting() == [5])
        #expect(try await fixture.isStored(5) == false)
        try await fixture.advance(1, full: false)
        #expect(try await fixture.waiting() == [])
        #expect(try await fixture.isStored(5))
        #expect(fixture.log.all.contains("notice match endings the database had failed are stored [matches=1]"))
        // Stored: the delays start over at 1 s.
        try await fixture.end(6, full: true)
        try await fixture.advance(1, full: false)
        #expect(try await fixture.isStored(6))
    }

    @Test func pastTheLimitTheOldestResultIsGivenUpAndSaidSoOnce() async throws {
        let fixture = try await Fixture(limit: 2)
        for match: MatchID in 5...7 { try await fixture.end(match, full: true) }
        #expect(try await fixture.waiting() == [6, 7])
        let givenUp = "warning match endings given up: more waited for the database than --max-unstored-results [matches=1]"
        #expect(!fixture.log.all.contains(givenUp), "said once, at the next try")
        try await fixture.advance(1, full: false)
        #expect(fixture.log.all.filter { $0 == givenUp }.count == 1)
        #expect(try await fixture.isStored(6))
        #expect(try await fixture.isStored(7))
        #expect(try await fixture.isStored(5) == false)
    }

    @Test func theResultOfAMatchWhoseStartTheDatabaseFailedIsNotKept() async throws {
        let fixture = try await Fixture(limit: 1)
        try await fixture.end(5, full: true)
        // Match 6 starts and ends on the full disk: its result could never be stored, and must
        // not push out match 5's, which can.
        try await fixture.run(full: true) { world, _ in world.recordRealTimeStart(of: 6, game: "disks", players: ["a", "b"], isPrivate: false) }
        try await fixture.end(6, full: true)
        #expect(try await fixture.waiting() == [5])
        #expect(fixture.log.all.contains { $0.hasPrefix("debug match result not recorded") && $0.contains("match=6") })
        #expect(!fixture.log.all.contains { $0.hasPrefix("warning") })
        try await fixture.advance(1, full: false)
        #expect(try await fixture.isStored(5))
    }

    @Test func atShutdownTheWaitingResultsAreTriedOnceMoreAndWhatTheDatabaseStillFailsIsNamed() async throws {
        let stored = try await Fixture()
        try await stored.end(5, full: true)
        try await stored.run(full: false) { world, _ in world.stopRetryingEndings() }
        try await stored.run(full: false) { world, _ in world.reportUnstoredEndingsAtShutdown() }
        #expect(try await stored.isStored(5))
        #expect(!stored.log.all.contains { $0.hasPrefix("warning match endings the database failed are not stored") })

        let lost = try await Fixture()
        try await lost.end(5, full: true)
        try await lost.run(full: true) { world, _ in world.stopRetryingEndings() }
        try await lost.run(full: true) { world, _ in world.reportUnstoredEndingsAtShutdown() }
        #expect(try await lost.isStored(5) == false)
        #expect(lost.log.all.last == "warning match endings the database failed are not stored [given up before=0, matches=[5]]")
        // No retry after the stop, however long.
        try await lost.advance(120, full: false)
        #expect(try await lost.isStored(5) == false)
    }
}
