import Foundation
import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/createTurnGame(matchID:game:mode:players:startedAt:state:isPrivate:)``.
    public func createTurnGame(
        matchID: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, state: [UInt8], isPrivate: Bool
    ) async throws {
        try await self.write { db in
            try Self.insertMatch(
                db, id: matchID, game: game, mode: mode, kind: .turnBased, players: players, startedAt: startedAt, isPrivate: isPrivate)
            try db.execute(
                sql: "INSERT INTO turn_game (match_id, state, move_count, last_move_at) VALUES (?, ?, 0, ?)",
                arguments: [Int64(matchID), Data(state), startedAt.milliseconds])
        }
    }

    /// See ``GameStore/appendMove(matchID:moveNumber:move:state:at:)``.
    ///
    /// Moves (and other writes) of any games that arrive while another transaction is being
    /// committed are made together in the next one (``SQLiteGroupCommit``); each call still
    /// returns only once its move is committed, and a move refused here fails alone.
    public func appendMove(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) async throws {
        try await self.writes.append(Self.moveWrite(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at))
    }

    /// See ``GameStore/appendMove(matchID:moveNumber:move:state:at:completion:)``: straight to
    /// the writer thread, no task; `completion` runs there.
    public func appendMove(
        matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        self.writes.append(Self.moveWrite(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at), completion: completion)
    }

    /// A move as a grouped write. No savepoint: the checks come before the move's writes.
    private static func moveWrite(matchID: MatchID, moveNumber: Int, move: [UInt8], state: [UInt8], at: UnixMillis) -> SQLiteGroupedWrite {
        let append = SQLiteMoveAppend(matchID: matchID, moveNumber: moveNumber, move: move, state: state, at: at)
        return SQLiteGroupedWrite(undo: .checksFirst) { db in try Self.insertMove(db, append) }
    }

    /// Accepts one move and the state after it. The checks come first and throw before
    /// anything is written (the primary key on (match, move number) would refuse a second
    /// row for a number anyway, failing the transaction). Cached statements, and one query
    /// for the checks: this runs for every move of every game, inside the writer's turn.
    private static func insertMove(_ db: Database, _ move: SQLiteMoveAppend) throws {
        guard let id = Int64(exactly: move.matchID),
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT m.kind, m.state, t.move_count FROM game_match m LEFT JOIN turn_game t ON t.match_id = m.id
                        WHERE m.id = ?
                        """),
                arguments: [id])
        else { throw GameStoreError.unknownMatch(move.matchID) }
        let kind: String = row[0]
        guard kind == MatchKind.turnBased.rawValue, let moveCount: Int = row[2] else { throw GameStoreError.notTurnBased(move.matchID) }
        let state: String = row[1]
        guard state == "running" else { throw GameStoreError.matchNotRunning(move.matchID) }
        let expected = moveCount + 1
        guard move.moveNumber >= expected else { throw GameStoreError.duplicateMove(move.matchID, moveNumber: move.moveNumber) }
        guard move.moveNumber == expected else {
            throw GameStoreError.moveOutOfOrder(move.matchID, expected: expected, got: move.moveNumber)
        }
        try db.cachedStatement(sql: "INSERT INTO turn_move (match_id, move_number, move, played_at) VALUES (?, ?, ?, ?)")
            .execute(arguments: [id, move.moveNumber, Data(move.move), move.at.milliseconds])
        try db.cachedStatement(sql: "UPDATE turn_game SET state = ?, move_count = ?, last_move_at = ? WHERE match_id = ?")
            .execute(arguments: [Data(move.state), move.moveNumber, move.at.milliseconds, id])
    }

    /// See ``GameStore/replaceTurnState(matchID:state:)``.
    public func replaceTurnState(matchID: MatchID, state: [UInt8]) async throws {
        try await self.write { db in
            guard try Self.turnGame(db, matchID).match.state == .running else { throw GameStoreError.matchNotRunning(matchID) }
            try db.execute(sql: "UPDATE turn_game SET state = ? WHERE match_id = ?", arguments: [Data(state), Int64(matchID)])
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

/// One move for ``SQLiteGameStore/appendMove(matchID:moveNumber:move:state:at:)``.
struct SQLiteMoveAppend: Sendable, Hashable {
    var matchID: MatchID
    var moveNumber: Int
    var move: [UInt8]
    var state: [UInt8]
    var at: UnixMillis
}
