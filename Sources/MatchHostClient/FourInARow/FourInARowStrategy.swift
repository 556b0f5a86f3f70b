import MatchHostWire

/// How ``FourInARowBot`` chooses a column: sensible, not deep.
///
/// In order: a drop that wins now; a drop that stops the opponent winning on its next move;
/// otherwise a random column, weighted toward the center (which takes part in the most
/// lines), among those that do not hand the opponent a win on the cell just above. The
/// randomness comes from the caller's generator, so a seeded generator replays a game.
public enum FourInARowStrategy {
    /// The weight of each column, left to right, for the random choice.
    public static let columnWeights = [1, 2, 4, 6, 4, 2, 1]

    /// The column to drop `disc` (1 or 2) into, or nil when the board is full.
    public static func chooseColumn<Generator: RandomNumberGenerator>(
        in cells: FourInARowCells, disc: UInt8, using generator: inout Generator
    ) -> Int? {
        let open = cells.openColumns
        guard !open.isEmpty else { return nil }
        let opponent: UInt8 = disc == 1 ? 2 : 1
        if let win = open.first(where: { cells.dropWins(disc, column: $0) }) {
            return win
        }
        if let block = open.first(where: { cells.dropWins(opponent, column: $0) }) {
            return block
        }
        let safe = open.filter { column in
            var after = cells
            after.drop(disc, column: column)
            return !after.dropWins(opponent, column: column)
        }
        return self.weightedPick(safe.isEmpty ? open : safe, using: &generator)
    }

    private static func weightedPick<Generator: RandomNumberGenerator>(_ columns: [Int], using generator: inout Generator) -> Int {
        let total = columns.reduce(0) { $0 + self.columnWeights[$1] }
        var pick = Int.random(in: 0..<total, using: &generator)
        for column in columns {
            pick -= self.columnWeights[column]
            if pick < 0 { return column }
        }
        return columns[columns.count - 1]
    }
}

/// A small seeded random number generator (SplitMix64): the same seed gives the same
/// numbers on every platform, so a bot's game can be replayed.
public struct FourInARowBotRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
