import NIOCore

/// A match's id on the wire (8 bytes).
public typealias MatchIdentifier = UInt64

/// Whether a player of a match is here, on the wire.
public enum NativePresence: UInt8, Hashable, Sendable {
    /// Connected.
    case connected = 1
    /// Connection lost; the seat is kept for the grace period.
    case away = 2
    /// Seat held for a player who has not arrived.
    case reserved = 3
}

/// A match as a `RESPONSE` (or `MATCHMAKER_MATCHED`) describes it to a player who just entered it.
public struct NativeMatchInfo: Hashable, Sendable {
    /// The match's id.
    public var matchID: MatchIdentifier
    /// The game mode.
    public var mode: String
    /// A label set by its creator or its game.
    public var label: String
    /// The most players it holds.
    public var capacity: UInt8
    /// Its players (those who have not left), in seat order.
    public var players: [Player]
    /// The code others join a private match with; empty for a public match.
    public var inviteCode: String

    /// One player of the match.
    public struct Player: Hashable, Sendable {
        /// The player's id.
        public var playerID: String
        /// Whether the player is here.
        public var presence: NativePresence

        /// Creates an entry.
        public init(playerID: String, presence: NativePresence) {
            self.playerID = playerID
            self.presence = presence
        }
    }

    /// Creates the description.
    public init(
        matchID: MatchIdentifier, mode: String, label: String, capacity: UInt8, players: [Player], inviteCode: String = ""
    ) {
        self.matchID = matchID
        self.mode = mode
        self.label = label
        self.capacity = capacity
        self.players = players
        self.inviteCode = inviteCode
    }

    /// Reads the fields.
    init(from body: inout ByteBuffer) throws {
        let matchID = try body.readNativeUInt64(field: "match id")
        let mode = try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode)
        let label = try body.readNativeString(field: "label", maximumLength: NativeLimits.identifier)
        let capacity = try body.readWireByte(field: "capacity")
        let count = Int(try body.readWireByte(field: "player count"))
        var players: [Player] = []
        players.reserveCapacity(count)
        for _ in 0..<count {
            let player = try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)
            let raw = try body.readWireByte(field: "presence")
            guard let presence = NativePresence(rawValue: raw) else {
                throw NativeWireError.invalidValue(field: "presence", value: UInt64(raw))
            }
            players.append(.init(playerID: player, presence: presence))
        }
        let code = try body.readNativeString(field: "invite code", maximumLength: NativeLimits.identifier)
        self.init(matchID: matchID, mode: mode, label: label, capacity: capacity, players: players, inviteCode: code)
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt64(self.matchID)
        buffer.writeNativeString(self.mode)
        buffer.writeNativeString(self.label)
        buffer.writeWireByte(self.capacity)
        buffer.writeWireByte(UInt8(self.players.count))
        for player in self.players {
            buffer.writeNativeString(player.playerID)
            buffer.writeWireByte(player.presence.rawValue)
        }
        buffer.writeNativeString(self.inviteCode)
    }
}

/// Longest strings the native protocol accepts, by kind of field (bytes of UTF-8).
public enum NativeLimits {
    /// Game modes and lobby property keys.
    public static let mode = 64
    /// Player ids, labels, ticket ids, party ids, invite codes, property values.
    public static let identifier = 255
    /// Error messages and end reasons.
    public static let message = 4096
}
