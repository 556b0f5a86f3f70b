import Logging
import MatchHostCore
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

    @Test func aNewOutageCountsFromItsOwnStart() {
        var outage = StorageOutage()
        _ = outage.failed("disk full", at: self.start)
        _ = outage.failed("disk full", at: self.start + .seconds(1))
        _ = outage.wrote(at: self.start + .seconds(2))
        #expect(outage.failed("I/O error", at: self.start + .seconds(3)) == .started(error: "I/O error"))
        #expect(outage.failed("I/O error", at: self.start + .seconds(4)) == nil, "reported 1 s ago, at its start")
        #expect(outage.wrote(at: self.start + .seconds(5)) == .ended(failures: 2, duration: .seconds(2)))
    }

    /// Fails its writes with `storageFailed` while `failing`; reads always work, as on a full disk.
    struct FullDiskStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let failing = NIOLockedValueBox(false)

        func createPlayer(id: PlayerID, alias: String, createdAt: UnixMillis) async throws {
            if self.failing.withLockedValue({ $0 }) { throw GameStoreError.storageFailed(reason: "database or disk is full") }
            try await self.inner.createPlayer(id: id, alias: alias, createdAt: createdAt)
        }
    }

    @Test("WorldStore: one line when writes start failing, none for reads or refusals, one when a write succeeds")
    func worldStoreLogsTheOutageNotEachFailure() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let store = FullDiskStore()
        let log = LogLines()
        let world = try await loop.submit {
            NIOLoopBound(WorldStore(store: store, eventLoop: loop, logger: log.logger), eventLoop: loop)
        }.get()
        // Makes `call` through the world's store and waits for its result.
        func call<Value: Sendable>(
            writing: Bool, _ body: @escaping @Sendable (any GameStore) async throws -> Value
        ) async -> Result<Value, any Error> {
            await withCheckedContinuation { continuation in
                loop.execute {
                    if writing {
                        world.value.write(body) { continuation.resume(returning: $0) }
                    } else {
                        world.value.read(body) { continuation.resume(returning: $0) }
                    }
                }
            }
        }

        store.failing.withLockedValue { $0 = true }
        for number in 1...5 {
            let result = await call(writing: true) { try await $0.createPlayer(id: "p\(number)", alias: "", createdAt: .init(milliseconds: 0)) }
            #expect(throws: GameStoreError.storageFailed(reason: "database or disk is full")) { try result.get() }
        }
        #expect(log.all == ["error storage failing: what needs it is refused until it recovers [error=storage failed: database or disk is full]"])
        // A read works on a full disk: the store does not take writes again for that.
        let read = await call(writing: false) { try await $0.player(id: "p1") }
        #expect(try read.get() == nil)
        #expect(log.all.count == 1)

        store.failing.withLockedValue { $0 = false }
        let written = await call(writing: true) { try await $0.createPlayer(id: "p1", alias: "", createdAt: .init(milliseconds: 0)) }
        #expect(throws: Never.self) { try written.get() }
        #expect(log.all.count == 2)
        #expect(log.all.last?.hasPrefix("notice storage recovered [after=") == true)
        #expect(log.all.last?.hasSuffix(", failures=5]") == true)
        // A refusal is the caller's mistake, not the store failing.
        let refused = await call(writing: true) { try await $0.createPlayer(id: "p1", alias: "", createdAt: .init(milliseconds: 0)) }
        #expect(throws: GameStoreError.playerExists("p1")) { try refused.get() }
        #expect(log.all.count == 2)
        try await group.shutdownGracefully()
    }
}
