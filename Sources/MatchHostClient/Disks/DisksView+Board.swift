import MatchHostWire

extension DisksView {
    /// One character cell of the board drawn as text.
    public struct BoardCell: Sendable, Hashable {
        /// What a cell shows.
        public enum Kind: Sendable, Hashable {
            /// Empty board.
            case empty
            /// Part of a live disk (drawn with its key).
            case disk
            /// The centre of a live disk: its key, to be made to stand out.
            case key
            /// Part of a hit disk spinning away (a spinner glyph).
            case spinning
            /// The centre of a hit disk: the hitter's seat number, from 1.
            case hitter
        }

        /// The character.
        public var character: Character
        /// What it shows.
        public var kind: Kind
        /// The disk's palette index, for the disk kinds.
        public var color: UInt8?
        /// For hit disks: whether the local player hit it.
        public var isMine: Bool

        /// Creates a cell.
        public init(character: Character, kind: Kind, color: UInt8?, isMine: Bool = false) {
            self.character = character
            self.kind = kind
            self.color = color
            self.isMine = isMine
        }

        /// An empty cell.
        public static let empty = BoardCell(character: " ", kind: .empty, color: nil)
    }

    /// The glyphs a hit disk spins through.
    public static let spinGlyphs: [Character] = ["|", "/", "-", "\\"]

    /// The board scaled to `columns` × `rows` character cells, top row first.
    ///
    /// A cell belongs to a disk when the board point at its centre lies in the disk's circle;
    /// a disk's centre cell is always drawn, however small the disk. Hit disks spin (their
    /// glyph turns every eighth of ``fadeNanoseconds``) and shrink as they fade, under the live
    /// disks; live disks are drawn oldest first, so newer ones cover older ones, as on the
    /// server. A live disk's cells show its key (`*` when it has none).
    public func board(columns: Int, rows: Int) -> [[BoardCell]] {
        let columns = max(1, columns)
        let rows = max(1, rows)
        var grid = Array(repeating: Array(repeating: BoardCell.empty, count: columns), count: rows)
        let mySeat = self.mySeat
        for hit in self.hitDisks {
            let progress = self.fadeProgress(of: hit)
            let glyph = Self.spinGlyphs[Int(progress * 8) % Self.spinGlyphs.count]
            let radius = UInt16((Double(hit.disk.radius) * (1 - progress)).rounded())
            var shrunk = hit.disk
            shrunk.radius = radius
            let seatDigit = Character(hit.seat < 9 ? String(hit.seat + 1) : "+")
            let mine = hit.seat == mySeat
            Self.paint(shrunk, on: &grid, columns: columns, rows: rows) { isCentre in
                BoardCell(
                    character: isCentre ? seatDigit : glyph, kind: isCentre ? .hitter : .spinning, color: hit.disk.color,
                    isMine: mine)
            }
        }
        for live in self.liveDisks {
            let character = live.key ?? "*"
            Self.paint(live.disk, on: &grid, columns: columns, rows: rows) { isCentre in
                BoardCell(character: character, kind: isCentre ? .key : .disk, color: live.disk.color)
            }
        }
        return grid
    }

    /// The board as plain text in a frame: `+` and `-` above and below, `|` at each side.
    public func boardLines(columns: Int, rows: Int) -> [String] {
        let grid = self.board(columns: columns, rows: rows)
        let edge = "+" + String(repeating: "-", count: grid.first?.count ?? 0) + "+"
        return [edge] + grid.map { "|" + String($0.map(\.character)) + "|" } + [edge]
    }

    /// One line per seat: a marker for the local player, the name, the score, and what
    /// happened to the player:
    ///
    /// ```
    /// > f998cf4c (you)  12  WINNER
    ///   b67b73f1         9  left
    /// ```
    public func scoreLines() -> [String] {
        let names = self.players.map { $0.displayName + ($0.isMe ? " (you)" : "") }
        let nameWidth = max(8, names.map(\.count).max() ?? 0)
        let scoreWidth = max(2, String(self.players.map(\.score).max() ?? 0).count)
        return self.players.indices.map { seat in
            let player = self.players[seat]
            let name = names[seat] + String(repeating: " ", count: nameWidth - names[seat].count)
            let score = String(player.score)
            var line = (player.isMe ? "> " : "  ") + name + " " + String(repeating: " ", count: scoreWidth - score.count) + score
            var notes: [String] = []
            if self.winners.contains(seat) { notes.append("WINNER") }
            if player.hasLeft {
                notes.append("left")
            } else if player.isAway {
                notes.append("away")
            }
            if !notes.isEmpty { line += "  " + notes.joined(separator: " ") }
            return line
        }
    }

    /// Paints the cells of `disk`; `cell(isCentre)` makes each.
    private static func paint(
        _ disk: DisksDisk, on grid: inout [[BoardCell]], columns: Int, rows: Int, cell: (Bool) -> BoardCell
    ) {
        let width = Double(DisksBoard.width)
        let height = Double(DisksBoard.height)
        let cellWidth = width / Double(columns)
        let cellHeight = height / Double(rows)
        let radius = Double(disk.radius)
        let centreColumn = min(columns - 1, max(0, Int(Double(disk.x) / cellWidth)))
        let centreRow = min(rows - 1, max(0, Int(Double(disk.y) / cellHeight)))
        let firstRow = max(0, Int((Double(disk.y) - radius) / cellHeight))
        let lastRow = min(rows - 1, Int((Double(disk.y) + radius) / cellHeight))
        let firstColumn = max(0, Int((Double(disk.x) - radius) / cellWidth))
        let lastColumn = min(columns - 1, Int((Double(disk.x) + radius) / cellWidth))
        if firstRow <= lastRow, firstColumn <= lastColumn {
            for row in firstRow...lastRow {
                let dy = (Double(row) + 0.5) * cellHeight - Double(disk.y)
                for column in firstColumn...lastColumn {
                    let dx = (Double(column) + 0.5) * cellWidth - Double(disk.x)
                    if dx * dx + dy * dy <= radius * radius {
                        grid[row][column] = cell(false)
                    }
                }
            }
        }
        grid[centreRow][centreColumn] = cell(true)
    }
}
