import MatchHostCore

/// How the server keeps a native match in its ``GameStore``.
enum MatchStorageKind {
    /// Not stored: a relay has no result the server understands.
    case notStored
    /// Recorded when its first player takes a seat, each later player added as it joins, and
    /// its result (or "abandoned") when it ends; after a crash it is recorded as abandoned
    /// (a Cat Race match with a race won: finished with its races won so far).
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

    /// The same ending with each seat's player id replaced by its stored id where `storedIDs`
    /// has one (tutorial clients race under the id they sent, but are stored under their own).
    func renamingPlayers(_ storedIDs: [PlayerID: PlayerID]) -> StoredEnding {
        guard case .finished(let result) = self else { return self }
        return .finished(result.renamingPlayers(storedIDs))
    }
}

extension MatchResultRecord {
    /// The result with each player in `storedIDs` under its stored id (see
    /// ``StoredEnding/renamingPlayers(_:)``).
    func renamingPlayers(_ storedIDs: [PlayerID: PlayerID]) -> MatchResultRecord {
        var result = self
        for index in result.players.indices {
            if let stored = storedIDs[result.players[index].playerID] { result.players[index].playerID = stored }
        }
        return result
    }
}

/// The lines of a result, one for each of `players` (the match's players as recorded, in seat
/// order): a recorded player the game's result leaves out lost, and players the result names
/// who were never recorded (a reserved seat nobody took, or a tutorial client when the Cat Race
/// port has no store) are left out.
func resultLines(_ result: MatchResultRecord, for players: [PlayerID]) -> MatchResultRecord {
    MatchResultRecord(
        players: players.map { player in
            result.players.first { $0.playerID == player } ?? PlayerResultRecord(playerID: player, outcome: .lost)
        })
}
