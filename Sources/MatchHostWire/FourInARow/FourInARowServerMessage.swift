import NIOCore

/// Every message a Four in a Row server may send (server → client).
public enum FourInARowServerMessage: Sendable, Hashable {
    /// Type 1 STATE.
    case state(FourInARowSnapshot)
    /// Type 2 MOVED.
    case moved(FourInARowMoved)
    /// Type 3 MOVE_REFUSED.
    case moveRefused(FourInARowMoveRefused)
    /// Type 4 GAME_OVER.
    case gameOver(FourInARowGameOver)

    /// Decodes a body (type byte and fields) as a client reads it.
    /// - Throws: ``WireError`` for an empty body, an unknown type or a truncated field,
    ///   ``NativeWireError/invalidValue(field:value:)`` for a byte outside its field's range.
    public init(body: ByteBuffer) throws {
        var body = body
        guard let type = body.readInteger(as: UInt8.self) else { throw WireError.emptyFrame }
        switch type {
        case FourInARowSnapshot.type: self = .state(try FourInARowSnapshot(decodingFields: &body))
        case FourInARowMoved.type: self = .moved(try FourInARowMoved(decodingFields: &body))
        case FourInARowMoveRefused.type: self = .moveRefused(try FourInARowMoveRefused(decodingFields: &body))
        case FourInARowGameOver.type: self = .gameOver(try FourInARowGameOver(decodingFields: &body))
        default: throw WireError.unknownMessageType(type)
        }
    }

    /// Writes the body: type byte, then fields.
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .state(let message): message.encode(into: &buffer)
        case .moved(let message): message.encode(into: &buffer)
        case .moveRefused(let message): message.encode(into: &buffer)
        case .gameOver(let message): message.encode(into: &buffer)
        }
    }

    /// The body in a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 64)
        self.encode(into: &buffer)
        return buffer
    }
}
