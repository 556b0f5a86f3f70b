import MatchHostCore

/// One move for ``SQLiteGameStore/appendMove(matchID:moveNumber:move:state:at:)``, as it waits
/// for its transaction.
struct SQLiteMoveAppend: Sendable, Hashable {
    var matchID: MatchID
    var moveNumber: Int
    var move: [UInt8]
    var state: [UInt8]
    var at: UnixMillis
}

/// Group commit for turn-based moves: the moves that arrive while a transaction is being
/// committed wait here, and are all written in the next transaction, one sync for them all.
///
/// Why: with `synchronous = FULL` every transaction waits for the disk, and SQLite has one
/// writer, so one transaction per move would queue each move behind the sync of every move
/// before it. Grouped, a move waits for at most the commit in flight and its own.
///
/// Each move still returns only once the transaction holding it is committed, and the moves
/// of one group are applied in the order they arrived, each in a savepoint of its own: a
/// move the store refuses (``GameStoreError``) fails alone, as if it had been a transaction of
/// its own. A failure of the transaction itself fails every move in it.
actor SQLiteMoveCommits {
    /// Writes one group in one transaction; returns each move's outcome, in order.
    typealias Commit = @Sendable ([SQLiteMoveAppend]) async -> [Result<Void, any Error>]

    private let commit: Commit
    private var waiting: [(move: SQLiteMoveAppend, continuation: CheckedContinuation<Void, any Error>)] = []
    private var committing = false
    /// Transactions written so far, and the moves in them.
    private(set) var transactions = 0
    private(set) var moves = 0

    init(commit: @escaping Commit) {
        self.commit = commit
    }

    /// Moves waiting for the next transaction (not counting those in the one in flight).
    var waitingCount: Int { self.waiting.count }

    /// Returns once `move` is committed; throws what kept it from being stored.
    func append(_ move: SQLiteMoveAppend) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.waiting.append((move, continuation))
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
            // The actor is free while the group commits: later moves join the next group.
            let outcomes = await self.commit(group.map(\.move))
            self.transactions += 1
            self.moves += group.count
            for (index, entry) in group.enumerated() {
                let outcome = index < outcomes.count ? outcomes[index] : .failure(GameStoreError.storageFailed(reason: "no outcome"))
                entry.continuation.resume(with: outcome)
            }
        }
        self.committing = false
    }
}
