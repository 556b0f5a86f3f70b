import MatchHostCore
@testable import MatchHostSQLite
import Testing

/// Group commit, with a commit the test holds open: which moves share a transaction, and that
/// none returns before the transaction holding it has committed.
@Suite("SQLite group commit")
struct SQLiteMoveCommitsTests {
    /// The groups the commit was called with, and a gate each commit waits at until the test opens it.
    actor HeldCommits {
        private(set) var groups: [[Int]] = []
        private var opened = 0
        private var gateWaiters: [CheckedContinuation<Void, Never>] = []
        private var groupWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        func commit(_ moves: [SQLiteMoveAppend]) async -> [Result<Void, any Error>] {
            self.groups.append(moves.map(\.moveNumber))
            for waiter in self.groupWaiters where waiter.count <= self.groups.count { waiter.continuation.resume() }
            self.groupWaiters.removeAll { $0.count <= self.groups.count }
            if self.opened < self.groups.count {
                await withCheckedContinuation { self.gateWaiters.append($0) }
            }
            return moves.map { move in
                move.moveNumber == 99 ? .failure(GameStoreError.duplicateMove(move.matchID, moveNumber: 99)) : .success(())
            }
        }

        /// Lets the oldest held commit finish.
        func open() {
            self.opened += 1
            if !self.gateWaiters.isEmpty { self.gateWaiters.removeFirst().resume() }
        }

        /// Returns once `count` groups have reached the commit.
        func waitForGroups(_ count: Int) async {
            if self.groups.count >= count { return }
            await withCheckedContinuation { self.groupWaiters.append((count, $0)) }
        }
    }

    /// Which appends have returned, and how.
    actor Outcomes {
        private(set) var finished: [Int: Bool] = [:]

        func record(_ number: Int, succeeded: Bool) { self.finished[number] = succeeded }
    }

    private static func move(_ number: Int) -> SQLiteMoveAppend {
        SQLiteMoveAppend(matchID: MatchID(number), moveNumber: number, move: [], state: [], at: 0)
    }

    private static func append(_ number: Int, to commits: SQLiteMoveCommits, recordingIn outcomes: Outcomes) -> Task<Void, Never> {
        Task {
            do {
                try await commits.append(Self.move(number))
                await outcomes.record(number, succeeded: true)
            } catch {
                await outcomes.record(number, succeeded: false)
            }
        }
    }

    @Test func movesArrivingDuringACommitShareTheNextTransactionAndReturnOnlyAfterIt() async throws {
        let held = HeldCommits()
        let outcomes = Outcomes()
        let commits = SQLiteMoveCommits { moves in await held.commit(moves) }

        let first = Self.append(1, to: commits, recordingIn: outcomes)
        await held.waitForGroups(1)
        let later = [2, 3, 99].map { Self.append($0, to: commits, recordingIn: outcomes) }
        for _ in 0..<100_000 where await commits.waitingCount < 3 { await Task.yield() }
        #expect(await commits.waitingCount == 3)
        #expect(await outcomes.finished.isEmpty, "nothing returns while its transaction is held")

        await held.open()
        await first.value
        await held.waitForGroups(2)
        #expect(await held.groups == [[1], [2, 3, 99]])
        #expect(await outcomes.finished == [1: true], "moves 2, 3 and 99 wait for the second transaction")

        await held.open()
        for task in later { await task.value }
        #expect(await outcomes.finished == [1: true, 2: true, 3: true, 99: false], "a refused move fails alone")
        #expect(await commits.transactions == 2)
        #expect(await commits.moves == 4)
    }

    @Test func aStoreWritesConcurrentMovesInFewerTransactionsThanMoves() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let games = 1...50
        for id in games {
            try await store.createTurnGame(matchID: MatchID(id), game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 0, state: [])
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in games {
                group.addTask { try await store.appendMove(matchID: MatchID(id), moveNumber: 1, move: [1], state: [1], at: 1) }
            }
            try await group.waitForAll()
        }
        #expect(await store.moveCommits.moves == games.count)
        // 50 moves arrive faster than one synced commit; however the tasks are scheduled,
        // the first commit cannot hold them all, nor can each have its own.
        #expect(await store.moveCommits.transactions < games.count)
        #expect(try await store.activeTurnGames().allSatisfy { $0.moveCount == 1 })
        try await store.close()
    }
}
