import MatchHostCore
import MatchHostWire
import NIOCore

/// Options of a Four in a Row match.
///
/// Not `Sendable`: a journal is confined to the match's event loop like the match itself.
/// Build the options where the match is created.
public struct FourInARowOptions {
    /// How long a player has for each turn (default 30 s); at most 2³² − 1 ms, as on the wire.
    public var turnTimeLimit: TimeAmount
    /// Where each accepted move is committed before anyone hears of it; nil applies moves at once.
    public var journal: (any TurnJournal)?
    /// A saved game to go on with (after a server restart). Its players must be seated again
    /// in the same order (seat 0 first); play resumes once both seats exist, with a full turn
    /// for the player to move. ``firstSeat`` is then ignored: the state has its own.
    public var restoredState: FourInARowState?
    /// The seat that makes the first move, 0 (default) or 1.
    public var firstSeat: Int

    /// Creates options.
    public init(
        turnTimeLimit: TimeAmount = .seconds(30), journal: (any TurnJournal)? = nil, restoredState: FourInARowState? = nil,
        firstSeat: Int = 0
    ) {
        precondition(
            turnTimeLimit > .zero && turnTimeLimit.nanoseconds / 1_000_000 < Int64(FourInARowSnapshot.turnWaitsForArrival),
            "a turn lasts more than 0 and less than 2^32 - 1 ms (which means a turn not started)")
        precondition(firstSeat == 0 || firstSeat == 1, "seat 0 or 1 moves first")
        self.turnTimeLimit = turnTimeLimit
        self.journal = journal
        self.restoredState = restoredState
        self.firstSeat = firstSeat
    }
}
