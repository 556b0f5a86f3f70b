import NIOCore

/// S→C type 2 `TICK`: what changed during one tick, one broadcast to every player.
///
/// Fields: `u32 tick`, `u64 serverTime` (ns: the tick's time on the server's monotonic clock),
/// `u32 timeLeftMs`, `u8 lists`, then only the lists whose bit is set in `lists`, in this order:
/// bit 0 `u8 count` × disk spawned, bit 1 `u8 count` × hit, bit 2 `u8 count` × `u32` expired
/// disk id. Other bits are 0 and readers ignore them. A tick with nothing to say is
/// 18 bytes with its type byte.
///
/// The server encodes one TICK per tick for all players, so encoding writes into the buffer
/// and allocates nothing else.
public struct DisksTick: Sendable, Hashable {
    /// Bits of the `lists` byte.
    enum ListBit {
        static let spawned: UInt8 = 1 << 0
        static let hits: UInt8 = 1 << 1
        static let expired: UInt8 = 1 << 2
    }

    /// The tick's number; consecutive while the game is played (skipped if the server fell behind).
    /// The TICK sent at once when a player reaches the score limit takes the next number.
    public var tick: UInt32
    /// The tick's time on the server's monotonic clock, in nanoseconds (for the score limit's
    /// TICK, the time of the winning tap).
    public var serverTime: UInt64
    /// Milliseconds until the time limit.
    public var timeLeftMilliseconds: UInt32
    /// Disks that appeared this tick.
    public var spawned: [DisksDisk]
    /// Disks hit since the previous tick, in the order the hits happened.
    public var hits: [DisksHit]
    /// Ids of disks that disappeared unhit this tick.
    public var expired: [UInt32]

    /// Creates the message.
    public init(
        tick: UInt32, serverTime: UInt64, timeLeftMilliseconds: UInt32, spawned: [DisksDisk] = [],
        hits: [DisksHit] = [], expired: [UInt32] = []
    ) {
        self.tick = tick
        self.serverTime = serverTime
        self.timeLeftMilliseconds = timeLeftMilliseconds
        self.spawned = spawned
        self.hits = hits
        self.expired = expired
    }

    /// Whether the tick only keeps time: no disk appeared, was hit or expired.
    public var isEmpty: Bool {
        self.spawned.isEmpty && self.hits.isEmpty && self.expired.isEmpty
    }

    /// The bytes of the fields, type byte not counted.
    public var encodedFieldsSize: Int {
        var size = 17
        if !self.spawned.isEmpty { size += 1 + self.spawned.count * DisksDisk.encodedSize }
        if !self.hits.isEmpty { size += 1 + self.hits.count * DisksHit.encodedSize }
        if !self.expired.isEmpty { size += 1 + self.expired.count * 4 }
        return size
    }

    /// Reads the fields after the type byte.
    /// - Throws: ``WireError`` for a truncated field.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.tick = try buffer.readWireInt(field: "tick tick")
        self.serverTime = try buffer.readNativeUInt64(field: "tick serverTime")
        self.timeLeftMilliseconds = try buffer.readWireInt(field: "tick timeLeftMs")
        let lists = try buffer.readWireByte(field: "tick lists")
        self.spawned =
            lists & ListBit.spawned == 0
            ? [] : try buffer.readDisksList(countField: "tick spawned count") { try DisksDisk(decoding: &$0) }
        self.hits =
            lists & ListBit.hits == 0
            ? [] : try buffer.readDisksList(countField: "tick hits count") { try DisksHit(decoding: &$0) }
        self.expired =
            lists & ListBit.expired == 0
            ? []
            : try buffer.readDisksList(countField: "tick expired count") {
                try $0.readWireInt(field: "tick expired id")
            }
    }

    /// Writes the fields after the type byte, reserving their exact size first so the buffer
    /// grows at most once.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: self.encodedFieldsSize)
        buffer.writeWireInt(self.tick)
        buffer.writeNativeUInt64(self.serverTime)
        buffer.writeWireInt(self.timeLeftMilliseconds)
        var lists: UInt8 = 0
        if !self.spawned.isEmpty { lists |= ListBit.spawned }
        if !self.hits.isEmpty { lists |= ListBit.hits }
        if !self.expired.isEmpty { lists |= ListBit.expired }
        buffer.writeWireByte(lists)
        if !self.spawned.isEmpty {
            buffer.writeDisksCount(self.spawned.count)
            for disk in self.spawned { disk.encode(into: &buffer) }
        }
        if !self.hits.isEmpty {
            buffer.writeDisksCount(self.hits.count)
            for hit in self.hits { hit.encode(into: &buffer) }
        }
        if !self.expired.isEmpty {
            buffer.writeDisksCount(self.expired.count)
            for id in self.expired { buffer.writeWireInt(id) }
        }
    }
}
