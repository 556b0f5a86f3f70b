import NIOCore

/// Every message a Four in a Row client may send (client → server).
public enum FourInARowClientMessage: Sendable, Hashable {
    /// Type 1.
    case move(FourInARowMove)

    /// Decodes a body (type byte and fields) as the server reads it.
    /// - Throws: ``WireError`` for an empty body, an unknown type or a truncated field.
    public init(body: ByteBuffer) throws {
        var body = body
        guard let type = body.readInteger(as: UInt8.self) else { throw WireError.emptyFrame }
        switch type {
        case FourInARowMove.type: self = .move(try FourInARowMove(decodingFields: &body))
        default: throw WireError.unknownMessageType(type)
        }
    }

    /// Writes the body: type byte, then fields.
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .move(let message): message.encode(into: &buffer)
        }
    }

    /// The body in a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 4)
        self.encode(into: &buffer)
        return buffer
    }
}
