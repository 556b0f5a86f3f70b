import NIOCore

/// S→C type 4 GAME_OVER: the game has ended. Body: `u8 winnerSeat` (255: none, a draw),
/// `u8 reason`, `u8 count`, `count` × `u8 cell`.
///
/// The cells are those of the winning line (every disc of each line of four or more that
/// the last disc completed, in increasing index order); empty unless the reason is
/// ``FourInARowEndReason/fourInARow``. STATE carries the same fields when the game is over.
public struct FourInARowGameOver: FourInARowMessage {
    /// The type byte, 4.
    public static let type: UInt8 = 4

    /// The winning seat, or nil for a draw.
    public var winnerSeat: UInt8?
    /// How the game ended.
    public var reason: FourInARowEndReason
    /// The cell indices (see ``FourInARowGrid``) of the winning line.
    public var winningCells: [UInt8]

    /// Creates the message.
    public init(winnerSeat: UInt8?, reason: FourInARowEndReason, winningCells: [UInt8] = []) {
        precondition(winnerSeat.map { $0 <= 1 } ?? true, "a winner is seat 0 or 1")
        precondition(winningCells.count <= FourInARowGrid.cellCount, "no more cells than the board has")
        self.winnerSeat = winnerSeat
        self.reason = reason
        self.winningCells = winningCells
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.winnerSeat = try buffer.readFourInARowOptionalSeat(field: "winnerSeat")
        self.reason = try buffer.readFourInARowCode(FourInARowEndReason.self, field: "reason")
        let count = Int(try buffer.readFourInARowByte(below: FourInARowGrid.cellCount + 1, field: "count"))
        var cells: [UInt8] = []
        cells.reserveCapacity(count)
        for index in 0..<count {
            cells.append(try buffer.readFourInARowByte(below: FourInARowGrid.cellCount, field: "cells[\(index)]"))
        }
        self.winningCells = cells
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.winnerSeat ?? FourInARowGrid.noSeat)
        buffer.writeWireByte(self.reason.rawValue)
        buffer.writeWireByte(UInt8(self.winningCells.count))
        for cell in self.winningCells { buffer.writeWireByte(cell) }
    }
}
