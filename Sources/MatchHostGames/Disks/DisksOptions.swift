import MatchHostWire
import NIOCore

extension DisksGame {
    /// What a Disks match is created with. The defaults are the seed game's.
    public struct Options: Sendable, Hashable {
        /// Ticks per second (30): how often disks spawn and expire and TICK goes out.
        public var ticksPerSecond: Int
        /// Time between two spawns (600 ms); a spawn due while the board is full is skipped.
        public var spawnInterval: TimeAmount
        /// How long a disk stays up unhit (2.5 s).
        public var diskLifetime: TimeAmount
        /// The most disks that can be hit at once (8, at most 255).
        public var maxLiveDisks: Int
        /// Every disk's radius in board units (60, at most half the board).
        public var diskRadius: UInt16
        /// How many palette colours disks take (6).
        public var colorCount: UInt8
        /// The score that wins at once (20).
        public var scoreLimit: UInt16
        /// How long play lasts; then the highest score wins (60 s).
        public var timeLimit: TimeAmount
        /// Connected players needed before play starts (2).
        public var minimumPlayers: Int
        /// Taps one player may make per second (20); the rest are ignored and counted.
        public var maxTapsPerSecond: Int
        /// The seed of the disks' positions and colours: tests pass a fixed one, the server a random one.
        public var seed: UInt64

        /// Creates options.
        public init(
            ticksPerSecond: Int = 30, spawnInterval: TimeAmount = .milliseconds(600),
            diskLifetime: TimeAmount = .milliseconds(2500), maxLiveDisks: Int = 8, diskRadius: UInt16 = 60,
            colorCount: UInt8 = 6, scoreLimit: UInt16 = 20, timeLimit: TimeAmount = .seconds(60),
            minimumPlayers: Int = 2, maxTapsPerSecond: Int = 20, seed: UInt64 = 0
        ) {
            precondition((1...1000).contains(ticksPerSecond), "1 to 1000 ticks per second")
            precondition(
                spawnInterval.nanoseconds > 0 && diskLifetime.nanoseconds > 0,
                "spawn interval and lifetime must be positive")
            precondition((1...255).contains(maxLiveDisks), "1 to 255 live disks (lists on the wire are byte-counted)")
            precondition(
                diskRadius > 0 && diskRadius <= min(DisksBoard.width, DisksBoard.height) / 2,
                "a disk must fit on the board")
            precondition(
                colorCount > 0 && scoreLimit > 0 && timeLimit.nanoseconds > 0,
                "colours, score and time limits must be positive")
            precondition(minimumPlayers >= 1 && maxTapsPerSecond >= 1, "at least one player and one tap per second")
            self.ticksPerSecond = ticksPerSecond
            self.spawnInterval = spawnInterval
            self.diskLifetime = diskLifetime
            self.maxLiveDisks = maxLiveDisks
            self.diskRadius = diskRadius
            self.colorCount = colorCount
            self.scoreLimit = scoreLimit
            self.timeLimit = timeLimit
            self.minimumPlayers = minimumPlayers
            self.maxTapsPerSecond = maxTapsPerSecond
            self.seed = seed
        }

        /// The time between ticks.
        public var tickInterval: TimeAmount {
            .nanoseconds(1_000_000_000 / Int64(self.ticksPerSecond))
        }
    }
}
