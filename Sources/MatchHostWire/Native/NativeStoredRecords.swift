import NIOCore

/// One player's numbers in one game, as PROFILE carries them.
public struct NativeGameStats: Hashable, Sendable {
    /// The game ("fourinarow", "disks", "catrace").
    public var game: String
    /// Finished matches played.
    public var played: UInt32
    /// Matches won.
    public var won: UInt32
    /// Matches lost.
    public var lost: UInt32
    /// Matches drawn.
    public var drawn: UInt32
    /// The Elo rating (1500 before the first match).
    public var rating: Double

    /// Creates the numbers.
    public init(game: String, played: UInt32, won: UInt32, lost: UInt32, drawn: UInt32, rating: Double) {
        self.game = game
        self.played = played
        self.won = won
        self.lost = lost
        self.drawn = drawn
        self.rating = rating
    }

    init(from body: inout ByteBuffer) throws {
        self.game = try body.readNativeString(field: "game", maximumLength: NativeLimits.mode)
        self.played = try body.readWireInt(field: "played")
        self.won = try body.readWireInt(field: "won")
        self.lost = try body.readWireInt(field: "lost")
        self.drawn = try body.readWireInt(field: "drawn")
        self.rating = try body.readNativeDouble(field: "rating")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.game)
        buffer.writeWireInt(self.played)
        buffer.writeWireInt(self.won)
        buffer.writeWireInt(self.lost)
        buffer.writeWireInt(self.drawn)
        buffer.writeNativeDouble(self.rating)
    }
}

/// A player's profile: who it is, since when, and its stats in each game it has finished a match of.
public struct NativeProfile: Hashable, Sendable {
    /// The player.
    public var playerID: String
    /// The name others see.
    public var alias: String
    /// When the account was created, in milliseconds since 1970.
    public var createdAt: UInt64
    /// When the player last authenticated, in milliseconds since 1970.
    public var lastSeenAt: UInt64
    /// One entry per game with a finished match, sorted by game.
    public var stats: [NativeGameStats]

    /// Creates a profile.
    public init(playerID: String, alias: String, createdAt: UInt64, lastSeenAt: UInt64, stats: [NativeGameStats]) {
        self.playerID = playerID
        self.alias = alias
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.stats = stats
    }

    init(from body: inout ByteBuffer) throws {
        self.playerID = try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)
        self.alias = try body.readNativeString(field: "alias", maximumLength: NativeLimits.identifier)
        self.createdAt = try body.readNativeUInt64(field: "created at")
        self.lastSeenAt = try body.readNativeUInt64(field: "last seen at")
        let count = Int(try body.readWireByte(field: "stats count"))
        var stats: [NativeGameStats] = []
        stats.reserveCapacity(count)
        for _ in 0..<count { stats.append(try NativeGameStats(from: &body)) }
        self.stats = stats
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.playerID)
        buffer.writeNativeString(self.alias)
        buffer.writeNativeUInt64(self.createdAt)
        buffer.writeNativeUInt64(self.lastSeenAt)
        buffer.writeWireByte(UInt8(self.stats.count))
        for stats in self.stats { stats.encode(into: &buffer) }
    }
}

/// Where a stored match stands, in MATCH_HISTORY.
public enum NativeStoredMatchState: UInt8, Hashable, Sendable {
    /// Still being played.
    case running = 1
    /// Ended with a result.
    case finished = 2
    /// Ended without one (everyone left, the server restarted...).
    case abandoned = 3
}

/// How the asked-about player came out of a match, in MATCH_HISTORY.
public enum NativeOutcome: UInt8, Hashable, Sendable {
    /// No result (running or abandoned).
    case none = 0
    /// Won.
    case won = 1
    /// Lost.
    case lost = 2
    /// Drew.
    case draw = 3
}

/// One match of a player's history.
public struct NativeMatchSummary: Hashable, Sendable {
    /// The match.
    public var matchID: MatchIdentifier
    /// The game played.
    public var game: String
    /// When it started, in milliseconds since 1970.
    public var startedAt: UInt64
    /// When it ended, in milliseconds since 1970; 0 while it runs.
    public var endedAt: UInt64
    /// Running, finished or abandoned.
    public var state: NativeStoredMatchState
    /// The player's outcome, when finished.
    public var outcome: NativeOutcome
    /// Why it was abandoned; empty otherwise.
    public var reason: String
    /// Its players, in seat order.
    public var players: [String]

    /// Creates a summary.
    public init(
        matchID: MatchIdentifier, game: String, startedAt: UInt64, endedAt: UInt64, state: NativeStoredMatchState,
        outcome: NativeOutcome, reason: String, players: [String]
    ) {
        self.matchID = matchID
        self.game = game
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.state = state
        self.outcome = outcome
        self.reason = reason
        self.players = players
    }

    init(from body: inout ByteBuffer) throws {
        self.matchID = try body.readNativeUInt64(field: "match id")
        self.game = try body.readNativeString(field: "game", maximumLength: NativeLimits.mode)
        self.startedAt = try body.readNativeUInt64(field: "started at")
        self.endedAt = try body.readNativeUInt64(field: "ended at")
        let rawState = try body.readWireByte(field: "match state")
        guard let state = NativeStoredMatchState(rawValue: rawState) else {
            throw NativeWireError.invalidValue(field: "match state", value: UInt64(rawState))
        }
        self.state = state
        let rawOutcome = try body.readWireByte(field: "outcome")
        guard let outcome = NativeOutcome(rawValue: rawOutcome) else {
            throw NativeWireError.invalidValue(field: "outcome", value: UInt64(rawOutcome))
        }
        self.outcome = outcome
        self.reason = try body.readNativeString(field: "reason", maximumLength: NativeLimits.message)
        let count = Int(try body.readWireByte(field: "player count"))
        var players: [String] = []
        players.reserveCapacity(count)
        for _ in 0..<count { players.append(try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)) }
        self.players = players
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt64(self.matchID)
        buffer.writeNativeString(self.game)
        buffer.writeNativeUInt64(self.startedAt)
        buffer.writeNativeUInt64(self.endedAt)
        buffer.writeWireByte(self.state.rawValue)
        buffer.writeWireByte(self.outcome.rawValue)
        buffer.writeNativeString(self.reason)
        buffer.writeWireByte(UInt8(self.players.count))
        for player in self.players { buffer.writeNativeString(player) }
    }
}

/// One line of a game's leaderboard: ordered by rating, then wins, then player id.
public struct NativeLeaderboardEntry: Hashable, Sendable {
    /// The position, from 1.
    public var rank: UInt32
    /// The player.
    public var playerID: String
    /// The player's alias; empty when the id has no account (a Cat Race port player).
    public var alias: String
    /// The rating in the game.
    public var rating: Double
    /// Matches won in the game.
    public var won: UInt32
    /// Finished matches played in the game.
    public var played: UInt32

    /// Creates an entry.
    public init(rank: UInt32, playerID: String, alias: String, rating: Double, won: UInt32, played: UInt32) {
        self.rank = rank
        self.playerID = playerID
        self.alias = alias
        self.rating = rating
        self.won = won
        self.played = played
    }

    init(from body: inout ByteBuffer) throws {
        self.rank = try body.readWireInt(field: "rank")
        self.playerID = try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)
        self.alias = try body.readNativeString(field: "alias", maximumLength: NativeLimits.identifier)
        self.rating = try body.readNativeDouble(field: "rating")
        self.won = try body.readWireInt(field: "won")
        self.played = try body.readWireInt(field: "played")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireInt(self.rank)
        buffer.writeNativeString(self.playerID)
        buffer.writeNativeString(self.alias)
        buffer.writeNativeDouble(self.rating)
        buffer.writeWireInt(self.won)
        buffer.writeWireInt(self.played)
    }
}

/// One of a player's devices, as LIST_DEVICES answers.
public struct NativeDevice: Hashable, Sendable {
    /// The id the device signs in with.
    public var deviceID: String
    /// When it became the player's (Unix milliseconds): the player's creation for its first
    /// device, the link for the others.
    public var linkedAt: UInt64

    /// Creates an entry.
    public init(deviceID: String, linkedAt: UInt64) {
        self.deviceID = deviceID
        self.linkedAt = linkedAt
    }

    init(from body: inout ByteBuffer) throws {
        self.deviceID = try body.readNativeString(field: "device id", maximumLength: 255)
        self.linkedAt = try body.readNativeUInt64(field: "linked at")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.deviceID)
        buffer.writeNativeUInt64(self.linkedAt)
    }
}

/// A player's alias, as GET_ALIASES answers.
public struct NativePlayerAlias: Hashable, Sendable {
    /// The most player ids one GET_ALIASES may name; more gets `BAD_ARGUMENT`.
    public static let maximumPerRequest = 100

    /// The player's id.
    public var playerID: String
    /// Its alias.
    public var alias: String

    /// Creates an entry.
    public init(playerID: String, alias: String) {
        self.playerID = playerID
        self.alias = alias
    }

    init(from body: inout ByteBuffer) throws {
        self.playerID = try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)
        self.alias = try body.readNativeString(field: "alias", maximumLength: NativeLimits.identifier)
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.playerID)
        buffer.writeNativeString(self.alias)
    }
}
