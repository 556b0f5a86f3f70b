import Foundation
import GRDB
import MatchHostCore
import NIOConcurrencyHelpers

/// Group commit on a thread of its own: the writes that arrive while a transaction is being
/// committed wait here, and are all made in the next transaction, one sync of the log for them
/// all.
///
/// Why grouped: with `synchronous = FULL` every transaction waits for the disk, and SQLite has
/// one writer, so one transaction per call queues each call behind the sync of every call
/// before it: a burst of logins, say, would hold up every game's next move. Grouped, a call
/// waits for at most the commit in flight and its own.
///
/// Why a thread of its own: the writer thread waits on a condition variable, takes everything
/// waiting, commits it on the writer connection from that same thread (GRDB's synchronous
/// write runs the block on the calling thread), and reports each outcome from there, so a move
/// from an event loop (``append(_:completion:)``) is one hand-off to the writer and one back.
/// Through GRDB's async write the same commit went through a task, this type as an actor, the
/// pool's dispatch queue (on a dozen rotating dispatch threads) and back; the thread saves
/// about a tenth of the server's CPU per move (BENCHMARKS.md, issue 5).
///
/// Each call still completes only once the transaction holding it is committed, the calls of
/// one group run in the order they arrived, and each keeps the meaning of a transaction of its
/// own: one that fails is undone alone (see ``SQLiteGroupedWrite/Undo``) and the others go on;
/// a failure of the transaction itself fails every call in it. Generic over what is grouped
/// so that tests can hold a commit open.
final class SQLiteGroupCommit<Write: Sendable>: Sendable {
    /// Makes one group in one transaction, on the writer thread; returns each write's outcome,
    /// in order.
    typealias Commit = @Sendable ([Write]) -> [Result<Void, any Error>]
    /// Told a write's outcome, on the writer thread: it must only hand the outcome on.
    typealias Completion = @Sendable (Result<Void, any Error>) -> Void

    private let queue: WriterQueue<Write>

    /// Starts the writer thread, named `name`.
    init(name: String = "sqlite-writer", commit: @escaping Commit) {
        self.queue = WriterQueue()
        let queue = self.queue
        let thread = Thread {
            Thread.current.name = name
            queue.run(commit)
        }
        thread.start()
    }

    deinit {
        self.queue.stop()
    }

    /// Writes waiting for the next transaction (not counting those in the one in flight).
    var waitingCount: Int { self.queue.counts.waiting }
    /// Transactions committed so far.
    var transactions: Int { self.queue.counts.transactions }
    /// Writes committed (or refused) so far.
    var writes: Int { self.queue.counts.writes }
    /// Whether ``stop()`` was called.
    var isStopping: Bool { self.queue.counts.stopping }

    /// Queues `write` for the next transaction; `completion` is called, on the writer thread,
    /// once it is committed (or with what kept it from being made). Never blocks on the disk.
    func append(_ write: Write, completion: @escaping Completion) {
        self.queue.append(write, completion)
    }

    /// Returns once `write` is committed; throws what kept it from being made.
    func append(_ write: Write) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.append(write) { continuation.resume(with: $0) }
        }
    }

    /// Commits what is waiting, then lets the thread end: later writes fail with
    /// ``GameStoreError/storageFailed(reason:)``. Blocks until the thread is done: call it off
    /// any event loop, and never from a completion.
    func stop() {
        self.queue.stop()
        self.queue.waitUntilStopped()
    }
}

/// The writer thread's queue, shared by the thread and ``SQLiteGroupCommit`` (the thread keeps
/// it, not the group commit, so that letting go of the store ends the thread).
private final class WriterQueue<Write: Sendable>: @unchecked Sendable {
    // Everything below is guarded by `lock`, whose value is `true` while writes wait or a stop
    // was asked for: what the thread waits for.
    private let lock = ConditionLock(value: false)
    private var waiting: [(write: Write, completion: SQLiteGroupCommit<Write>.Completion)] = []
    private var stopping = false
    private var transactions = 0
    private var writes = 0
    private let finished = ConditionLock(value: false)

    var counts: (waiting: Int, transactions: Int, writes: Int, stopping: Bool) {
        self.lock.lock()
        defer { self.lock.unlock() }
        return (self.waiting.count, self.transactions, self.writes, self.stopping)
    }

    func append(_ write: Write, _ completion: @escaping SQLiteGroupCommit<Write>.Completion) {
        self.lock.lock()
        guard !self.stopping else {
            self.lock.unlock()
            completion(.failure(GameStoreError.storageFailed(reason: "the database is closed")))
            return
        }
        self.waiting.append((write, completion))
        self.lock.unlock(withValue: true)
    }

    func stop() {
        self.lock.lock()
        self.stopping = true
        self.lock.unlock(withValue: true)
    }

    func waitUntilStopped() {
        self.finished.lock(whenValue: true)
        self.finished.unlock()
    }

    /// The writer thread: commits each group as it comes, until stopped with nothing left.
    func run(_ commit: SQLiteGroupCommit<Write>.Commit) {
        var group: [(write: Write, completion: SQLiteGroupCommit<Write>.Completion)] = []
        while true {
            self.lock.lock(whenValue: true)
            swap(&group, &self.waiting)
            let done = group.isEmpty
            // Arrivals from now on wake the thread again (a stop keeps it awake to the end).
            self.lock.unlock(withValue: self.stopping)
            if done { break }
            let outcomes = commit(group.map(\.write))
            self.lock.lock()
            self.transactions += 1
            self.writes += group.count
            self.lock.unlock(withValue: self.stopping || !self.waiting.isEmpty)
            for (index, entry) in group.enumerated() {
                entry.completion(
                    index < outcomes.count ? outcomes[index] : .failure(GameStoreError.storageFailed(reason: "no outcome")))
            }
            group.removeAll(keepingCapacity: true)
        }
        self.finished.lock()
        self.finished.unlock(withValue: true)
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
    /// rolls the transaction back. Blocks the calling thread (the writer thread) meanwhile.
    static func commit(_ writes: [SQLiteGroupedWrite], to pool: DatabasePool) -> [Result<Void, any Error>] {
        do {
            return try pool.write { db in
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
