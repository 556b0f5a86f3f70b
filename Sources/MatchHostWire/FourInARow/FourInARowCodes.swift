import NIOCore

/// The board's shape as the wire sees it: 7 columns × 6 rows, 42 cells.
///
/// Cell `index = row × 7 + column`, row 0 at the bottom (where a disc dropped into an empty
/// column lands), column 0 on the left. A cell byte is 0 (empty), 1 (seat 0's disc) or 2
/// (seat 1's disc).
public enum FourInARowGrid {
    /// Columns, numbered 0 to 6 from the left.
    public static let columns = 7
    /// Rows, numbered 0 to 5 from the bottom.
    public static let rows = 6
    /// Cells on the board.
    public static let cellCount = columns * rows
    /// The byte that stands for "no seat" (no winner, nobody to move).
    public static let noSeat: UInt8 = 255
}

/// Where a game stands, as STATE reports it.
public enum FourInARowPhase: UInt8, Sendable, Hashable, CaseIterable {
    /// Fewer than two seats so far; nobody may move.
    case waiting = 0
    /// Both seats are taken; the seat to move has a turn timer running.
    case playing = 1
    /// The game has ended; GAME_OVER said how.
    case over = 2
}

/// Why the server did not take a MOVE (MOVE_REFUSED's reason byte).
public enum FourInARowRefusalReason: UInt8, Sendable, Hashable, CaseIterable {
    /// It is the other seat's turn.
    case notYourTurn = 1
    /// The column has no empty cell left.
    case columnFull = 2
    /// The column is not 0 to 6.
    case columnOutOfRange = 3
    /// The move number is not the number of the next move (a stale or repeated MOVE).
    case staleMoveNumber = 4
    /// The game has not started or is over.
    case gameNotRunning = 5
    /// An earlier move is still being saved; nothing can be played until it is.
    case moveBeingCommitted = 6
    /// The server could not save the move; the board is as it was and it is still the mover's turn.
    case couldNotBeSaved = 7
}

/// How a game ended (GAME_OVER's reason byte).
public enum FourInARowEndReason: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The winner made a line of four.
    case fourInARow = 1
    /// The board filled up with no line of four.
    case draw = 2
    /// The seat to move ran out of time; the other seat wins.
    case turnTimeout = 3
    /// A player left for good; the other seat wins.
    case opponentLeft = 4

    /// The reason in words.
    public var description: String {
        switch self {
        case .fourInARow: return "four in a row"
        case .draw: return "draw"
        case .turnTimeout: return "turn timeout"
        case .opponentLeft: return "opponent left"
        }
    }
}

extension ByteBuffer {
    /// Reads one byte and turns it into `Code`, naming `field` in the error when it is no code.
    mutating func readFourInARowCode<Code: RawRepresentable>(_: Code.Type, field: String) throws -> Code
    where Code.RawValue == UInt8 {
        let byte = try self.readWireByte(field: field)
        guard let code = Code(rawValue: byte) else { throw NativeWireError.invalidValue(field: field, value: UInt64(byte)) }
        return code
    }

    /// Reads a seat byte, 0 or 1.
    mutating func readFourInARowSeat(field: String) throws -> UInt8 {
        try self.readFourInARowByte(below: 2, field: field)
    }

    /// Reads a seat byte that may be ``FourInARowGrid/noSeat`` (read as nil).
    mutating func readFourInARowOptionalSeat(field: String) throws -> UInt8? {
        let byte = try self.readWireByte(field: field)
        if byte == FourInARowGrid.noSeat { return nil }
        guard byte <= 1 else { throw NativeWireError.invalidValue(field: field, value: UInt64(byte)) }
        return byte
    }

    /// Reads a byte that must be below `limit`.
    mutating func readFourInARowByte(below limit: Int, field: String) throws -> UInt8 {
        let byte = try self.readWireByte(field: field)
        guard Int(byte) < limit else { throw NativeWireError.invalidValue(field: field, value: UInt64(byte)) }
        return byte
    }
}
