import NIOCore

/// The message type byte of the Cat Race protocol (the tutorial's `MessageType` enum).
/// Ids are consecutive from 0; `notifyReady` is used in both directions.
public enum CatRaceMessageType: UInt8, Sendable, CaseIterable {
    /// C→S `PLAYER_CONNECTED`.
    case playerConnected = 0
    /// S→C `NOT_IN_MATCH`.
    case notInMatch = 1
    /// C→S `START_MATCH`.
    case startMatch = 2
    /// S→C `MATCH_STARTED`.
    case matchStarted = 3
    /// C→S `MOVED_SELF`.
    case movedSelf = 4
    /// S→C `PLAYER_MOVED`.
    case playerMoved = 5
    /// S→C `GAME_OVER`.
    case gameOver = 6
    /// C→S `RESTART_MATCH`.
    case restartMatch = 7
    /// Both directions: `NOTIFY_READY`.
    case notifyReady = 8
}

/// One Cat Race message: its type byte and how its fields are read and written.
public protocol CatRaceMessage: Sendable, Hashable {
    /// The type byte that starts this message's frame body.
    static var type: CatRaceMessageType { get }
    /// Reads the fields that follow the type byte. Bytes after the last field are ignored.
    init(decodingFields buffer: inout ByteBuffer) throws
    /// Writes the fields that follow the type byte.
    func encodeFields(into buffer: inout ByteBuffer)
}

extension CatRaceMessage {
    /// Writes the whole frame: length, type byte, fields.
    public func encodeFrame(into buffer: inout ByteBuffer) {
        buffer.writeFrame { body in
            body.writeWireByte(Self.type.rawValue)
            self.encodeFields(into: &body)
        }
    }

    /// Encodes the whole frame into a new buffer.
    public func encodedFrame(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 16)
        self.encodeFrame(into: &buffer)
        return buffer
    }
}

/// The lap length and start line of the tutorial's race, shared by the wire and the rules.
public enum CatRaceTrack {
    /// Where every racer starts, in points.
    public static let startX: UInt32 = 25
    /// How far one tap moves a racer (`PlayerSprite`'s `ccp(10, 0)`).
    public static let stepX: UInt32 = 10
    /// The finish line: a racer at or past it wins (`PLAYER_WIN_X`).
    public static let finishX: UInt32 = 445
}
