import Logging
import MatchHostCore
import MatchHostWire
@testable import MatchHostServer
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@Suite("StorageOutage: a failing store is reported once, then every 10 s, then once when a write succeeds")
struct StorageOutageTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func anOutageIsReportedWhenItStartsAtMostEveryIntervalWhileItLastsAndWhenItEnds() {
        var outage = StorageOutage()
        #expect(outage.wrote(at: self.start) == nil, "a write while the store works says nothing")
        #expect(outage.failed("disk full", at: self.start) == .started(error: "disk full"))
        #expect(outage.failingSince == self.start)
        for second in 1...9 {
            #expect(outage.failed("disk full", at: self.start + .seconds(Int64(second))) == nil)
        }
        #expect(
            outage.failed("disk still full", at: self.start + .seconds(10))
                == .continuing(failures: 10, duration: .seconds(10), error: "disk still full"))
        #expect(outage.failed("disk full", at: self.start + .seconds(15)) == nil)
        #expect(
            outage.failed("disk full", at: self.start + .seconds(21))
                == .continuing(failures: 2, duration: .seconds(21), error: "disk full"))
        #expect(outage.wrote(at: self.start + .seconds(30)) == .ended(failures: 13, duration: .seconds(30)))
        #expect(outage.failingSince == nil)
        #expect(outage.wrote(at: self.start + .seconds(31)) == nil)
    }

    @Test("an outage that seems to end and start again within the interval is told at most twice per interval")
    func aFlappingOutageIsToldAtMostTwicePerInterval() {
        var outage = StorageOutage()
        _ = outage.failed("disk full", at: self.start)
        #expect(outage.wrote(at: self.start + .seconds(2)) == .ended(failures: 1, duration: .seconds(2)))
        // A write that changed nothing succeeded on the full disk: the next failure is the same
        // trouble, not told again until 10 s after the last report...
        #expect(outage.failed("disk full", at: self.start + .seconds(3)) == nil)
        #expect(outage.failed("disk full", at: self.start + .seconds(4)) == nil)
        #expect(outage.wrote(at: self.start + .seconds(5)) == nil, "an outage never told does not end aloud")
        #expect(outage.failed("disk full", at: self.start + .seconds(6)) == nil)
        // ...then told as one outage, and its end too.
        #expect(outage.failed("disk full", at: self.start + .seconds(12)) == .started(error: "disk full"))
        #expect(outage.failed("disk full", at: self.start + .seconds(13)) == nil)
        #expect(outage.wrote(at: self.start + .seconds(14)) == .ended(failures: 3, duration: .seconds(8)))
        // Long after the last report, a new outage is told at once.
        #expect(outage.failed("I/O error", at: self.start + .seconds(30)) == .started(error: "I/O error"))
    }

    /// Fails its writes of players and results with `storageFailed` while `failing`; reads
    /// always work, as on a full disk.
    struct FullDiskStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let failing = NIOLockedValueBox(false)

        private func failIfFull() throws {
            if self.failing.withLockedValue({ $0 }) { throw GameStoreError.storageFailed(reason: "database or disk is full") }
        }

        func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws {
            try self.failIfFull()
            try await self.inner.createPlayer(id: id, alias: alias, createdAt: createdAt)
        }

        func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
            try self.failIfFull()
            return try await self.inner.recordMatchFinished(matchID: matchID, endedAt: endedAt, result: result)
        }
    }

    @Test("WorldStore: a result the database failed is written again once a write succeeds, at most once a second")
    func aResultTheDatabaseFailedIsWrittenOnceItTakesWritesAgain() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let store = FullDiskStore()
        let log = LogLines()
        let clock = NIOLockedValueBox<Int64>(5_000)
        let world = try await loop.submit {
            NIOLoopBound(
                WorldStore(store: store, eventLoop: loop, logger: log.logger, now: { UnixMillis(milliseconds: clock.withLockedValue { $0 }) }),
                eventLoop: loop)
        }.get()
        /// At `time`, with the disk `full` or not: runs `body` on the loop, then waits until
        /// every write of matches 5 and 7 queued so far is done (a read in their queues), and
        /// again for the retries those writes set off as they finished.
        func at(_ time: Int64, full: Bool, _ body: @escaping @Sendable (WorldStore) -> Void) async {
            clock.withLockedValue { $0 = time }
            store.failing.withLockedValue { $0 = full }
            try? await loop.submit { body(world.value) }.get()
            for _ in 1...2 {
                for match: MatchID in [5, 7] {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        loop.execute { world.value.read(in: .match(match), { _ in }) { _ in continuation.resume() } }
                    }
                }
            }
        }
        @Sendable func succeedingWrite(_ world: WorldStore) {
            world.write(for: 5, { try await $0.createPlayer(id: "p\(clock.withLockedValue { $0 })", alias: "", createdAt: 1) })
        }
        func waiting() async throws -> Int { try await loop.submit { world.value.unstoredEndings.count }.get() }
        let result = MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .won), PlayerResultRecord(playerID: "b", outcome: .lost)])
        for match: MatchID in [5, 7] {
            try await store.inner.recordMatchStarted(id: match, game: "disks", mode: "", players: ["a", "b"], startedAt: 1)
        }

        await at(5_000, full: true) { $0.recordEnding(.finished(result), of: 5, players: ["a", "b"]) }
        #expect(try await waiting() == 1)
        #expect(try await store.inner.match(id: 5)?.state == .running)
        // The disk has room again: the next write that succeeds brings the result back.
        await at(5_000, full: false, succeedingWrite)
        #expect(try await waiting() == 0)
        #expect(try await store.inner.match(id: 5)?.state == .finished(result))

        await at(5_200, full: true) { $0.recordEnding(.finished(result), of: 7, players: ["a", "b"]) }
        #expect(try await waiting() == 1)
        await at(5_500, full: false, succeedingWrite)
        #expect(try await waiting() == 1, "half a second after the last retry: not yet")
        await at(6_000, full: false, succeedingWrite)
        #expect(try await waiting() == 0)
        #expect(try await store.inner.match(id: 7)?.state == .finished(result))
        #expect(log.all.filter { $0.hasPrefix("notice writing again the match endings the database failed [matches=1]") }.count == 2)
    }

    @Test("WorldStore: past the limit of results waiting for the database, the oldest is given up, and said so")
    func resultsWaitingForTheDatabaseAreBounded() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let store = FullDiskStore()
        store.failing.withLockedValue { $0 = true }
        let log = LogLines()
        let world = try await loop.submit {
            NIOLoopBound(WorldStore(store: store, eventLoop: loop, logger: log.logger, maximumUnstoredEndings: 2), eventLoop: loop)
        }.get()
        let result = MatchResultRecord(players: [PlayerResultRecord(playerID: "a", outcome: .won)])
        for match: MatchID in [5, 6, 7] {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                loop.execute {
                    world.value.recordEnding(.finished(result), of: match, players: ["a"])
                    world.value.read(in: .match(match), { _ in }) { _ in continuation.resume() }
                }
            }
        }
        #expect(try await loop.submit { world.value.unstoredEndings.map(\.match) }.get() == [6, 7])
        #expect(log.all.contains("warning match result not recorded: too many endings wait for the database [match=5]"))
    }

    @Test("WorldStore: one line when writes start failing, one per interval, none for reads or refusals, one when a write succeeds")
    func worldStoreLogsTheOutageNotEachFailure() async throws {
        // The shared group: nothing to shut down, whichever expectation fails.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let store = FullDiskStore()
        let log = LogLines()
        let clock = NIOLockedValueBox(self.start)
        let outages = StorageOutageMonitor(logger: log.logger) { clock.withLockedValue { $0 } }
        let world = try await loop.submit {
            NIOLoopBound(WorldStore(store: store, eventLoop: loop, logger: log.logger, outages: outages), eventLoop: loop)
        }.get()
        enum Way { case write, read, readInQueue }
        // Makes `body` through the world's store and waits for its result.
        func call<Value: Sendable>(_ way: Way, _ body: @escaping @Sendable (any GameStore) async throws -> Value) async -> Result<Value, any Error> {
            await withCheckedContinuation { continuation in
                loop.execute {
                    switch way {
                    case .write: world.value.write(body) { continuation.resume(returning: $0) }
                    case .read: world.value.read(body) { continuation.resume(returning: $0) }
                    case .readInQueue: world.value.read(in: .player("p1"), body) { continuation.resume(returning: $0) }
                    }
                }
            }
        }
        @Sendable func create(_ id: PlayerID) -> @Sendable (any GameStore) async throws -> Void {
            { try await $0.createPlayer(id: id, alias: "", createdAt: .init(milliseconds: 0)) }
        }
        let failure = "storage failed: database or disk is full"

        store.failing.withLockedValue { $0 = true }
        for number in 1...5 {
            await #expect(throws: GameStoreError.storageFailed(reason: "database or disk is full")) { try await call(.write, create("p\(number)")).get() }
        }
        #expect(log.all == ["error storage failing: what needs it is refused until it recovers [error=\(failure)]"])
        // Reads work on a full disk: the store does not take writes again for that.
        #expect(try await call(.read) { try await $0.player(id: "p1") }.get() == nil)
        #expect(try await call(.readInQueue) { try await $0.readValue(playerID: "p1", key: "k") }.get() == nil)
        // An answer the caller makes itself (NO_SUCH_PLAYER for a profile) is not the store failing.
        _ = await call(.read) { _ -> Int in throw NativeError(.noSuchPlayer, "no player with id q") }
        #expect(log.all.count == 1)

        clock.withLockedValue { $0 = self.start + .seconds(10) }
        _ = await call(.write, create("p6"))
        #expect(log.all.last == "warning storage still failing [error=\(failure), failures=5, for=10.0s]")

        store.failing.withLockedValue { $0 = false }
        clock.withLockedValue { $0 = self.start + .seconds(12) }
        await #expect(throws: Never.self) { try await call(.write, create("p1")).get() }
        #expect(log.all.last == "notice storage recovered: a write succeeded [after=12.0s, failures=6]")
        // A refusal is the caller's mistake, not the store failing.
        await #expect(throws: GameStoreError.playerExists("p1")) { try await call(.write, create("p1")).get() }
        #expect(log.all.count == 3)
    }
}
