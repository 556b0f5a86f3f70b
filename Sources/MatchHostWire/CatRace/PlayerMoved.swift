import NIOCore

/// S→C type 5: a racer moved. Body: `byte playerIndex`, `int posX`.
/// MatchHost sends the mover's index (the tutorial server sent the recipient's own).
public struct PlayerMoved: CatRaceMessage {
    /// The type byte, 5.
    public static let type = CatRaceMessageType.playerMoved
    /// The index of the racer that moved.
    public var playerIndex: UInt8
    /// Its new x position.
    public var posX: UInt32

    /// Creates the message.
    public init(playerIndex: UInt8, posX: UInt32) {
        self.playerIndex = playerIndex
        self.posX = posX
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.playerIndex = try buffer.readWireByte(field: "playerIndex")
        self.posX = try buffer.readWireInt(field: "posX")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.playerIndex)
        buffer.writeWireInt(self.posX)
    }
}
