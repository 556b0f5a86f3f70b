import MatchHostCore
import MatchHostGames

/// How each built-in game's ending becomes a stored result.
enum StoredResults {
    /// Disks: the players with the best score won and the others lost; a game nobody scored
    /// in is a draw for everyone. Scores are kept; a player who left before the end has the
    /// summary "left".
    static func disks(_ outcome: MatchOutcome<DisksResult>, in match: Match<DisksGame>) -> StoredEnding {
        switch outcome {
        case .abandoned(let reason):
            return .abandoned(reason: reason)
        case .finished(let result):
            let nobodyWon = result.winners.isEmpty
            return .finished(
                MatchResultRecord(
                    players: result.players.map { player in
                        PlayerResultRecord(
                            playerID: player.playerID, outcome: nobodyWon ? .draw : (player.won ? .won : .lost),
                            score: Int64(player.score), summary: player.left ? "left" : nil)
                    }))
        }
    }

    /// Four in a Row: the winner won and the other lost, or both drew; the summary says why
    /// it ended ("four in a row", "turn timeout", ...).
    static func fourInARow(_ outcome: MatchOutcome<FourInARowResult>, in match: Match<FourInARowGame>) -> StoredEnding {
        switch outcome {
        case .abandoned(let reason):
            return .abandoned(reason: reason)
        case .finished(let result):
            let summary = "\(result.reason) after \(result.movesPlayed)"
            return .finished(
                MatchResultRecord(
                    players: match.handler.state.players.map { player in
                        let outcome: PlayerOutcome = result.winner == nil ? .draw : (player == result.winner ? .won : .lost)
                        return PlayerResultRecord(playerID: player, outcome: outcome, summary: summary)
                    }))
        }
    }
}

/// The races won in one Cat Race match, by player. A Cat Race match runs one race after
/// another (RESTART_MATCH) and always ends without a result of its own; what is stored is the
/// tally: the players who won the most races won, the others lost, each with its count as
/// score. A match in which no race was won is stored as abandoned.
final class CatRaceTally {
    private var wins: [PlayerID: Int] = [:]

    /// Counts a race won by `player`.
    func raceWon(by player: PlayerID) {
        self.wins[player, default: 0] += 1
    }

    /// The stored form of the match's end.
    func ending(_ outcome: MatchOutcome<Int>, in match: Match<CatRaceGame>) -> StoredEnding {
        if let standing = self.standing(in: match) { return .finished(standing) }
        if case .abandoned(let reason) = outcome { return .abandoned(reason: reason) }
        return .abandoned(reason: "no race was won")
    }

    /// The result the match has so far (its interim result while it runs); nil before a race is won.
    func standing(in match: Match<CatRaceGame>) -> MatchResultRecord? {
        guard let best = self.wins.values.max() else { return nil }
        return MatchResultRecord(
            players: match.seats.map { seat in
                let wins = self.wins[seat.player] ?? 0
                return PlayerResultRecord(
                    playerID: seat.player, outcome: wins == best ? .won : .lost, score: Int64(wins),
                    summary: wins == 1 ? "won 1 race" : "won \(wins) races")
            })
    }
}
