import GRDB
import MatchHostCore

/// Group commit: the writes that arrive while a transaction is being committed wait here, and
/// are all made in the next transaction, one sync of the log for them all.
///
/// Why: with `synchronous = FULL` every transaction waits for the disk, and SQLite has one
/// writer, so one transaction per call queues each call behind the sync of every call before
/// it: a burst of logins, say, would hold up every game's next move. Grouped, a call waits for
/// at most the commit in flight and its own.
///
/// Each call still returns only once the transaction holding it is committed, the calls of
/// one group run in the order they arrived, and each keeps the meaning of a transaction of its
/// own: one that fails is undone alone (see ``SQLiteGroupedWrite/Undo``) and the others go on;
/// a failure of the transaction itself fails every call in it. Generic over what is grouped
/// so that tests can hold a commit open.
actor SQLiteGroupCommit<Write: Sendable> {
    /// Makes one group in one transaction; returns each write's outcome, in order.
    typealias Commit = @Sendable ([Write]) async -> [Result<Void, any Error>]

    private let commit: Commit
    private var waiting: [(write: Write, continuation: CheckedContinuation<Void, any Error>)] = []
    private var committing = false
    /// Transactions committed so far, and the writes in them.
    private(set) var transactions = 0
    private(set) var writes = 0

    init(commit: @escaping Commit) {
        self.commit = commit
    }

    /// Writes waiting for the next transaction (not counting those in the one in flight).
    var waitingCount: Int { self.waiting.count }

    /// Returns once `write` is committed; throws what kept it from being made.
    func append(_ write: Write) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.waiting.append((write, continuation))
            if !self.committing {
                self.committing = true
                Task { await self.commitWaiting() }
            }
        }
    }

    /// Commits what is waiting, then what arrived meanwhile, until nothing is left.
    private func commitWaiting() async {
        while !self.waiting.isEmpty {
            let group = self.waiting
            self.waiting.removeAll(keepingCapacity: true)
            // The actor is free while the group commits: later writes join the next group.
            let outcomes = await self.commit(group.map(\.write))
            self.transactions += 1
            self.writes += group.count
            for (index, entry) in group.enumerated() {
                let outcome = index < outcomes.count ? outcomes[index] : .failure(GameStoreError.storageFailed(reason: "no outcome"))
                entry.continuation.resume(with: outcome)
            }
        }
        self.committing = false
    }
}

/// One call's statements, waiting for its group's transaction.
struct SQLiteGroupedWrite: Sendable {
    /// How a call that fails is undone without undoing the others in its transaction.
    enum Undo: Sendable {
        /// It checks before it writes, so a ``GameStoreError`` (a refusal) has written
        /// nothing; any other error fails the whole group. What every move does, for the
        /// cost of two statements less than a savepoint.
        case checksFirst
        /// It may fail after writing: it runs in a savepoint of its own.
        case savepoint
    }

    var undo: Undo
    /// Runs the call's statements on the writer's connection, inside the group's transaction.
    var run: @Sendable (Database) throws -> Void

    /// Makes `writes` in one transaction on `pool`, each undone alone when it fails; returns
    /// each one's outcome. A write alone in its transaction is not wrapped at all: its failure
    /// rolls the transaction back.
    static func commit(_ writes: [SQLiteGroupedWrite], to pool: DatabasePool) async -> [Result<Void, any Error>] {
        do {
            return try await pool.write { db in
                guard writes.count > 1 else {
                    try writes.first?.run(db)
                    return writes.map { _ in .success(()) }
                }
                return try writes.map { write in try write.runAlone(in: db) }
            }
        } catch {
            let failure = SQLiteGameStore.storeError(error)
            return writes.map { _ in .failure(failure) }
        }
    }

    /// Runs the write among others: its own failure is its outcome, unless it leaves the
    /// transaction unusable (then it is thrown, and the group fails).
    private func runAlone(in db: Database) throws -> Result<Void, any Error> {
        do {
            switch self.undo {
            case .checksFirst: try self.run(db)
            case .savepoint:
                try db.inSavepoint {
                    try self.run(db)
                    return .commit
                }
            }
            return .success(())
        } catch let error as GameStoreError where db.isInsideTransaction {
            return .failure(error)
        } catch where self.undo == .savepoint && db.isInsideTransaction {
            return .failure(SQLiteGameStore.storeError(error))
        }
    }
}

/// The value a grouped write produced, read by its caller once the group is committed.
final class SQLiteWriteResult<Value: Sendable>: @unchecked Sendable {
    // Set on the writer's thread before the group commits, read by the caller after its
    // continuation resumes: the resumption orders the two.
    var value: Value?
}
