import NIOCore

/// Where a Disks game is.
public enum DisksPhase: UInt8, Sendable, Hashable, CaseIterable {
    /// Fewer players than the game needs are connected; nothing spawns.
    case waiting = 0
    /// Disks spawn and the clock runs.
    case playing = 1
    /// The game is decided; GAME_OVER has been sent.
    case over = 2
}

/// Why a Disks game ended.
public enum DisksGameOverReason: UInt8, Sendable, Hashable, CaseIterable {
    /// A player reached the score limit.
    case scoreLimit = 1
    /// The time limit ran out; the highest score wins.
    case timeLimit = 2
    /// The other players left; the one remaining wins.
    case opponentsLeft = 3
}

/// Why a tap hit nothing.
public enum DisksMissReason: UInt8, Sendable, Hashable, CaseIterable {
    /// No live disk covers the point.
    case noDisk = 1
    /// The disk there was already hit by another player (or by this one, earlier).
    case alreadyHit = 2
    /// The game is not being played (waiting for players, or over).
    case notPlaying = 3
}

/// One disk on the board. Wire: `u32 id`, `u16 x`, `u16 y`, `u16 radius`, `u8 color` (11 bytes).
public struct DisksDisk: Sendable, Hashable {
    /// The disk's id, unique within its match.
    public var id: UInt32
    /// The centre's x, in board units.
    public var x: UInt16
    /// The centre's y, in board units.
    public var y: UInt16
    /// The radius, in board units.
    public var radius: UInt16
    /// An index into the client's palette.
    public var color: UInt8

    /// The bytes one disk takes on the wire.
    public static let encodedSize = 11

    /// Creates a disk.
    public init(id: UInt32, x: UInt16, y: UInt16, radius: UInt16, color: UInt8) {
        self.id = id
        self.x = x
        self.y = y
        self.radius = radius
        self.color = color
    }

    init(decoding buffer: inout ByteBuffer) throws {
        self.id = try buffer.readWireInt(field: "disk id")
        self.x = try buffer.readNativeUInt16(field: "disk x")
        self.y = try buffer.readNativeUInt16(field: "disk y")
        self.radius = try buffer.readNativeUInt16(field: "disk radius")
        self.color = try buffer.readWireByte(field: "disk color")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireInt(self.id)
        buffer.writeNativeUInt16(self.x)
        buffer.writeNativeUInt16(self.y)
        buffer.writeNativeUInt16(self.radius)
        buffer.writeWireByte(self.color)
    }
}

/// A disk some player hit. Wire: `u32 diskId`, `u8 seat`, `u16 score` (7 bytes).
public struct DisksHit: Sendable, Hashable {
    /// The disk that was hit.
    public var diskID: UInt32
    /// The seat of the player who hit it.
    public var seat: UInt8
    /// That player's score with this hit counted.
    public var score: UInt16

    /// The bytes one hit takes on the wire.
    public static let encodedSize = 7

    /// Creates a hit.
    public init(diskID: UInt32, seat: UInt8, score: UInt16) {
        self.diskID = diskID
        self.seat = seat
        self.score = score
    }

    init(decoding buffer: inout ByteBuffer) throws {
        self.diskID = try buffer.readWireInt(field: "hit diskId")
        self.seat = try buffer.readWireByte(field: "hit seat")
        self.score = try buffer.readNativeUInt16(field: "hit score")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireInt(self.diskID)
        buffer.writeWireByte(self.seat)
        buffer.writeNativeUInt16(self.score)
    }
}

/// One seat's score. Wire: `u8 seat`, `str playerId`, `u16 score`.
public struct DisksScore: Sendable, Hashable {
    /// The seat (stable for the match's life).
    public var seat: UInt8
    /// The player in that seat.
    public var playerID: String
    /// The player's score.
    public var score: UInt16

    /// Creates an entry.
    public init(seat: UInt8, playerID: String, score: UInt16) {
        self.seat = seat
        self.playerID = playerID
        self.score = score
    }

    init(decoding buffer: inout ByteBuffer) throws {
        self.seat = try buffer.readWireByte(field: "score seat")
        self.playerID = try buffer.readNativeString(field: "score playerId", maximumLength: 255)
        self.score = try buffer.readNativeUInt16(field: "score value")
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.seat)
        buffer.writeNativeString(self.playerID)
        buffer.writeNativeUInt16(self.score)
    }
}

extension ByteBuffer {
    /// Reads a one-byte code and maps it to `Value`, or throws ``NativeWireError/invalidValue(field:value:)``.
    mutating func readDisksCode<Value: RawRepresentable<UInt8>>(_ type: Value.Type, field: String) throws -> Value {
        let raw = try self.readWireByte(field: field)
        guard let value = Value(rawValue: raw) else {
            throw NativeWireError.invalidValue(field: field, value: UInt64(raw))
        }
        return value
    }

    /// Reads a list: a `u8` count (named `countField` in errors), then that many elements.
    /// Field names are literals so that decoding builds no strings unless it fails.
    mutating func readDisksList<Element>(
        countField: String, _ element: (inout ByteBuffer) throws -> Element
    ) throws -> [Element] {
        let count = Int(try self.readWireByte(field: countField))
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count {
            elements.append(try element(&self))
        }
        return elements
    }

    /// Writes a list's `u8` count. More than 255 elements is a programming error.
    mutating func writeDisksCount(_ count: Int) {
        precondition(count <= Int(UInt8.max), "a Disks list holds at most 255 elements")
        self.writeWireByte(UInt8(count))
    }
}
