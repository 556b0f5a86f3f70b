import NIOCore

/// C→S type 1 MOVE: drop a disc. Body: `u16 moveNumber`, `u8 column`.
///
/// `moveNumber` is the number this move is meant to have (the first move of a game is 1;
/// STATE and MOVED say which comes next), so a MOVE sent twice, or sent against a board
/// that has moved on, is refused instead of played.
public struct FourInARowMove: FourInARowMessage {
    /// The type byte, 1.
    public static let type: UInt8 = 1

    /// The number of the move this is meant to be.
    public var moveNumber: UInt16
    /// The column to drop into, 0 to 6 from the left. Any byte decodes; the game refuses
    /// one out of range with a reason.
    public var column: UInt8

    /// Creates the message.
    public init(moveNumber: UInt16, column: UInt8) {
        self.moveNumber = moveNumber
        self.column = column
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.moveNumber = try buffer.readNativeUInt16(field: "moveNumber")
        self.column = try buffer.readWireByte(field: "column")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt16(self.moveNumber)
        buffer.writeWireByte(self.column)
    }
}
