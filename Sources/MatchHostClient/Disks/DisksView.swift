import MatchHostWire

/// What one Disks player knows about its match, built by folding the server's messages.
///
/// Pure state, no I/O and no clock of its own: feed it every ``DisksEvent`` (or
/// ``DisksServerMessage``) with ``apply(_:)-(DisksEvent)``. It keeps the disks that can be hit
/// (each with a keyboard key, for terminal play), the disks hit recently (to show them spinning
/// away for ``fadeNanoseconds`` of server time, measured by the TICKs' `serverTime`), every
/// seat's player and score, the time left, the phase, and the winners.
///
/// ```swift
/// var view = DisksView(myPlayerID: disks.playerID)
/// while let event = try await disks.nextEvent(timeout: nil) {
///     view.apply(event)
///     if let target = view.liveDisks.last, let point = view.aimPoint(forDisk: target.disk.id) {
///         try await disks.tap(x: point.x, y: point.y)
///     }
/// }
/// ```
public struct DisksView: Sendable, Hashable {
    /// Where the game is, as far as this player knows.
    public enum Phase: Sendable, Hashable {
        /// No STATE yet.
        case joining
        /// Waiting for enough players to be connected.
        case waiting
        /// Disks spawn and the clock runs.
        case playing
        /// GAME_OVER came (or a STATE said so).
        case over
    }

    /// One seat of the match.
    public struct Player: Sendable, Hashable {
        /// The seat (stable for the match's life).
        public var seat: Int
        /// The player's id; empty while unknown (a hit by a seat this view has not been told about).
        public var playerID: String
        /// The score.
        public var score: UInt16
        /// Whether this seat is the local player's.
        public var isMe: Bool
        /// Whether the player's connection is lost (its seat waits for it).
        public var isAway = false
        /// Whether the player has left for good.
        public var hasLeft = false

        /// The player's alias, once the app has told the view (``DisksView/setAlias(_:of:)``).
        public var alias: String?

        /// A short name: the alias once known, else the first 8 characters of the id, or
        /// "seat N" (from 1) while the id is unknown.
        public var displayName: String {
            if let alias { return alias }
            return self.playerID.isEmpty ? "seat \(self.seat + 1)" : String(self.playerID.prefix(8))
        }

        /// Creates a seat.
        public init(seat: Int, playerID: String, score: UInt16, isMe: Bool) {
            self.seat = seat
            self.playerID = playerID
            self.score = score
            self.isMe = isMe
        }
    }

    /// A disk that can be hit.
    public struct LiveDisk: Sendable, Hashable {
        /// The disk.
        public var disk: DisksDisk
        /// The key that taps it in a terminal; `nil` when every key is taken.
        public var key: Character?
    }

    /// A disk some player hit, spinning away.
    public struct HitDisk: Sendable, Hashable {
        /// The disk.
        public var disk: DisksDisk
        /// The key it had.
        public var key: Character?
        /// The hitter's seat.
        public var seat: Int
        /// The server time of the TICK that reported the hit, in nanoseconds.
        public var hitAt: UInt64
    }

    /// The keys ``LiveDisk/key`` takes by default: a to z without q (which quits).
    public static let defaultKeys = Array("abcdefghijklmnoprstuvwxyz")

    /// The local player's id, to find its seat.
    public let myPlayerID: String
    /// How long, in server nanoseconds, a hit disk stays in ``hitDisks``.
    public let fadeNanoseconds: UInt64
    /// The keys handed to disks, in turn.
    public let keys: [Character]

    /// Where the game is.
    public private(set) var phase: Phase = .joining
    /// The disks that can be hit, oldest first (newer ones are drawn on top).
    public private(set) var liveDisks: [LiveDisk] = []
    /// Disks hit less than ``fadeNanoseconds`` ago, oldest hit first (none after GAME_OVER).
    public private(set) var hitDisks: [HitDisk] = []
    /// Every seat, in seat order (index = seat).
    public private(set) var players: [Player] = []
    /// The aliases the app has told the view, by player id: a seat takes its player's when
    /// the player is seated, before or after.
    public private(set) var aliases: [String: String] = [:]
    /// The score that wins at once (0 until STATE).
    public private(set) var scoreLimit: UInt16 = 0
    /// Milliseconds until the time limit, as of the last STATE or TICK.
    public private(set) var timeLeftMilliseconds: UInt32 = 0
    /// The number of the last tick reported.
    public private(set) var tick: UInt32 = 0
    /// The server's monotonic time of the last STATE or TICK, in nanoseconds.
    public private(set) var serverTime: UInt64 = 0
    /// Why the game ended, once it has.
    public private(set) var gameOverReason: DisksGameOverReason?
    /// The winning seats (several on a tie, none if nobody scored).
    public private(set) var winners: [Int] = []
    /// The last TAP_MISSED this player got.
    public private(set) var lastMiss: DisksTapMissed?
    /// Why the match ended (MATCH_ENDED), once it has.
    public private(set) var matchEndReason: String?
    /// The hits reported so far, all seats together.
    public private(set) var hitCount = 0
    /// Where the next key is looked for: keys go round, so a key is not reused at once.
    private var nextKey = 0

    /// An empty view for player `myPlayerID`.
    /// - Parameters:
    ///   - keys: the keys to label disks with (default ``defaultKeys``).
    ///   - fade: how long a hit disk is kept for display, in server time (default 600 ms).
    public init(myPlayerID: String, keys: [Character] = DisksView.defaultKeys, fade: Duration = .milliseconds(600)) {
        self.myPlayerID = myPlayerID
        self.keys = keys
        let (seconds, attoseconds) = fade.components
        self.fadeNanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    // MARK: Questions

    /// The local player's seat, once listed.
    public var mySeat: Int? { self.players.firstIndex(where: \.isMe) }

    /// The local player, once listed.
    public var me: Player? { self.mySeat.map { self.players[$0] } }

    /// The winning players.
    public var winnerPlayers: [Player] {
        self.winners.compactMap { self.players.indices.contains($0) ? self.players[$0] : nil }
    }

    /// Whether the local player is among the winners.
    public var iWon: Bool { self.mySeat.map { self.winners.contains($0) } ?? false }

    /// The live disk tapped with `key`.
    public func liveDisk(forKey key: Character) -> LiveDisk? {
        self.liveDisks.first { $0.key == key }
    }

    /// The live disk with this id.
    public func liveDisk(id: UInt32) -> LiveDisk? {
        self.liveDisks.first { $0.disk.id == id }
    }

    /// How far along its spin a hit disk is: 0 when hit, 1 when it is gone.
    public func fadeProgress(of hit: HitDisk) -> Double {
        guard self.fadeNanoseconds > 0, self.serverTime > hit.hitAt else { return 0 }
        return min(1, Double(self.serverTime - hit.hitAt) / Double(self.fadeNanoseconds))
    }

    /// Where to tap to hit live disk `id`: its centre, unless a newer live disk covers that
    /// (the server gives a tap to the newest disk under it), then the point of the disk nearest
    /// its centre that no newer disk covers. `nil` when the disk is not live or wholly covered.
    public func aimPoint(forDisk id: UInt32) -> (x: UInt16, y: UInt16)? {
        guard let index = self.liveDisks.firstIndex(where: { $0.disk.id == id }) else { return nil }
        let disk = self.liveDisks[index].disk
        let newer = self.liveDisks[(index + 1)...].map(\.disk)
        func free(_ x: Int, _ y: Int) -> Bool {
            Self.covers(disk, x: x, y: y) && !newer.contains { Self.covers($0, x: x, y: y) }
        }
        let cx = Int(disk.x)
        let cy = Int(disk.y)
        if free(cx, cy) { return (disk.x, disk.y) }
        // Rings of 8 points, from near the centre out to just inside the edge.
        let radius = Double(disk.radius)
        for ring in 1...4 {
            let distance = radius * Double(ring) / 4.5
            for (dx, dy) in Self.directions {
                let x = cx + Int((distance * dx).rounded())
                let y = cy + Int((distance * dy).rounded())
                if x >= 0, y >= 0, x <= Int(UInt16.max), y <= Int(UInt16.max), free(x, y) {
                    return (UInt16(x), UInt16(y))
                }
            }
        }
        return nil
    }

    /// Whether the point is in the disk's circle (the server's rule: distance ≤ radius).
    public static func covers(_ disk: DisksDisk, x: Int, y: Int) -> Bool {
        let dx = x - Int(disk.x)
        let dy = y - Int(disk.y)
        let radius = Int(disk.radius)
        return dx * dx + dy * dy <= radius * radius
    }

    // MARK: Folding

    /// Folds one event in.
    public mutating func apply(_ event: DisksEvent) {
        switch event {
        case .message(let message):
            self.apply(message)
        case .presence(let playerID, let change, _):
            self.presence(of: playerID, change)
        case .matchEnded(let reason):
            self.matchEndReason = reason
            if self.phase != .over { self.liveDisks.removeAll() }
        }
    }

    /// Folds one server message in.
    public mutating func apply(_ message: DisksServerMessage) {
        switch message {
        case .state(let state):
            self.phase =
                switch state.phase {
                case .waiting: .waiting
                case .playing: .playing
                case .over: .over
                }
            self.tick = state.tick
            self.serverTime = state.serverTime
            self.timeLeftMilliseconds = state.timeLeftMilliseconds
            self.scoreLimit = state.scoreLimit
            self.setScores(state.scores)
            let known = self.liveDisks
            self.liveDisks = []
            for disk in state.disks {
                if let kept = known.first(where: { $0.disk.id == disk.id }) {
                    self.liveDisks.append(kept)
                } else {
                    self.addLive(disk)
                }
            }
            self.pruneHits()

        case .tick(let tick):
            if self.phase != .over { self.phase = .playing }
            self.tick = tick.tick
            self.serverTime = tick.serverTime
            self.timeLeftMilliseconds = tick.timeLeftMilliseconds
            for disk in tick.spawned { self.addLive(disk) }
            for hit in tick.hits { self.applyHit(hit) }
            if !tick.expired.isEmpty {
                self.liveDisks.removeAll { tick.expired.contains($0.disk.id) }
            }
            self.pruneHits()

        case .gameOver(let over):
            self.phase = .over
            self.gameOverReason = over.reason
            self.winners = over.winners.map(Int.init)
            self.timeLeftMilliseconds = over.reason == .timeLimit ? 0 : self.timeLeftMilliseconds
            self.setScores(over.scores)
            // No TICK comes any more to move the spinning disks on: the board is cleared.
            self.liveDisks.removeAll()
            self.hitDisks.removeAll()

        case .tapMissed(let missed):
            self.lastMiss = missed
        }
    }

    // MARK: Helpers

    private mutating func addLive(_ disk: DisksDisk) {
        self.liveDisks.append(LiveDisk(disk: disk, key: self.takeKey()))
    }

    /// The next key after the last one handed out that no live disk holds.
    private mutating func takeKey() -> Character? {
        guard !self.keys.isEmpty else { return nil }
        for offset in 0..<self.keys.count {
            let index = (self.nextKey + offset) % self.keys.count
            let key = self.keys[index]
            if !self.liveDisks.contains(where: { $0.key == key }) {
                self.nextKey = (index + 1) % self.keys.count
                return key
            }
        }
        return nil
    }

    private mutating func applyHit(_ hit: DisksHit) {
        self.hitCount += 1
        let seat = Int(hit.seat)
        self.ensureSeat(seat)
        self.players[seat].score = hit.score
        if let index = self.liveDisks.firstIndex(where: { $0.disk.id == hit.diskID }) {
            let live = self.liveDisks.remove(at: index)
            self.hitDisks.append(HitDisk(disk: live.disk, key: live.key, seat: seat, hitAt: self.serverTime))
        }
    }

    private mutating func pruneHits() {
        let now = self.serverTime
        let fade = self.fadeNanoseconds
        self.hitDisks.removeAll { now >= $0.hitAt && now - $0.hitAt >= fade }
    }

    /// Shows `playerID` by `alias` from now on (``Player/displayName``, ``scoreLines()``): what
    /// GET_PROFILE (``MatchHostClient/profile(of:)``) answered for it.
    public mutating func setAlias(_ alias: String, of playerID: String) {
        self.aliases[playerID] = alias
        for index in self.players.indices where self.players[index].playerID == playerID {
            self.players[index].alias = alias
        }
    }

    /// Takes every seat's id and score from a STATE or GAME_OVER, keeping what presence said.
    private mutating func setScores(_ scores: [DisksScore]) {
        for entry in scores {
            let seat = Int(entry.seat)
            self.ensureSeat(seat)
            self.players[seat].playerID = entry.playerID
            self.players[seat].alias = self.aliases[entry.playerID]
            self.players[seat].score = entry.score
            self.players[seat].isMe = entry.playerID == self.myPlayerID
        }
    }

    private mutating func ensureSeat(_ seat: Int) {
        while self.players.count <= seat {
            self.players.append(Player(seat: self.players.count, playerID: "", score: 0, isMe: false))
        }
    }

    /// PRESENCE: joins take the next seat (seats are given in join order), the others mark it.
    private mutating func presence(of playerID: String, _ change: NativePresenceChange) {
        var index = self.players.firstIndex { $0.playerID == playerID }
        if index == nil, change == .joined {
            // A seat that has scored before this view heard of its player, or a new one.
            index = self.players.firstIndex { $0.playerID.isEmpty }
            if index == nil {
                self.ensureSeat(self.players.count)
                index = self.players.count - 1
            }
            self.players[index!].playerID = playerID
            self.players[index!].alias = self.aliases[playerID]
            self.players[index!].isMe = playerID == self.myPlayerID
        }
        guard let index else { return }
        switch change {
        case .joined, .reconnected: self.players[index].isAway = false
        case .disconnected: self.players[index].isAway = true
        case .left: self.players[index].hasLeft = true
        }
    }

    /// Eight unit vectors, 45° apart.
    private static let directions: [(Double, Double)] = [
        (1, 0), (0.7071, 0.7071), (0, 1), (-0.7071, 0.7071), (-1, 0), (-0.7071, -0.7071), (0, -1), (0.7071, -0.7071),
    ]
}
