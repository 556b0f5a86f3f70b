import NIOCore

/// The message type byte that starts a native message (inside a `RELIABLE` or `UNRELIABLE` frame).
/// Client messages are numbered from 0x20, server messages from 0x40.
public enum NativeMessageType: UInt8, Sendable, CaseIterable {
    /// C→S `REQUEST`: something the server answers with `RESPONSE` or `REQUEST_ERROR`.
    case request = 0x20
    /// C→S `SEND_DATA`: relay bytes to the other players of a match.
    case sendData = 0x21
    /// C→S `MATCH_INPUT`: an input for the game a match runs, in the game's own encoding.
    case matchInput = 0x22
    /// S→C `RESPONSE`: a request succeeded.
    case response = 0x40
    /// S→C `REQUEST_ERROR`: a request failed.
    case requestError = 0x41
    /// S→C `PRESENCE`: a player of a match joined, disconnected, reconnected or left.
    case presence = 0x42
    /// S→C `MATCH_DATA`: bytes another player sent.
    case matchData = 0x43
    /// S→C `MATCH_ENDED`: a match the player is in has ended.
    case matchEnded = 0x44
    /// S→C `MATCH_EVENT`: an event of the game a match runs, in the game's own encoding.
    case matchEvent = 0x45
}

/// Something a client asks of the server, answered by a ``NativeResponse`` or an error.
public enum NativeRequest: Hashable, Sendable {
    /// Creates a match of a game mode and seats the asking player in it.
    /// `maxPlayers` 0 takes the mode's default.
    case createMatch(mode: String, maxPlayers: UInt8, label: String)
    /// Seats the asking player in an existing match.
    case joinMatch(MatchIdentifier)
    /// Takes the asking player out of a match.
    case leaveMatch(MatchIdentifier)

    /// The request kind byte.
    public var kind: UInt8 {
        switch self {
        case .createMatch: return 1
        case .joinMatch: return 2
        case .leaveMatch: return 3
        }
    }
}

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

/// A match as a `RESPONSE` describes it to a player who just entered it.
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
    public init(matchID: MatchIdentifier, mode: String, label: String, capacity: UInt8, players: [Player]) {
        self.matchID = matchID
        self.mode = mode
        self.label = label
        self.capacity = capacity
        self.players = players
    }
}

/// What a successful request returns.
public enum NativeResponse: Hashable, Sendable {
    /// Kind 1: the player is in this match (after create or join).
    case matchJoined(NativeMatchInfo)
    /// Kind 2: the player has left this match.
    case matchLeft(MatchIdentifier)
}

/// How a player's presence in a match changed.
public enum NativePresenceChange: UInt8, Hashable, Sendable {
    /// Took a seat (or had one reserved).
    case joined = 1
    /// Lost its connection; its seat is kept for the grace period.
    case disconnected = 2
    /// Came back (or arrived at a reserved seat).
    case reconnected = 3
    /// Gone for good.
    case left = 4
}

/// Why a player left, in a `PRESENCE` left message.
public enum NativeLeaveReason: UInt8, Hashable, Sendable {
    /// Not a leave.
    case none = 0
    /// The player asked to leave.
    case asked = 1
    /// The player's grace period ran out.
    case graceExpired = 2
    /// The player's session ended (logged out, or its session grace ran out).
    case sessionEnded = 3
}

/// A message from a client, inside a `RELIABLE` or `UNRELIABLE` frame.
public enum NativeClientMessage: Hashable, Sendable {
    /// `REQUEST`: an id the response will carry, and the request.
    case request(id: UInt32, NativeRequest)
    /// `SEND_DATA`: bytes for chosen players of a match (all others when `targets` is empty).
    case sendData(matchID: MatchIdentifier, targets: [String], payload: ByteBuffer)
    /// `MATCH_INPUT`: an input for the match's game (for Cat Race, a Cat Race client message body).
    case matchInput(matchID: MatchIdentifier, input: ByteBuffer)

    /// Decodes a message (type byte first). A payload is a slice of `message`.
    public init(message: ByteBuffer) throws {
        var body = message
        let raw = try body.readWireByte(field: "message type")
        guard let type = NativeMessageType(rawValue: raw) else { throw WireError.unknownMessageType(raw) }
        switch type {
        case .request:
            let id = try body.readWireInt(field: "request id")
            let kind = try body.readWireByte(field: "request kind")
            switch kind {
            case 1:
                self = .request(
                    id: id,
                    .createMatch(
                        mode: try body.readNativeString(field: "mode", maximumLength: 64),
                        maxPlayers: try body.readWireByte(field: "max players"),
                        label: try body.readNativeString(field: "label", maximumLength: 255)))
            case 2:
                self = .request(id: id, .joinMatch(try body.readNativeUInt64(field: "match id")))
            case 3:
                self = .request(id: id, .leaveMatch(try body.readNativeUInt64(field: "match id")))
            default:
                throw NativeWireError.unknownRequestKind(kind)
            }
        case .sendData:
            let matchID = try body.readNativeUInt64(field: "match id")
            let count = Int(try body.readWireByte(field: "target count"))
            var targets: [String] = []
            targets.reserveCapacity(count)
            for _ in 0..<count {
                targets.append(try body.readNativeString(field: "target player id", maximumLength: 255))
            }
            self = .sendData(matchID: matchID, targets: targets, payload: try body.readNativeBytes(field: "payload"))
        case .matchInput:
            self = .matchInput(
                matchID: try body.readNativeUInt64(field: "match id"), input: try body.readNativeBytes(field: "input"))
        case .response, .requestError, .presence, .matchData, .matchEnded, .matchEvent:
            throw WireError.wrongDirection(messageType: raw)
        }
    }

    /// Writes the message (type byte first, no frame header).
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .request(let id, let request):
            buffer.writeWireByte(NativeMessageType.request.rawValue)
            buffer.writeWireInt(id)
            buffer.writeWireByte(request.kind)
            switch request {
            case .createMatch(let mode, let maxPlayers, let label):
                buffer.writeNativeString(mode)
                buffer.writeWireByte(maxPlayers)
                buffer.writeNativeString(label)
            case .joinMatch(let matchID), .leaveMatch(let matchID):
                buffer.writeNativeUInt64(matchID)
            }
        case .sendData(let matchID, let targets, let payload):
            buffer.writeWireByte(NativeMessageType.sendData.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeWireByte(UInt8(targets.count))
            for target in targets { buffer.writeNativeString(target) }
            buffer.writeNativeBytes(payload)
        case .matchInput(let matchID, let input):
            buffer.writeWireByte(NativeMessageType.matchInput.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeBytes(input)
        }
    }

    /// Encodes the message into a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 32)
        self.encode(into: &buffer)
        return buffer
    }
}

/// A message from the server, inside a `RELIABLE` or `UNRELIABLE` frame.
public enum NativeServerMessage: Hashable, Sendable {
    /// `RESPONSE` to the request with this id.
    case response(id: UInt32, NativeResponse)
    /// `REQUEST_ERROR` for the request with this id.
    case requestError(id: UInt32, NativeError)
    /// `PRESENCE`: `player` of the match changed presence.
    case presence(matchID: MatchIdentifier, playerID: String, change: NativePresenceChange, reason: NativeLeaveReason)
    /// `MATCH_DATA`: bytes from `sender` in the match.
    case matchData(matchID: MatchIdentifier, sender: String, payload: ByteBuffer)
    /// `MATCH_ENDED`: the match is over, for this reason.
    case matchEnded(matchID: MatchIdentifier, reason: String)
    /// `MATCH_EVENT`: an event of the match's game (for Cat Race, a Cat Race server message body).
    case matchEvent(matchID: MatchIdentifier, event: ByteBuffer)

    /// Decodes a message (type byte first). A payload is a slice of `message`.
    public init(message: ByteBuffer) throws {
        var body = message
        let raw = try body.readWireByte(field: "message type")
        guard let type = NativeMessageType(rawValue: raw) else { throw WireError.unknownMessageType(raw) }
        switch type {
        case .response:
            let id = try body.readWireInt(field: "request id")
            let kind = try body.readWireByte(field: "response kind")
            switch kind {
            case 1:
                let matchID = try body.readNativeUInt64(field: "match id")
                let mode = try body.readNativeString(field: "mode", maximumLength: 64)
                let label = try body.readNativeString(field: "label", maximumLength: 255)
                let capacity = try body.readWireByte(field: "capacity")
                let count = Int(try body.readWireByte(field: "player count"))
                var players: [NativeMatchInfo.Player] = []
                for _ in 0..<count {
                    let player = try body.readNativeString(field: "player id", maximumLength: 255)
                    let raw = try body.readWireByte(field: "presence")
                    guard let presence = NativePresence(rawValue: raw) else {
                        throw NativeWireError.invalidValue(field: "presence", value: UInt64(raw))
                    }
                    players.append(.init(playerID: player, presence: presence))
                }
                self = .response(
                    id: id,
                    .matchJoined(
                        NativeMatchInfo(matchID: matchID, mode: mode, label: label, capacity: capacity, players: players)))
            case 2:
                self = .response(id: id, .matchLeft(try body.readNativeUInt64(field: "match id")))
            default:
                throw NativeWireError.unknownResponseKind(kind)
            }
        case .requestError:
            let id = try body.readWireInt(field: "request id")
            let code = NativeErrorCode(rawValue: try body.readNativeUInt16(field: "error code"))
            self = .requestError(id: id, NativeError(code, try body.readNativeString(field: "error message", maximumLength: 4096)))
        case .presence:
            let matchID = try body.readNativeUInt64(field: "match id")
            let player = try body.readNativeString(field: "player id", maximumLength: 255)
            let rawChange = try body.readWireByte(field: "presence change")
            guard let change = NativePresenceChange(rawValue: rawChange) else {
                throw NativeWireError.invalidValue(field: "presence change", value: UInt64(rawChange))
            }
            let rawReason = try body.readWireByte(field: "leave reason")
            guard let reason = NativeLeaveReason(rawValue: rawReason) else {
                throw NativeWireError.invalidValue(field: "leave reason", value: UInt64(rawReason))
            }
            self = .presence(matchID: matchID, playerID: player, change: change, reason: reason)
        case .matchData:
            self = .matchData(
                matchID: try body.readNativeUInt64(field: "match id"),
                sender: try body.readNativeString(field: "sender", maximumLength: 255),
                payload: try body.readNativeBytes(field: "payload"))
        case .matchEnded:
            self = .matchEnded(
                matchID: try body.readNativeUInt64(field: "match id"),
                reason: try body.readNativeString(field: "reason", maximumLength: 4096))
        case .matchEvent:
            self = .matchEvent(
                matchID: try body.readNativeUInt64(field: "match id"), event: try body.readNativeBytes(field: "event"))
        case .request, .sendData, .matchInput:
            throw WireError.wrongDirection(messageType: raw)
        }
    }

    /// Writes the message (type byte first, no frame header).
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .response(let id, let response):
            buffer.writeWireByte(NativeMessageType.response.rawValue)
            buffer.writeWireInt(id)
            switch response {
            case .matchJoined(let info):
                buffer.writeWireByte(1)
                buffer.writeNativeUInt64(info.matchID)
                buffer.writeNativeString(info.mode)
                buffer.writeNativeString(info.label)
                buffer.writeWireByte(info.capacity)
                buffer.writeWireByte(UInt8(info.players.count))
                for player in info.players {
                    buffer.writeNativeString(player.playerID)
                    buffer.writeWireByte(player.presence.rawValue)
                }
            case .matchLeft(let matchID):
                buffer.writeWireByte(2)
                buffer.writeNativeUInt64(matchID)
            }
        case .requestError(let id, let error):
            buffer.writeWireByte(NativeMessageType.requestError.rawValue)
            buffer.writeWireInt(id)
            buffer.writeNativeUInt16(error.code.rawValue)
            buffer.writeNativeString(error.message)
        case .presence(let matchID, let playerID, let change, let reason):
            buffer.writeWireByte(NativeMessageType.presence.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeString(playerID)
            buffer.writeWireByte(change.rawValue)
            buffer.writeWireByte(reason.rawValue)
        case .matchData(let matchID, let sender, let payload):
            buffer.writeWireByte(NativeMessageType.matchData.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeString(sender)
            buffer.writeNativeBytes(payload)
        case .matchEnded(let matchID, let reason):
            buffer.writeWireByte(NativeMessageType.matchEnded.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeString(reason)
        case .matchEvent(let matchID, let event):
            buffer.writeWireByte(NativeMessageType.matchEvent.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeBytes(event)
        }
    }

    /// Encodes the message into a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 32)
        self.encode(into: &buffer)
        return buffer
    }
}
