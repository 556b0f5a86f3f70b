import MatchHostCore

/// How the server keeps a native match in its ``GameStore``.
enum MatchStorageKind {
    /// Not stored: a relay has no result the server understands.
    case notStored
    /// Recorded when its first player takes a seat, each later player added as it joins, and
    /// its result (or "abandoned") when it ends; after a crash it is recorded as abandoned.
    case realTime
    /// Recorded with its state once play starts, each move committed before it is
    /// acknowledged (``StoreTurnJournal``); after a restart it continues.
    case turnBased
}

/// How a stored match ended, as storage keeps it.
enum StoredEnding: Equatable {
    /// With a result: one line per player, stats and ratings follow.
    case finished(MatchResultRecord)
    /// Without one, for this reason; stats do not change.
    case abandoned(reason: String)
}

/// The lines of a result, one for each of `players` (the match's players as recorded, in seat
/// order): a recorded player the game's result leaves out lost, and players the result names
/// who were never recorded (tutorial clients seated in a native Cat Race) are left out.
func resultLines(_ result: MatchResultRecord, for players: [PlayerID]) -> MatchResultRecord {
    MatchResultRecord(
        players: players.map { player in
            result.players.first { $0.playerID == player } ?? PlayerResultRecord(playerID: player, outcome: .lost)
        })
}
