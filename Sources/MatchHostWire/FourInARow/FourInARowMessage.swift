import NIOCore

/// One Four in a Row message: its type byte and how its fields are read and written.
///
/// A message body is the type byte, then the fields. Client and server messages are numbered
/// separately (each from 1): the direction says which table a type byte belongs to. Over the
/// native protocol a client body travels in MATCH_INPUT's `input`, a server body in
/// MATCH_EVENT's `event`.
public protocol FourInARowMessage: Sendable, Hashable {
    /// The type byte that starts this message's body.
    static var type: UInt8 { get }
    /// Reads the fields that follow the type byte. Bytes after the last field are ignored.
    init(decodingFields buffer: inout ByteBuffer) throws
    /// Writes the fields that follow the type byte.
    func encodeFields(into buffer: inout ByteBuffer)
}

extension FourInARowMessage {
    /// Writes the body: type byte, then fields.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(Self.type)
        self.encodeFields(into: &buffer)
    }
}
