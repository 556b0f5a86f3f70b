import MatchHostCore
@testable import MatchHostSQLite
import Testing

/// Group commit, with a commit the test holds open: which writes share a transaction, and that
/// none returns before the transaction holding it has committed.
@Suite("SQLite group commit")
struct SQLiteGroupCommitTests {
    /// The groups the commit was called with, and a gate each commit waits at until the test opens it.
    actor HeldCommits {
        private(set) var groups: [[Int]] = []
        private var opened = 0
        private var gateWaiters: [CheckedContinuation<Void, Never>] = []
        private var groupWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        func commit(_ writes: [Int]) async -> [Result<Void, any Error>] {
            self.groups.append(writes)
            for waiter in self.groupWaiters where waiter.count <= self.groups.count { waiter.continuation.resume() }
            self.groupWaiters.removeAll { $0.count <= self.groups.count }
            if self.opened < self.groups.count {
                await withCheckedContinuation { self.gateWaiters.append($0) }
            }
            return writes.map { number in
                number == 99 ? .failure(GameStoreError.duplicateMove(1, moveNumber: 99)) : .success(())
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

    @Test func writesArrivingDuringACommitShareTheNextTransactionAndReturnOnlyAfterIt() async throws {
        let held = HeldCommits()
        let outcomes = Outcomes()
        let commits = SQLiteGroupCommit<Int> { writes in await held.commit(writes) }

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
        #expect(await outcomes.finished == [1: true], "writes 2, 3 and 99 wait for the second transaction")

        await held.open()
        for task in later { await task.value }
        #expect(await outcomes.finished == [1: true, 2: true, 3: true, 99: false], "a refused write fails alone")
        #expect(await commits.transactions == 2)
        #expect(await commits.writes == 4)
    }

    @Test func aStoreMakesConcurrentWritesInFewerTransactionsThanWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let games = 1...50
        for id in games {
            try await store.createTurnGame(matchID: MatchID(id), game: "fourinarow", mode: "", players: ["a", "b"], startedAt: 0, state: [])
        }
        let writesBefore = await store.writes.writes
        let transactionsBefore = await store.writes.transactions
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in games {
                group.addTask { try await store.appendMove(matchID: MatchID(id), moveNumber: 1, move: [1], state: [1], at: 1) }
                group.addTask { try await store.createPlayer(id: "player-\(id)", alias: "", createdAt: 1) }
            }
            try await group.waitForAll()
        }
        #expect(await store.writes.writes - writesBefore == 2 * games.count)
        // 100 writes arrive far faster than one synced commit takes, so they share transactions.
        #expect(await store.writes.transactions - transactionsBefore < 2 * games.count)
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
        let outcomes = await SQLiteGroupedWrite.commit(
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
        let outcomes = await SQLiteGroupedWrite.commit([Self.insertPlayer("a"), failsMidway], to: store.pool)
        #expect(outcomes.allSatisfy { (try? $0.get()) == nil })
        #expect(try await store.player(id: "a") == nil)
        #expect(try await store.player(id: "c") == nil)
        try await store.close()
    }
}
