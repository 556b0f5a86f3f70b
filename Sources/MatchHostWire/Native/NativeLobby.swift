import NIOCore

/// One open match as a lobby lists it.
public struct NativeLobbyEntry: Hashable, Sendable {
    /// The match's id (JOIN_MATCH takes it).
    public var matchID: MatchIdentifier
    /// The label its creator or its game set.
    public var label: String
    /// Players seated and not gone.
    public var players: UInt8
    /// The most players it holds.
    public var capacity: UInt8
    /// Whether JOIN_MATCH would seat a player now (room left, and the game takes joiners).
    public var joinable: Bool

    /// Creates an entry.
    public init(matchID: MatchIdentifier, label: String, players: UInt8, capacity: UInt8, joinable: Bool) {
        self.matchID = matchID
        self.label = label
        self.players = players
        self.capacity = capacity
        self.joinable = joinable
    }

    init(from body: inout ByteBuffer) throws {
        self.matchID = try body.readNativeUInt64(field: "match id")
        self.label = try body.readNativeString(field: "label", maximumLength: NativeLimits.identifier)
        self.players = try body.readWireByte(field: "players")
        self.capacity = try body.readWireByte(field: "capacity")
        self.joinable = try body.readWireByte(field: "joinable") != 0
    }

    /// Its bytes on the wire (at most: a control character in the label is written as a
    /// space, which may be shorter).
    public var encodedSize: Int { 8 + 2 + self.label.utf8.count + 3 }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt64(self.matchID)
        buffer.writeNativeString(self.label)
        buffer.writeWireByte(self.players)
        buffer.writeWireByte(self.capacity)
        buffer.writeWireByte(self.joinable ? 1 : 0)
    }
}

/// Which page of a lobby LIST_MATCHES asks for.
public struct NativeLobbyQuery: Hashable, Sendable {
    /// The game mode whose matches to list.
    public var mode: String
    /// Only matches a player could join now.
    public var joinableOnly: Bool
    /// Only matches whose label contains this text (ignoring case); empty for all.
    public var labelContains: String
    /// The cursor: list matches with ids after this one (0 for the first page).
    public var after: MatchIdentifier
    /// The most entries to return (0 takes the server's default page, 20; at most 100).
    public var limit: UInt8

    /// Creates a query.
    public init(mode: String, joinableOnly: Bool = false, labelContains: String = "", after: MatchIdentifier = 0, limit: UInt8 = 0) {
        self.mode = mode
        self.joinableOnly = joinableOnly
        self.labelContains = labelContains
        self.after = after
        self.limit = limit
    }

    init(from body: inout ByteBuffer) throws {
        self.mode = try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode)
        self.joinableOnly = try body.readWireByte(field: "flags") & 1 != 0
        self.labelContains = try body.readNativeString(field: "label filter", maximumLength: NativeLimits.identifier)
        self.after = try body.readNativeUInt64(field: "after")
        self.limit = try body.readWireByte(field: "limit")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.mode)
        buffer.writeWireByte(self.joinableOnly ? 1 : 0)
        buffer.writeNativeString(self.labelContains)
        buffer.writeNativeUInt64(self.after)
        buffer.writeWireByte(self.limit)
    }
}

/// One change to a lobby, in a `LOBBY_UPDATE`.
public struct NativeLobbyChange: Hashable, Sendable {
    /// What happened to the entry.
    public enum Kind: UInt8, Hashable, Sendable {
        /// A match opened (or was already open when the subscription started).
        case added = 1
        /// Its players, label or joinability changed.
        case changed = 2
        /// It ended, or is no longer listed.
        case removed = 3
    }

    /// What happened.
    public var kind: Kind
    /// The entry as it is now (as it last was, for `removed`).
    public var entry: NativeLobbyEntry

    /// Creates a change.
    public init(_ kind: Kind, _ entry: NativeLobbyEntry) {
        self.kind = kind
        self.entry = entry
    }

    /// The bytes of a LOBBY_UPDATE of `mode` around its changes: the type byte, the mode and
    /// the count.
    public static func updateHeaderSize(mode: String) -> Int { 1 + 2 + mode.utf8.count + 2 }

    /// Its bytes in a LOBBY_UPDATE: the kind, then the entry.
    public var encodedSize: Int { 1 + self.entry.encodedSize }

    init(from body: inout ByteBuffer) throws {
        let raw = try body.readWireByte(field: "lobby change")
        guard let kind = Kind(rawValue: raw) else {
            throw NativeWireError.invalidValue(field: "lobby change", value: UInt64(raw))
        }
        self.kind = kind
        self.entry = try NativeLobbyEntry(from: &body)
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.kind.rawValue)
        self.entry.encode(into: &buffer)
    }
}
