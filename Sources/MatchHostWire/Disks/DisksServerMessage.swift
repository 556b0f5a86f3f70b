import NIOCore

/// Every message a Disks server sends, as the body of a native `MATCH_EVENT` (type byte first).
public enum DisksServerMessage: Sendable, Hashable {
    /// Type 1.
    case state(DisksState)
    /// Type 2.
    case tick(DisksTick)
    /// Type 3.
    case gameOver(DisksGameOver)
    /// Type 4.
    case tapMissed(DisksTapMissed)

    /// The message's type byte.
    public var type: DisksServerMessageType {
        switch self {
        case .state: return .state
        case .tick: return .tick
        case .gameOver: return .gameOver
        case .tapMissed: return .tapMissed
        }
    }

    /// Decodes a body: the type byte, then its fields. Bytes after the last field are ignored.
    /// - Throws: ``WireError`` for an empty body, an unknown type or a truncated field;
    ///   ``NativeWireError`` for a code (phase, reason) out of range.
    public init(body: ByteBuffer) throws {
        var body = body
        guard let raw = body.readInteger(as: UInt8.self) else { throw WireError.emptyFrame }
        guard let type = DisksServerMessageType(rawValue: raw) else { throw WireError.unknownMessageType(raw) }
        switch type {
        case .state: self = .state(try DisksState(decodingFields: &body))
        case .tick: self = .tick(try DisksTick(decodingFields: &body))
        case .gameOver: self = .gameOver(try DisksGameOver(decodingFields: &body))
        case .tapMissed: self = .tapMissed(try DisksTapMissed(decodingFields: &body))
        }
    }

    /// Writes the body: the type byte, then the fields.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.type.rawValue)
        switch self {
        case .state(let message): message.encodeFields(into: &buffer)
        case .tick(let message): message.encodeFields(into: &buffer)
        case .gameOver(let message): message.encodeFields(into: &buffer)
        case .tapMissed(let message): message.encodeFields(into: &buffer)
        }
    }

    /// Encodes the body into a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 32)
        self.encode(into: &buffer)
        return buffer
    }
}
