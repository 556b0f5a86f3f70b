import NIOCore

/// C→S type 4: the sender's new absolute x position. Body: `int posX`.
public struct MovedSelf: CatRaceMessage {
    /// The type byte, 4.
    public static let type = CatRaceMessageType.movedSelf
    /// The position the client claims; the server validates it.
    public var posX: UInt32

    /// Creates the message.
    public init(posX: UInt32) {
        self.posX = posX
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.posX = try buffer.readWireInt(field: "posX")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireInt(self.posX)
    }
}
