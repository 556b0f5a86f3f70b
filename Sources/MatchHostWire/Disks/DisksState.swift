import NIOCore

/// S→C type 1 `STATE`: the whole game, for a player who joins or comes back (and for everyone
/// when play starts).
///
/// Fields: `u8 phase`, `u32 tick`, `u64 serverTime` (ns, the server's monotonic clock),
/// `u32 timeLeftMs`, `u16 scoreLimit`, `u16 boardWidth`, `u16 boardHeight`,
/// `u8 count` × disk (the live, unhit disks, oldest first), `u8 count` × score (every seat).
public struct DisksState: Sendable, Hashable {
    /// Where the game is.
    public var phase: DisksPhase
    /// The number of the last tick run.
    public var tick: UInt32
    /// The server's monotonic time when this was sent, in nanoseconds.
    public var serverTime: UInt64
    /// Milliseconds until the time limit (the whole limit while waiting, 0 once over).
    public var timeLeftMilliseconds: UInt32
    /// The score that wins at once.
    public var scoreLimit: UInt16
    /// The board's width in board units.
    public var boardWidth: UInt16
    /// The board's height in board units.
    public var boardHeight: UInt16
    /// The disks that can be hit now, oldest first (later ones are drawn on top).
    public var disks: [DisksDisk]
    /// Every seat's player and score, in seat order.
    public var scores: [DisksScore]

    /// Creates the message.
    public init(
        phase: DisksPhase, tick: UInt32, serverTime: UInt64, timeLeftMilliseconds: UInt32, scoreLimit: UInt16,
        boardWidth: UInt16 = DisksBoard.width, boardHeight: UInt16 = DisksBoard.height, disks: [DisksDisk],
        scores: [DisksScore]
    ) {
        self.phase = phase
        self.tick = tick
        self.serverTime = serverTime
        self.timeLeftMilliseconds = timeLeftMilliseconds
        self.scoreLimit = scoreLimit
        self.boardWidth = boardWidth
        self.boardHeight = boardHeight
        self.disks = disks
        self.scores = scores
    }

    /// Reads the fields after the type byte.
    /// - Throws: ``WireError`` for a truncated field, ``NativeWireError`` for an unknown phase.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.phase = try buffer.readDisksCode(DisksPhase.self, field: "state phase")
        self.tick = try buffer.readWireInt(field: "state tick")
        self.serverTime = try buffer.readNativeUInt64(field: "state serverTime")
        self.timeLeftMilliseconds = try buffer.readWireInt(field: "state timeLeftMs")
        self.scoreLimit = try buffer.readNativeUInt16(field: "state scoreLimit")
        self.boardWidth = try buffer.readNativeUInt16(field: "state boardWidth")
        self.boardHeight = try buffer.readNativeUInt16(field: "state boardHeight")
        self.disks = try buffer.readDisksList(countField: "state disks count") { try DisksDisk(decoding: &$0) }
        self.scores = try buffer.readDisksList(countField: "state scores count") { try DisksScore(decoding: &$0) }
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.phase.rawValue)
        buffer.writeWireInt(self.tick)
        buffer.writeNativeUInt64(self.serverTime)
        buffer.writeWireInt(self.timeLeftMilliseconds)
        buffer.writeNativeUInt16(self.scoreLimit)
        buffer.writeNativeUInt16(self.boardWidth)
        buffer.writeNativeUInt16(self.boardHeight)
        buffer.writeDisksCount(self.disks.count)
        for disk in self.disks { disk.encode(into: &buffer) }
        buffer.writeDisksCount(self.scores.count)
        for score in self.scores { score.encode(into: &buffer) }
    }
}
