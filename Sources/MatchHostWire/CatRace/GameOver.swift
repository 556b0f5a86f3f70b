import NIOCore

/// S→C type 6: the race is won. Body: `byte winnerIndex`.
public struct GameOver: CatRaceMessage {
    /// The type byte, 6.
    public static let type = CatRaceMessageType.gameOver
    /// The index of the winning racer.
    public var winnerIndex: UInt8

    /// Creates the message.
    public init(winnerIndex: UInt8) {
        self.winnerIndex = winnerIndex
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.winnerIndex = try buffer.readWireByte(field: "winnerIndex")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.winnerIndex)
    }
}
