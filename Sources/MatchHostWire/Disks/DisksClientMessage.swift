import NIOCore

/// Every message a Disks client sends, as the body of a native `MATCH_INPUT` (type byte first).
public enum DisksClientMessage: Sendable, Hashable {
    /// Type 1.
    case tap(DisksTap)

    /// Decodes a body: the type byte, then its fields. Bytes after the last field are ignored.
    /// - Throws: ``WireError`` for an empty body, an unknown type or a truncated field.
    public init(body: ByteBuffer) throws {
        var body = body
        guard let raw = body.readInteger(as: UInt8.self) else { throw WireError.emptyFrame }
        guard let type = DisksClientMessageType(rawValue: raw) else { throw WireError.unknownMessageType(raw) }
        switch type {
        case .tap: self = .tap(try DisksTap(decodingFields: &body))
        }
    }

    /// Writes the body: the type byte, then the fields.
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .tap(let tap):
            buffer.writeWireByte(DisksClientMessageType.tap.rawValue)
            tap.encodeFields(into: &buffer)
        }
    }

    /// Encodes the body into a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 8)
        self.encode(into: &buffer)
        return buffer
    }
}
