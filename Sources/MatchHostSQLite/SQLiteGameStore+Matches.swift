import GRDB
import MatchHostCore

extension SQLiteGameStore {
    /// See ``GameStore/recordMatchStarted(id:game:mode:players:startedAt:isPrivate:)``.
    public func recordMatchStarted(
        id: MatchID, game: String, mode: String, players: [PlayerID], startedAt: UnixMillis, isPrivate: Bool
    ) async throws {
        try await self.write { db in
            try Self.insertMatch(db, id: id, game: game, mode: mode, kind: .realTime, players: players, startedAt: startedAt, isPrivate: isPrivate)
        }
    }

    /// See ``GameStore/addMatchPlayer(matchID:playerID:)``.
    public func addMatchPlayer(matchID: MatchID, playerID: PlayerID) async throws {
        try await self.write { db in
            let match = try Self.runningMatch(db, matchID)
            guard !match.players.contains(playerID) else {
                throw GameStoreError.invalidMatch(matchID, reason: "player \(playerID) is in the match already")
            }
            try db.execute(
                sql: "INSERT INTO match_player (match_id, seat, player_id) VALUES (?, ?, ?)",
                arguments: [Int64(matchID), match.players.count, playerID])
        }
    }

    /// See ``GameStore/recordMatchFinished(matchID:endedAt:result:)``.
    @discardableResult
    public func recordMatchFinished(matchID: MatchID, endedAt: UnixMillis, result: MatchResultRecord) async throws -> [PlayerStats] {
        try await self.write { db in
            let match = try Self.runningMatch(db, matchID)
            return try Self.finish(db, match, lines: try result.lines(forMatch: matchID, players: match.players), endedAt: endedAt)
        }
    }

    /// Ends `match` with `lines` (one per player, in seat order), counting them in stats and ratings.
    private static func finish(_ db: Database, _ match: MatchRecord, lines: [PlayerResultRecord], endedAt: UnixMillis) throws -> [PlayerStats] {
        let before = try match.players.map { try Self.storedStats(db, game: match.game, playerID: $0) ?? .initial(game: match.game, playerID: $0) }
        let ratings = EloRating.updatedRatings(before.map(\.rating), outcomes: lines.map(\.outcome))
        let after = before.indices.map { before[$0].adding(lines[$0].outcome, rating: ratings[$0]) }
        for stats in after {
            try db.execute(
                sql: """
                    INSERT INTO player_stats (game, player_id, played, won, lost, drawn, rating) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (game, player_id) DO UPDATE SET
                        played = excluded.played, won = excluded.won, lost = excluded.lost,
                        drawn = excluded.drawn, rating = excluded.rating
                    """,
                arguments: [stats.game, stats.playerID, stats.played, stats.won, stats.lost, stats.drawn, stats.rating])
        }
        try Self.writeLines(db, lines, of: match.id)
        try db.execute(
            sql: "UPDATE game_match SET state = 'finished', ended_at = ? WHERE id = ?",
            arguments: [endedAt.milliseconds, Int64(match.id)])
        return after
    }

    /// Each seat's outcome, score and summary: a finished match's result, or a running one's
    /// interim result (the only running matches with outcomes).
    private static func writeLines(_ db: Database, _ lines: [PlayerResultRecord], of id: MatchID) throws {
        for (seat, line) in lines.enumerated() {
            try db.execute(
                sql: "UPDATE match_player SET outcome = ?, score = ?, summary = ? WHERE match_id = ? AND seat = ?",
                arguments: [line.outcome.rawValue, line.score, line.summary, Int64(id), seat])
        }
    }

    /// See ``GameStore/recordInterimResult(matchID:result:)``.
    public func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws {
        try await self.write { db in
            let match = try Self.runningMatch(db, matchID)
            guard match.kind == .realTime else {
                throw GameStoreError.invalidMatch(matchID, reason: "a turn-based match keeps no interim result")
            }
            try Self.writeLines(db, try result.lines(forMatch: matchID, players: match.players), of: matchID)
        }
    }

    /// See ``GameStore/recordMatchAbandoned(matchID:endedAt:reason:)``.
    public func recordMatchAbandoned(matchID: MatchID, endedAt: UnixMillis, reason: String) async throws {
        try await self.write { db in
            _ = try Self.runningMatch(db, matchID)
            try Self.abandon(db, matchID, at: endedAt, reason: reason)
        }
    }

    /// Marks the running match abandoned; an interim result it kept is dropped.
    private static func abandon(_ db: Database, _ id: MatchID, at: UnixMillis, reason: String) throws {
        try db.execute(
            sql: "UPDATE match_player SET outcome = NULL, score = NULL, summary = NULL WHERE match_id = ?", arguments: [Int64(id)])
        try db.execute(
            sql: "UPDATE game_match SET state = 'abandoned', ended_at = ?, abandon_reason = ? WHERE id = ?",
            arguments: [at.milliseconds, reason, Int64(id)])
    }

    /// See ``GameStore/endInterruptedMatches(at:reason:notice:)``.
    public func endInterruptedMatches(at: UnixMillis, reason: String, notice: String?) async throws -> [MatchRecord] {
        try await self.write { db in
            let running = try Self.fetchMatches(
                db, sql: "SELECT * FROM game_match WHERE state = 'running' AND kind = 'real_time' ORDER BY started_at, id")
            for match in running {
                let kept = try Row.fetchAll(
                    db, sql: "SELECT outcome, score, summary FROM match_player WHERE match_id = ? ORDER BY seat",
                    arguments: [Int64(match.id)])
                guard kept.contains(where: { ($0["outcome"] as String?) != nil }) else {
                    try Self.abandon(db, match.id, at: at, reason: reason)
                    continue
                }
                let lines = try zip(match.players, kept).map { player, row in
                    let outcomeName: String? = row["outcome"]
                    guard let outcomeName else { return PlayerResultRecord(playerID: player, outcome: .lost) }
                    guard let outcome = PlayerOutcome(rawValue: outcomeName) else {
                        throw GameStoreError.storageFailed(reason: "match \(match.id) has unknown outcome \(outcomeName)")
                    }
                    return PlayerResultRecord(playerID: player, outcome: outcome, score: row["score"], summary: row["summary"])
                }
                _ = try Self.finish(db, match, lines: lines, endedAt: at)
            }
            if let notice {
                let signingIn = Set(
                    try running.flatMap(\.players).filter { player in
                        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM device_identity WHERE player_id = ?)", arguments: [player]) ?? false
                    })
                try Self.insertEndNotices(
                    db,
                    running.flatMap { match in
                        match.players.filter(signingIn.contains).map { MatchEndNotice(playerID: $0, matchID: match.id, reason: notice, endedAt: at) }
                    })
            }
            return try running.compactMap { try Self.storedMatch(db, $0.id) }
        }
    }

    /// See ``GameStore/match(id:)``.
    public func match(id: MatchID) async throws -> MatchRecord? {
        guard let storedID = Int64(exactly: id) else { return nil }
        return try await self.read { db in
            try Self.fetchMatches(db, sql: "SELECT * FROM game_match WHERE id = ?", arguments: [storedID]).first
        }
    }

    /// See ``GameStore/matchHistory(playerID:limit:readBy:)``.
    public func matchHistory(playerID: PlayerID, limit: Int, readBy reader: MatchHistoryReader) async throws -> [MatchRecord] {
        try await self.read { db in
            switch reader {
            case .owner:
                return try Self.fetchMatches(
                    db,
                    sql: """
                        SELECT m.* FROM match_player p JOIN game_match m ON m.id = p.match_id
                        WHERE p.player_id = ?
                        ORDER BY m.started_at DESC, m.id DESC LIMIT ?
                        """,
                    arguments: [playerID, max(0, limit)])
            case .otherPlayer(let viewer):
                // The rule is MatchRecord.isShown(to:), in SQL so that LIMIT counts only what is shown.
                return try Self.fetchMatches(
                    db,
                    sql: """
                        SELECT m.* FROM match_player p JOIN game_match m ON m.id = p.match_id
                        WHERE p.player_id = ? AND m.state <> 'running'
                            AND (m.is_private = 0
                                OR EXISTS (SELECT 1 FROM match_player v WHERE v.match_id = m.id AND v.player_id = ?))
                        ORDER BY m.started_at DESC, m.id DESC LIMIT ?
                        """,
                    arguments: [playerID, viewer, max(0, limit)])
            }
        }
    }

    /// See ``GameStore/largestMatchID()``.
    public func largestMatchID() async throws -> MatchID {
        try await self.read { db in
            MatchID(
                try Int64.fetchOne(
                    db, sql: "SELECT MAX(COALESCE((SELECT MAX(id) FROM game_match), 0), COALESCE((SELECT reserved_through FROM match_id_reservation), 0))"
                ) ?? 0)
        }
    }

    /// See ``GameStore/reserveMatchIDs(through:)``.
    public func reserveMatchIDs(through: MatchID) async throws {
        guard let stored = Int64(exactly: through) else {
            throw GameStoreError.invalidMatch(through, reason: "match ids are stored as 63-bit numbers")
        }
        try await self.write { db in
            try db.execute(
                sql: """
                    INSERT INTO match_id_reservation (singleton, reserved_through) VALUES (1, ?)
                    ON CONFLICT (singleton) DO UPDATE SET reserved_through = MAX(reserved_through, excluded.reserved_through)
                    """,
                arguments: [stored])
        }
    }

    // MARK: Shared with turn-based games

    static func insertMatch(
        _ db: Database, id: MatchID, game: String, mode: String, kind: MatchKind, players: [PlayerID], startedAt: UnixMillis,
        isPrivate: Bool
    ) throws {
        try MatchRecord.checkNew(id: id, players: players)
        let storedID = Int64(id)
        let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM game_match WHERE id = ?)", arguments: [storedID]) ?? false
        guard !exists else { throw GameStoreError.matchExists(id) }
        try db.execute(
            sql: "INSERT INTO game_match (id, game, mode, kind, started_at, state, is_private) VALUES (?, ?, ?, ?, ?, 'running', ?)",
            arguments: [storedID, game, mode, kind.rawValue, startedAt.milliseconds, isPrivate])
        for (seat, player) in players.enumerated() {
            try db.execute(
                sql: "INSERT INTO match_player (match_id, seat, player_id) VALUES (?, ?, ?)", arguments: [storedID, seat, player])
        }
    }

    /// The match, which must exist and still be running.
    static func runningMatch(_ db: Database, _ id: MatchID) throws -> MatchRecord {
        guard let match = try Self.storedMatch(db, id) else { throw GameStoreError.unknownMatch(id) }
        guard match.state == .running else { throw GameStoreError.matchNotRunning(id) }
        return match
    }

    static func storedMatch(_ db: Database, _ id: MatchID) throws -> MatchRecord? {
        guard let storedID = Int64(exactly: id) else { return nil }
        return try Self.fetchMatches(db, sql: "SELECT * FROM game_match WHERE id = ?", arguments: [storedID]).first
    }

    /// Matches from `sql` (which selects `game_match` rows), each with its players and result.
    static func fetchMatches(_ db: Database, sql: String, arguments: StatementArguments = StatementArguments()) throws -> [MatchRecord] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            let id: Int64 = row["id"]
            let lines = try Row.fetchAll(
                db, sql: "SELECT player_id, outcome, score, summary FROM match_player WHERE match_id = ? ORDER BY seat",
                arguments: [id])
            let kindName: String = row["kind"]
            guard let kind = MatchKind(rawValue: kindName) else {
                throw GameStoreError.storageFailed(reason: "match \(id) has unknown kind \(kindName)")
            }
            let endedAt: Int64? = row["ended_at"]
            return MatchRecord(
                id: MatchID(id), game: row["game"], mode: row["mode"], kind: kind, players: lines.map { $0["player_id"] },
                startedAt: UnixMillis(milliseconds: row["started_at"]), endedAt: endedAt.map(UnixMillis.init(milliseconds:)),
                state: try Self.state(of: row, lines: lines), isPrivate: row["is_private"])
        }
    }

    private static func state(of row: Row, lines: [Row]) throws -> MatchState {
        let name: String = row["state"]
        switch name {
        case "running":
            return .running
        case "abandoned":
            return .abandoned(reason: row["abandon_reason"] ?? "")
        case "finished":
            return .finished(MatchResultRecord(players: try lines.map { line in
                let outcomeName: String? = line["outcome"]
                guard let outcome = outcomeName.flatMap(PlayerOutcome.init(rawValue:)) else {
                    throw GameStoreError.storageFailed(reason: "a finished match has a player without an outcome")
                }
                return PlayerResultRecord(playerID: line["player_id"], outcome: outcome, score: line["score"], summary: line["summary"])
            }))
        default:
            throw GameStoreError.storageFailed(reason: "a match has unknown state \(name)")
        }
    }
}
