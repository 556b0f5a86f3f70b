import Logging
import MatchHostCore
@testable import MatchHostServer
import MatchHostStoreTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// A move's way to the store: behind the writes of its match still running (its game's
/// creation), and straight from the loop, without a task, when there are none.
@Suite("StoreTurnJournal and WorldStore: a move waits for its game's writes, and only for them")
struct StoreTurnJournalTests {
    /// Holds `createTurnGame` until its gate opens; notes where each move reached the store.
    struct HeldCreationStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let creation = Gate()
        let loop: any EventLoop
        /// Each move that reached the store, and whether it came straight from the loop.
        let moves = NIOLockedValueBox<[(moveNumber: Int, fromTheLoop: Bool)]>([])

        func createTurnGame(
            matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8], isPrivate: Bool
        ) async throws {
            await self.creation.wait()
            try await self.inner.createTurnGame(
                matchID: matchID, game: game, mode: mode, players: players, startedAt: startedAt, state: state, isPrivate: isPrivate)
        }

        func appendMove(
            matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
            completion: @escaping @Sendable (Result<Void, any Error>) -> Void
        ) {
            let fromTheLoop = self.loop.inEventLoop
            self.moves.withLockedValue { $0.append((moveNumber, fromTheLoop)) }
            self.inner.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at, completion: completion)
        }
    }

    /// Where the journal's completions arrive, in order.
    final class Completions: Sendable {
        let results = NIOLockedValueBox<[String]>([])
        private let waiters = NIOLockedValueBox<[(count: Int, continuation: CheckedContinuation<Void, Never>)]>([])

        func record(_ result: String) {
            let count = self.results.withLockedValue { results in
                results.append(result)
                return results.count
            }
            let ready = self.waiters.withLockedValue { waiters in
                defer { waiters.removeAll { $0.count <= count } }
                return waiters.filter { $0.count <= count }
            }
            for waiter in ready { waiter.continuation.resume() }
        }

        func waitFor(_ count: Int) async {
            await withCheckedContinuation { continuation in
                let reached = self.waiters.withLockedValue { waiters in
                    if self.results.withLockedValue({ $0.count }) >= count { return true }
                    waiters.append((count, continuation))
                    return false
                }
                if reached { continuation.resume() }
            }
        }
    }

    @Test func aMoveWaitsForItsGameToBeStoredThenTheNextGoesStraightFromTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let store = HeldCreationStore(loop: loop)
        let completions = Completions()
        let world = try await loop.submit {
            NIOLoopBound(WorldStore(store: store, eventLoop: loop, clock: ManualClock(), logger: Logger(label: "test")), eventLoop: loop)
        }.get()
        let journal = try await loop.submit {
            NIOLoopBound(StoreTurnJournal(storage: world.value), eventLoop: loop)
        }.get()
        // Commits move `number` of game 7 (on the loop), recording "`label`: stored" or the error.
        @Sendable func commitMove(_ number: UInt8, as label: String) {
            journal.value.commit(matchID: 7, moveNumber: Int(number), move: ByteBuffer(bytes: [number]), state: ByteBuffer(bytes: [number])) {
                error in completions.record("\(label): \(error.map { "\($0)" } ?? "stored")")
            }
        }

        // The game's creation is held; its first move is queued behind it.
        try await loop.submit {
            world.value.write(
                for: 7,
                { store in
                    try await store.createTurnGame(matchID: 7, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 0, state: [])
                }, then: { result in completions.record((try? result.get()) != nil ? "created" : "creation failed") })
            commitMove(1, as: "move 1")
        }.get()
        #expect(store.moves.withLockedValue { $0.isEmpty }, "the first move must not reach the store before its game")

        await store.creation.open()
        await completions.waitFor(2)
        #expect(completions.results.withLockedValue { $0 } == ["created", "move 1: stored"])
        #expect(store.moves.withLockedValue { $0.map(\.moveNumber) } == [1])
        #expect(store.moves.withLockedValue { $0.first?.fromTheLoop } == false, "queued behind the creation: from a task")

        // Nothing of the game is being written any more: move 2 goes straight from the loop.
        try await loop.submit {
            commitMove(2, as: "move 2")
        }.get()
        await completions.waitFor(3)
        #expect(completions.results.withLockedValue { $0.last } == "move 2: stored")
        #expect(store.moves.withLockedValue { $0.last?.fromTheLoop } == true)
        // A refused move comes back as the store's error, on the same path.
        try await loop.submit {
            commitMove(2, as: "move 2 again")
        }.get()
        await completions.waitFor(4)
        #expect(completions.results.withLockedValue { $0.last } == "move 2 again: \(GameStoreError.duplicateMove(7, moveNumber: 2))")
        #expect(try await store.inner.moveLog(matchID: 7).map(\.moveNumber) == [1, 2])
        #expect(try await loop.submit { world.value.inFlight.count }.get() == 0)
        try await group.shutdownGracefully()
    }
}
