import Foundation
import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/createTurnGame(matchID:game:mode:players:startedAt:state:)``.
    public func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8]
    ) async throws {
        try await self.write { db in
            try Self.insertMatch(db, id: matchID, game: game, mode: mode, kind: .turnBased, players: players, startedAt: startedAt)
            try db.execute(
                sql: "INSERT INTO turn_game (match_id, state, move_count, last_move_at) VALUES (?, ?, 0, ?)",
                arguments: [Int64(matchID), Data(state), startedAt.milliseconds])
        }
    }

    /// See ``GameStore/appendMove(matchID:moveNumber:move:state:at:)``.
    ///
    /// The checks come first and throw before anything is written; the primary key on
    /// (match, move number) would refuse a second row for a number anyway, rolling the
    /// whole transaction back.
    public func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) async throws {
        try await self.write { db in
            let (match, moveCount) = try Self.turnGame(db, matchID)
            guard match.state == .running else { throw GameStoreError.matchNotRunning(matchID) }
            let expected = moveCount + 1
            guard moveNumber >= expected else { throw GameStoreError.duplicateMove(matchID, moveNumber: moveNumber) }
            guard moveNumber == expected else {
                throw GameStoreError.moveOutOfOrder(matchID, expected: expected, got: moveNumber)
            }
            try db.execute(
                sql: "INSERT INTO turn_move (match_id, move_number, move, played_at) VALUES (?, ?, ?, ?)",
                arguments: [Int64(matchID), moveNumber, Data(move), at.milliseconds])
            try db.execute(
                sql: "UPDATE turn_game SET state = ?, move_count = ?, last_move_at = ? WHERE match_id = ?",
                arguments: [Data(state), moveNumber, at.milliseconds, Int64(matchID)])
        }
    }

    /// See ``GameStore/activeTurnGames()``.
    public func activeTurnGames() async throws -> [TurnGameRecord] {
        try await self.read { db in
            let matches = try Self.fetchMatches(
                db, sql: "SELECT * FROM game_match WHERE state = 'running' AND kind = 'turn_based' ORDER BY started_at, id")
            return try matches.compactMap { match in
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT state, move_count, last_move_at FROM turn_game WHERE match_id = ?",
                        arguments: [Int64(match.id)])
                else { return nil }
                return TurnGameRecord(
                    matchID: match.id, game: match.game, mode: match.mode, players: match.players, startedAt: match.startedAt,
                    state: [UInt8](row["state"] as Data), moveCount: row["move_count"],
                    lastMoveAt: UnixMillis(milliseconds: row["last_move_at"]))
            }
        }
    }

    /// See ``GameStore/moveLog(matchID:)``.
    public func moveLog(matchID: MatchID) async throws -> [TurnMoveRecord] {
        try await self.read { db in
            _ = try Self.turnGame(db, matchID)
            return try Row.fetchAll(
                db, sql: "SELECT move_number, move, played_at FROM turn_move WHERE match_id = ? ORDER BY move_number",
                arguments: [Int64(matchID)]
            ).map { row in
                TurnMoveRecord(
                    moveNumber: row["move_number"], move: [UInt8](row["move"] as Data), playedAt: UnixMillis(milliseconds: row["played_at"]))
            }
        }
    }

    /// A turn-based match and its number of moves; throws if the match is unknown or real-time.
    private static func turnGame(_ db: Database, _ id: MatchID) throws -> (match: MatchRecord, moveCount: Int) {
        guard let match = try Self.storedMatch(db, id) else { throw GameStoreError.unknownMatch(id) }
        guard match.kind == .turnBased,
            let count = try Int.fetchOne(db, sql: "SELECT move_count FROM turn_game WHERE match_id = ?", arguments: [Int64(id)])
        else { throw GameStoreError.notTurnBased(id) }
        return (match, count)
    }
}
