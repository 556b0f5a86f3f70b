import NIOCore

/// S→C type 2 MOVED: a move was played (and saved). Body: `u8 seat`, `u8 column`, `u8 row`,
/// `u16 moveNumber`, `u8 nextSeat` (255: nobody, the game is over), `u32 turnTimeMs`.
///
/// Sent to both players, the mover included: it is the mover's acknowledgement.
public struct FourInARowMoved: FourInARowMessage {
    /// The type byte, 2.
    public static let type: UInt8 = 2

    /// The seat that moved.
    public var seat: UInt8
    /// The column the disc went into.
    public var column: UInt8
    /// The row it landed in (0 at the bottom).
    public var row: UInt8
    /// This move's number.
    public var moveNumber: UInt16
    /// The seat to move next, or nil when this move ended the game (GAME_OVER follows).
    public var nextSeat: UInt8?
    /// The next seat's time for its turn, in milliseconds; 0 when the game is over;
    /// ``FourInARowSnapshot/turnWaitsForArrival`` when the next seat's player has not arrived.
    public var turnTimeMilliseconds: UInt32

    /// Creates the message.
    public init(seat: UInt8, column: UInt8, row: UInt8, moveNumber: UInt16, nextSeat: UInt8?, turnTimeMilliseconds: UInt32) {
        self.seat = seat
        self.column = column
        self.row = row
        self.moveNumber = moveNumber
        self.nextSeat = nextSeat
        self.turnTimeMilliseconds = turnTimeMilliseconds
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.seat = try buffer.readFourInARowSeat(field: "seat")
        self.column = try buffer.readFourInARowByte(below: FourInARowGrid.columns, field: "column")
        self.row = try buffer.readFourInARowByte(below: FourInARowGrid.rows, field: "row")
        self.moveNumber = try buffer.readNativeUInt16(field: "moveNumber")
        self.nextSeat = try buffer.readFourInARowOptionalSeat(field: "nextSeat")
        self.turnTimeMilliseconds = try buffer.readWireInt(field: "turnTimeMs")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.seat)
        buffer.writeWireByte(self.column)
        buffer.writeWireByte(self.row)
        buffer.writeNativeUInt16(self.moveNumber)
        buffer.writeWireByte(self.nextSeat ?? FourInARowGrid.noSeat)
        buffer.writeWireInt(self.turnTimeMilliseconds)
    }
}
