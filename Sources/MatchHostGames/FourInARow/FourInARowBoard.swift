import MatchHostWire

/// Why a disc cannot be dropped, or a move played.
public enum FourInARowRefusal: Error, Hashable, Sendable {
    /// The column is not 0 to 6.
    case columnOutOfRange
    /// The column has no empty cell.
    case columnFull
    /// The game is not in play (waiting for players, or over); only ``FourInARowState`` says this.
    case gameNotRunning

    /// The MOVE_REFUSED reason for this refusal.
    public var wireReason: FourInARowRefusalReason {
        switch self {
        case .columnOutOfRange: return .columnOutOfRange
        case .columnFull: return .columnFull
        case .gameNotRunning: return .gameNotRunning
        }
    }
}

/// Where a dropped disc landed and what it did.
public struct FourInARowDrop: Hashable, Sendable {
    /// What the disc did to the game.
    public enum Outcome: Hashable, Sendable {
        /// Nothing decisive: play goes on.
        case continues
        /// It made a line of four or more; the cells of every such line through it, ascending.
        case won(cells: [Int])
        /// It filled the board without making a line.
        case draw
    }

    /// The column it went into.
    public var column: Int
    /// The row it landed in (0 at the bottom).
    public var row: Int
    /// What it did.
    public var outcome: Outcome

    /// Creates a drop.
    public init(column: Int, row: Int, outcome: Outcome) {
        self.column = column
        self.row = row
        self.outcome = outcome
    }
}

/// The 7 × 6 board: which seat's disc, if any, is in each cell. A pure value: no turns,
/// no players, no time, only where discs fall and whether they make four in a row.
///
/// Cells are indexed as on the wire (``FourInARowGrid``): `row × 7 + column`, row 0 at the
/// bottom; a cell holds 0 (empty), 1 (seat 0) or 2 (seat 1).
public struct FourInARowBoard: Hashable, Sendable {
    /// The 42 cells.
    public private(set) var cells: [UInt8]

    /// An empty board.
    public init() {
        self.cells = [UInt8](repeating: 0, count: FourInARowGrid.cellCount)
    }

    /// The index of a cell.
    public static func cellIndex(column: Int, row: Int) -> Int {
        row * FourInARowGrid.columns + column
    }

    /// The seat whose disc is at (`column`, `row`), or nil for an empty cell.
    public func seat(column: Int, row: Int) -> Int? {
        let cell = self.cells[Self.cellIndex(column: column, row: row)]
        return cell == 0 ? nil : Int(cell) - 1
    }

    /// The row a disc dropped into `column` would land in, or nil when the column is full.
    /// `column` must be 0 to 6.
    public func landingRow(column: Int) -> Int? {
        (0..<FourInARowGrid.rows).first { self.cells[Self.cellIndex(column: column, row: $0)] == 0 }
    }

    /// Whether every cell holds a disc.
    public var isFull: Bool {
        // The top row fills last.
        (0..<FourInARowGrid.columns).allSatisfy { self.landingRow(column: $0) == nil }
    }

    /// Drops a disc of `seat` (0 or 1) into `column`.
    /// - Returns: where it landed and whether it won or filled the board; or why it could not drop.
    public mutating func drop(seat: Int, column: Int) -> Result<FourInARowDrop, FourInARowRefusal> {
        precondition(seat == 0 || seat == 1, "seat 0 or 1 drops discs")
        guard (0..<FourInARowGrid.columns).contains(column) else { return .failure(.columnOutOfRange) }
        guard let row = self.landingRow(column: column) else { return .failure(.columnFull) }
        self.cells[Self.cellIndex(column: column, row: row)] = UInt8(seat + 1)
        let line = self.winningCells(column: column, row: row)
        let outcome: FourInARowDrop.Outcome = !line.isEmpty ? .won(cells: line) : self.isFull ? .draw : .continues
        return .success(FourInARowDrop(column: column, row: row, outcome: outcome))
    }

    /// The cells of every line of four or more (across, up, and both diagonals) through the
    /// disc at (`column`, `row`), in ascending order; empty when there is none.
    public func winningCells(column: Int, row: Int) -> [Int] {
        let cell = self.cells[Self.cellIndex(column: column, row: row)]
        guard cell != 0 else { return [] }
        var winning: Set<Int> = []
        for (dc, dr) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
            var line = [Self.cellIndex(column: column, row: row)]
            for sign in [1, -1] {
                var c = column + sign * dc
                var r = row + sign * dr
                while (0..<FourInARowGrid.columns).contains(c), (0..<FourInARowGrid.rows).contains(r),
                    self.cells[Self.cellIndex(column: c, row: r)] == cell
                {
                    line.append(Self.cellIndex(column: c, row: r))
                    c += sign * dc
                    r += sign * dr
                }
            }
            if line.count >= 4 { winning.formUnion(line) }
        }
        return winning.sorted()
    }
}
