import NIOCore

/// Where a turn-based game makes each accepted move durable before anyone hears of it.
///
/// The rule it serves: a move is committed before it is acknowledged. A game that has a
/// journal holds an accepted move in a pending slot, calls ``commit(matchID:moveNumber:move:state:completion:)``,
/// and only when the completion reports success applies the move and tells the players. If
/// the server crashes in between, the move was never acknowledged, so nobody saw a move the
/// saved game lacks; the saved state is what play continues from after a restart.
///
/// Threading: `commit` is called on the match's event loop. The journal may do its work
/// anywhere (a database's own threads, say), but must call `completion` exactly once, **on
/// the match's event loop** (hop back with `eventLoop.execute` or a future's callback),
/// because the game's state is confined to that loop. Calling `completion` before `commit`
/// returns is allowed. A completion that comes after the match has ended is ignored.
public protocol TurnJournal: AnyObject {
    /// Makes an accepted move durable.
    /// - Parameters:
    ///   - matchID: the match the move belongs to.
    ///   - moveNumber: the move's number within its game (1 for the first move).
    ///   - move: the move as the game encodes it (for Four in a Row, its MOVE message body).
    ///   - state: the game's whole state after the move, as the game encodes it; what the
    ///     game is restored from after a restart. Storing the latest state is enough;
    ///     `move` is there for an audit log or a replay.
    ///   - completion: called once, on the match's event loop, with nil when the move is
    ///     stored, or the error that kept it from being stored (the move is then refused).
    func commit(
        matchID: MatchID, moveNumber: Int, move: ByteBuffer, state: ByteBuffer, completion: @escaping ((any Error)?) -> Void)

    /// Makes the end of a game off the board durable (a turn that ran out, a player who left),
    /// before anyone is told of it: `state` is the game's final state, stored as its state
    /// with no move, so that a server that crashes before the result is recorded restores the
    /// game as over, not in play. `completion` as for
    /// ``commit(matchID:moveNumber:move:state:completion:)``; the game ends either way (its
    /// players cannot be kept in a game they lost), so a failure only means the end is not
    /// stored.
    func commitEnding(matchID: MatchID, state: ByteBuffer, completion: @escaping ((any Error)?) -> Void)
}
