/// The order of a leaderboard, for implementations that sort in Swift: rating (highest
/// first), then matches won (most first), then player id in UTF-8 byte order, which is
/// how SQLite compares text, so both implementations rank alike.
package enum LeaderboardOrder {
    /// Whether `a` ranks above `b`.
    package static func precedes(_ a: PlayerStats, _ b: PlayerStats) -> Bool {
        if a.rating != b.rating { return a.rating > b.rating }
        if a.won != b.won { return a.won > b.won }
        return a.playerID.utf8.lexicographicallyPrecedes(b.playerID.utf8)
    }

    /// Where a window of `count` entries around the entry at `position` (from 0) begins, in
    /// a board of `total` entries: centred, then pushed back inside the edges.
    package static func windowStart(around position: Int, count: Int, total: Int) -> Int {
        let centred = position - (count - 1) / 2
        return max(0, min(centred, total - count))
    }
}
