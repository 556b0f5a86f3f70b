import MatchHostCore
import NIOCore

/// The ``TurnJournal`` of the native port's turn-based games: each accepted move is committed
/// to the ``GameStore`` (``GameStore/appendMove(matchID:moveNumber:move:state:at:)``, one
/// transaction with the state after it) before the game acknowledges it to anyone.
///
/// The write goes through the match's queue in ``WorldStore``, so it lands after the game's
/// creation and any earlier move; when nothing of the match is still being written (the usual
/// case) it goes straight from the loop to the store, without a task. Its completion comes back
/// on the world's loop, which is the match's.
final class StoreTurnJournal: TurnJournal {
    private let storage: WorldStore

    init(storage: WorldStore) {
        self.storage = storage
    }

    func commit(
        matchID: MatchID, moveNumber: Int, move: ByteBuffer, state: ByteBuffer, completion: @escaping ((any Error)?) -> Void
    ) {
        let move = Array(move.readableBytesView)
        let state = Array(state.readableBytesView)
        let at = self.storage.now()
        self.storage.write(
            for: matchID,
            reporting: { store, done in
                store.appendMove(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at, completion: done)
            }
        ) { result in completion(result.failure) }
    }

    func commitEnding(matchID: MatchID, state: ByteBuffer, completion: @escaping ((any Error)?) -> Void) {
        let state = Array(state.readableBytesView)
        // In the match's queue: after the moves still being written (a game ends once per match).
        self.storage.write(for: matchID, { store in try await store.replaceTurnState(matchID: matchID, state: state) }) { result in
            completion(result.failure)
        }
    }
}

extension Result {
    /// The error, if this is a failure: a journal's completion takes no more.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
