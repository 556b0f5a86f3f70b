import Logging
import MatchHostCore
import MatchHostProcessTesting
import MatchHostStoreTesting
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

        func recordMatchStarted(
            id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
        ) async throws {
            try self.failIfFull()
            try await self.inner.recordMatchStarted(id: id, game: game, mode: mode, players: players, startedAt: startedAt, isPrivate: isPrivate)
        }

        func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
            try self.failIfFull()
            return try await self.inner.recordMatchFinished(matchID: matchID, endedAt: endedAt, result: result)
        }
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
            NIOLoopBound(WorldStore(store: store, eventLoop: loop, clock: ManualClock(), logger: log.logger, outages: outages), eventLoop: loop)
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

    /// Holds every value write until `release` opens: a database that stalls.
    struct StalledValuesStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let release = Gate()
        func writeValue(playerID: PlayerID, key: String, value: [UInt8]) async throws {
            await self.release.wait()
            try await self.inner.writeValue(playerID: playerID, key: key, value: value)
        }
    }

    @Test(.timeLimit(.minutes(1))) func pastTheBacklogLimitACallFailsAtOnceAsTheDatabaseFailingWould() async throws {
        let log = LogLines()
        let store = StalledValuesStore()
        let server = try await RunningNativeServer.start(logger: log.logger) {
            $0.store = store
            $0.maxStoreBacklog = 3
        }
        let (player, issued) = try await server.login("backlogged")
        var requests: [UInt32] = []
        for number in 1...5 {
            requests.append(try await player.request(.writeValue(key: "k\(number)", value: ByteBuffer(bytes: [UInt8(number)]))))
        }
        // The stalled database holds three; the fourth and fifth are refused at once.
        for refused in requests[3...] {
            let answer = try await player.nextMessage()
            guard case .requestError(refused, let error) = answer else { throw TestClientError.unexpected("\(answer)") }
            #expect(error.code == .storageUnavailable)
        }
        #expect(log.all.contains { $0.contains("storage failing") && $0.contains("--max-store-backlog 3") })

        await store.release.open()
        for admitted in requests[..<3] {
            #expect(try await player.nextMessage() == .response(id: admitted, .done))
        }
        #expect(try await store.inner.readValue(playerID: issued.playerID, key: "k3") == [3])
        #expect(try await store.inner.readValue(playerID: issued.playerID, key: "k4") == nil)
        try await server.stop()
    }

    /// A race's GAME_OVER waits for its standing to be stored, but not for ever: a stalled
    /// database tells it after ``WorldStore/longestStandingWait``, and only once.
    @Test func aRacesResultIsToldAfterTheLongestWaitIfTheDatabaseStalls() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let store = HeldInterimStore()
        try await store.memory.recordMatchStarted(id: 9, game: "catrace", mode: "", players: ["a", "b"], startedAt: 1)
        let told = NIOLockedValueBox(0)
        let (world, clock) = try await loop.submit {
            let clock = ManualClock()
            let world = WorldStore(store: store, eventLoop: loop, clock: clock, logger: Logger(label: "test"))
            return (NIOLoopBound(world, eventLoop: loop), NIOLoopBound(clock, eventLoop: loop))
        }.get()
        let standing = MatchResultRecord(players: [
            PlayerResultRecord(playerID: "a", outcome: .won, score: 1), PlayerResultRecord(playerID: "b", outcome: .lost, score: 0),
        ])
        try await loop.submit {
            world.value.recordInterimResult(standing, of: 9, players: ["a", "b"]) { told.withLockedValue { $0 += 1 } }
        }.get()
        await store.reached.wait()
        try await loop.submit { clock.value.advance(by: WorldStore.longestStandingWait - .milliseconds(1)) }.get()
        #expect(told.withLockedValue { $0 } == 0, "still waiting for the database")
        try await loop.submit { clock.value.advance(by: .milliseconds(1)) }.get()
        #expect(told.withLockedValue { $0 } == 1, "told without it")

        // The write goes on, and its end tells nobody a second time.
        await store.release.open()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { world.value.read(in: .match(9), { _ in }) { _ in continuation.resume() } }
        }
        #expect(told.withLockedValue { $0 } == 1)
        #expect(await store.memory.endInterruptedMatches(at: 2, reason: "crash", notice: nil).first?.state == .finished(standing))
    }
}
