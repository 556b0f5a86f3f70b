import Dispatch
import MatchHostCore
@testable import MatchHostSQLite
import NIOConcurrencyHelpers
import Testing

/// Group commit, with a commit the test holds open: which writes share a transaction, and that
/// none returns before the transaction holding it has committed.
@Suite("SQLite group commit")
struct SQLiteGroupCommitTests {
    /// The groups the commit was called with, and a gate each commit waits at (on the writer
    /// thread) until the test opens it.
    final class HeldCommits: Sendable {
        private let state = NIOLockedValueBox(
            (groups: [[Int]](), waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)]()))
        private let gate = DispatchSemaphore(value: 0)

        var groups: [[Int]] { self.state.withLockedValue { $0.groups } }

        func commit(_ writes: [Int]) -> [Result<Void, any Error>] {
            let ready = self.state.withLockedValue { state in
                state.groups.append(writes)
                let count = state.groups.count
                defer { state.waiters.removeAll { $0.count <= count } }
                return state.waiters.filter { $0.count <= count }.map(\.continuation)
            }
            for continuation in ready { continuation.resume() }
            self.gate.wait()
            return writes.map { number in
                number == 99 ? .failure(GameStoreError.duplicateMove(1, moveNumber: 99)) : .success(())
            }
        }

        /// Lets the oldest held commit finish.
        func open() { self.gate.signal() }

        /// Returns once `count` groups have reached the commit.
        func waitForGroups(_ count: Int) async {
            await withCheckedContinuation { continuation in
                let reached = self.state.withLockedValue { state in
                    if state.groups.count >= count { return true }
                    state.waiters.append((count, continuation))
                    return false
                }
                if reached { continuation.resume() }
            }
        }
    }

    /// Which appends have returned, and how.
    actor Outcomes {
        private(set) var finished: [Int: Bool] = [:]

        func record(_ number: Int, succeeded: Bool) { self.finished[number] = succeeded }
    }

    private static func append(_ number: Int, to commits: SQLiteGroupCommit<Int>, recordingIn outcomes: Outcomes) -> Task<Void, Never> {
        Task {
            do {
                try await commits.append(number)
                await outcomes.record(number, succeeded: true)
            } catch {
                await outcomes.record(number, succeeded: false)
            }
        }
    }

    /// Returns once `condition` holds (another thread makes it so), or after 10 s.
    private static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func writesArrivingDuringACommitShareTheNextTransactionAndReturnOnlyAfterIt() async throws {
        let held = HeldCommits()
        let outcomes = Outcomes()
        let commits = SQLiteGroupCommit<Int> { writes in held.commit(writes) }

        let first = Self.append(1, to: commits, recordingIn: outcomes)
        await held.waitForGroups(1)
        var later: [Task<Void, Never>] = []
        for (index, number) in [2, 3, 99].enumerated() {
            later.append(Self.append(number, to: commits, recordingIn: outcomes))
            // One at a time: tasks started together may arrive in any order.
            try await Self.waitUntil { commits.waitingCount == index + 1 }
        }
        #expect(commits.waitingCount == 3)
        #expect(await outcomes.finished.isEmpty, "nothing returns while its transaction is held")

        held.open()
        await first.value
        await held.waitForGroups(2)
        #expect(held.groups == [[1], [2, 3, 99]])
        #expect(await outcomes.finished == [1: true], "writes 2, 3 and 99 wait for the second transaction")

        held.open()
        for task in later { await task.value }
        #expect(await outcomes.finished == [1: true, 2: true, 3: true, 99: false], "a refused write fails alone")
        #expect(commits.transactions == 2)
        #expect(commits.writes == 4)
    }

    @Test func stoppingCommitsWhatIsWaitingAndRefusesLaterWrites() async throws {
        let held = HeldCommits()
        let outcomes = Outcomes()
        let commits = SQLiteGroupCommit<Int> { writes in held.commit(writes) }
        let first = Self.append(1, to: commits, recordingIn: outcomes)
        await held.waitForGroups(1)
        let second = Self.append(2, to: commits, recordingIn: outcomes)
        try await Self.waitUntil { commits.waitingCount == 1 }

        // stop() blocks until the thread is done: on a dispatch thread, not the test's.
        let stopped = Task {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    commits.stop()
                    continuation.resume()
                }
            }
        }
        try await Self.waitUntil { commits.isStopping }
        #expect(commits.isStopping, "the stop is asked for while write 1 is held and write 2 waits")
        held.open()
        await held.waitForGroups(2)
        held.open()
        await stopped.value
        await first.value
        await second.value
        #expect(await outcomes.finished == [1: true, 2: true], "what was waiting at the stop is committed")
        #expect(held.groups == [[1], [2]])

        let refused = Self.append(3, to: commits, recordingIn: outcomes)
        await refused.value
        #expect(await outcomes.finished[3] == false)
        #expect(held.groups == [[1], [2]], "nothing reaches the commit after the stop")
    }

    @Test func aMoveReportedThroughItsCompletionIsStoredWhenTheCompletionRuns() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        try await store.createTurnGame(matchID: 5, game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 0, state: [])
        let stored: [Int] = try await withCheckedThrowingContinuation { continuation in
            store.appendMove(matchID: 5, moveNumber: 1, move: [3], state: [9], at: 1) { result in
                // On the writer thread, after the commit: a reader sees the move already.
                continuation.resume(with: result.flatMap { Result { try store.pool.read { db in try Int.fetchAll(db, sql: "SELECT move_number FROM turn_move WHERE match_id = 5") } } })
            }
        }
        #expect(stored == [1])
        let again: Result<Void, any Error> = await withCheckedContinuation { continuation in
            store.appendMove(matchID: 5, moveNumber: 1, move: [3], state: [9], at: 2) { continuation.resume(returning: $0) }
        }
        #expect(throws: GameStoreError.duplicateMove(5, moveNumber: 1)) { try again.get() }
        try await store.close()
        let closed: Result<Void, any Error> = await withCheckedContinuation { continuation in
            store.appendMove(matchID: 5, moveNumber: 2, move: [4], state: [9], at: 3) { continuation.resume(returning: $0) }
        }
        #expect(throws: GameStoreError.self) { try closed.get() }
    }

    @Test func aStoreMakesConcurrentWritesInFewerTransactionsThanWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let games = 1...50
        for id in games {
            try await store.createTurnGame(matchID: MatchID(id), game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 0, state: [])
        }
        let writesBefore = store.writes.writes
        let transactionsBefore = store.writes.transactions
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in games {
                group.addTask { try await store.appendMove(matchID: MatchID(id), moveNumber: 1, move: [1], state: [1], at: 1) }
                group.addTask { try await store.createPlayer(id: "player-\(id)", alias: "", createdAt: 1) }
            }
            try await group.waitForAll()
        }
        #expect(store.writes.writes - writesBefore == 2 * games.count)
        // 100 writes arrive far faster than one synced commit takes, so they share transactions.
        #expect(store.writes.transactions - transactionsBefore < 2 * games.count)
        #expect(try await store.activeTurnGames().allSatisfy { $0.moveCount == 1 && $0.state == [1] })
        for id in games {
            #expect(try await store.player(id: "player-\(id)") != nil)
        }
        try await store.close()
    }

    private static func insertPlayer(_ id: String) -> SQLiteGroupedWrite {
        SQLiteGroupedWrite(undo: .savepoint) { db in
            try db.execute(sql: "INSERT INTO player (id, alias, created_at, last_seen_at) VALUES (?, '', 0, 0)", arguments: [id])
        }
    }

    @Test func aGroupUndoesEachFailedWriteAloneAndKeepsTheOthers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let writesHalfAndThrows = SQLiteGroupedWrite(undo: .savepoint) { db in
            try db.execute(sql: "INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('b', '', 0, 0)")
            throw GameStoreError.unknownPlayer("b")
        }
        let refusesFirst = SQLiteGroupedWrite(undo: .checksFirst) { _ in throw GameStoreError.unknownMatch(9) }
        let outcomes = SQLiteGroupedWrite.commit(
            [Self.insertPlayer("a"), writesHalfAndThrows, refusesFirst, Self.insertPlayer("d")], to: store.pool)
        #expect(outcomes.map { (try? $0.get()) != nil } == [true, false, false, true])
        if case .failure(let error) = outcomes[1] { #expect(error as? GameStoreError == .unknownPlayer("b")) }
        if case .failure(let error) = outcomes[2] { #expect(error as? GameStoreError == .unknownMatch(9)) }
        #expect(try await store.player(id: "a") != nil)
        #expect(try await store.player(id: "b") == nil, "the failed write's insert is undone")
        #expect(try await store.player(id: "d") != nil)
        try await store.close()
    }

    @Test func aWriteThatFailsPastItsChecksFailsTheWholeGroup() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        // A checks-first write that fails on a statement may have written: nothing of the group stays.
        let failsMidway = SQLiteGroupedWrite(undo: .checksFirst) { db in
            try db.execute(sql: "INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('c', '', 0, 0)")
            try db.execute(sql: "INSERT INTO no_such_table VALUES (1)")
        }
        let outcomes = SQLiteGroupedWrite.commit([Self.insertPlayer("a"), failsMidway], to: store.pool)
        #expect(outcomes.allSatisfy { (try? $0.get()) == nil })
        #expect(try await store.player(id: "a") == nil)
        #expect(try await store.player(id: "c") == nil)
        try await store.close()
    }
}
