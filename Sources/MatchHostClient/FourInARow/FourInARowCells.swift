import MatchHostWire

/// The 42 cells of a Four in a Row board as a client holds them, with the little geometry a
/// client needs: where a disc lands, and which lines of four a disc makes.
///
/// Cells are numbered as on the wire (``FourInARowGrid``): `row × 7 + column`, row 0 at the
/// bottom. A cell is 0 (empty), 1 (seat 0's disc) or 2 (seat 1's disc). The server decides
/// the game; this is for drawing it and for bots thinking ahead.
public struct FourInARowCells: Sendable, Hashable {
    /// The cells, 42 of them.
    public private(set) var cells: [UInt8]

    /// An empty board.
    public init() {
        self.cells = Array(repeating: 0, count: FourInARowGrid.cellCount)
    }

    /// A board with these cells, as STATE carries them.
    /// - Precondition: there are 42 cells (a decoded STATE always has them).
    public init(_ cells: [UInt8]) {
        precondition(cells.count == FourInARowGrid.cellCount, "a board has 42 cells")
        self.cells = cells
    }

    /// The disc a seat drops: 1 for seat 0, 2 for seat 1.
    public static func disc(ofSeat seat: UInt8) -> UInt8 {
        seat + 1
    }

    /// The cell index of a column and row.
    public static func index(column: Int, row: Int) -> Int {
        row * FourInARowGrid.columns + column
    }

    /// The cell at `column`, `row` (both in range).
    public subscript(column column: Int, row row: Int) -> UInt8 {
        get { self.cells[Self.index(column: column, row: row)] }
        set { self.cells[Self.index(column: column, row: row)] = newValue }
    }

    /// The row a disc dropped into `column` would land in; nil when the column is full or
    /// not 0 to 6.
    public func landingRow(column: Int) -> Int? {
        guard (0..<FourInARowGrid.columns).contains(column) else { return nil }
        return (0..<FourInARowGrid.rows).first { self[column: column, row: $0] == 0 }
    }

    /// The columns a disc can still go into, left to right.
    public var openColumns: [Int] {
        (0..<FourInARowGrid.columns).filter { self.landingRow(column: $0) != nil }
    }

    /// Whether every cell holds a disc.
    public var isFull: Bool {
        !self.cells.contains(0)
    }

    /// Discs on the board.
    public var discCount: Int {
        self.cells.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
    }

    /// Drops `disc` into `column`.
    /// - Returns: the row it landed in, or nil (and no change) when the column is full or out of range.
    @discardableResult
    public mutating func drop(_ disc: UInt8, column: Int) -> Int? {
        guard let row = self.landingRow(column: column) else { return nil }
        self[column: column, row: row] = disc
        return row
    }

    /// The cells of every line of four or more equal discs through the cell at `index`,
    /// ascending and without repeats; empty when there is none (or the cell is empty). This
    /// is what GAME_OVER lists when the disc at `index` won.
    public func linesOfFour(through index: Int) -> [Int] {
        let disc = self.cells[index]
        guard disc != 0 else { return [] }
        let column = index % FourInARowGrid.columns
        let row = index / FourInARowGrid.columns
        var found = Set<Int>()
        for (dc, dr) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
            var line = [index]
            for sign in [1, -1] {
                var c = column + sign * dc
                var r = row + sign * dr
                while (0..<FourInARowGrid.columns).contains(c), (0..<FourInARowGrid.rows).contains(r),
                    self[column: c, row: r] == disc
                {
                    line.append(Self.index(column: c, row: r))
                    c += sign * dc
                    r += sign * dr
                }
            }
            if line.count >= 4 { found.formUnion(line) }
        }
        return found.sorted()
    }

    /// Whether dropping `disc` into `column` would make a line of four.
    public func dropWins(_ disc: UInt8, column: Int) -> Bool {
        var board = self
        guard let row = board.drop(disc, column: column) else { return false }
        return !board.linesOfFour(through: Self.index(column: column, row: row)).isEmpty
    }
}
