/// Whether a match runs in real time or turn by turn; it decides what a restart does to it.
public enum MatchKind: String, Sendable, Hashable, CaseIterable {
    /// Runs only while the server does: after a crash it is recorded as abandoned, or finished
    /// with its interim result if it kept one (``GameStore/recordInterimResult(matchID:result:)``).
    case realTime = "real_time"
    /// Its state and move log are stored (``GameStore/createTurnGame(matchID:game:mode:players:startedAt:state:isPrivate:)``),
    /// so it continues after a restart.
    case turnBased = "turn_based"
}

/// Where a stored match stands.
public enum MatchState: Sendable, Hashable {
    /// Started and not yet ended.
    case running
    /// Ended with a result.
    case finished(MatchResultRecord)
    /// Ended without a result, for the reason given.
    case abandoned(reason: String)
}

/// Who reads a player's match history, which decides what it shows.
public enum MatchHistoryReader: Sendable, Hashable {
    /// The player itself, or the server's operator: every match, running ones too.
    case owner
    /// Another player: ended matches only, and of the private ones only those it played in.
    case otherPlayer(PlayerID)
}

/// A stored match.
public struct MatchRecord: Sendable, Hashable {
    /// The match's id; ids are never reused, across restarts too (``GameStore/largestMatchID()``).
    public var id: MatchID
    /// The game played ("catrace", "fourinarow", ...).
    public var game: String
    /// The game's mode or variant ("ranked", "casual", ...); empty when the game has one.
    public var mode: String
    /// Real-time or turn-based.
    public var kind: MatchKind
    /// The players in seat order.
    public var players: [PlayerID]
    /// When the match started.
    public var startedAt: UnixMillis
    /// When it ended; nil while it runs.
    public var endedAt: UnixMillis?
    /// Running, finished or abandoned.
    public var state: MatchState
    /// Whether it was private (joined by invite code): another player's history shows it only
    /// to those who played in it (``MatchHistoryReader``).
    public var isPrivate: Bool

    /// Creates a record.
    public init(
        id: MatchID, game: String, mode: String, kind: MatchKind, players: [PlayerID],
        startedAt: UnixMillis, endedAt: UnixMillis? = nil, state: MatchState = .running, isPrivate: Bool = false
    ) {
        self.id = id
        self.game = game
        self.mode = mode
        self.kind = kind
        self.players = players
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.state = state
        self.isPrivate = isPrivate
    }

    /// Whether `reader` may see this match in its players' history.
    public func isShown(to reader: MatchHistoryReader) -> Bool {
        switch reader {
        case .owner:
            return true
        case .otherPlayer(let viewer):
            // A running match says where its players are now; a private one, whom they play.
            if case .running = self.state { return false }
            return !self.isPrivate || self.players.contains(viewer)
        }
    }

    /// The largest id storage accepts: SQLite integers are signed 64-bit.
    public static let largestStorableID: MatchID = MatchID(Int64.max)

    /// Checks what every implementation requires of a new match: a storable id and at
    /// least one player, none twice.
    package static func checkNew(id: MatchID, players: [PlayerID]) throws {
        guard id > 0, id <= Self.largestStorableID else {
            throw GameStoreError.invalidMatch(id, reason: "match ids run from 1 to \(Self.largestStorableID)")
        }
        guard !players.isEmpty else {
            throw GameStoreError.invalidMatch(id, reason: "a match needs at least one player")
        }
        guard Set(players).count == players.count else {
            throw GameStoreError.invalidMatch(id, reason: "a player appears twice in the match")
        }
    }
}
