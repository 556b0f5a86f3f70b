import NIOCore

/// C→S type 2: start a race between these players. Body: `byte count`, then `count × string playerId`.
public struct StartMatch: CatRaceMessage {
    /// The type byte, 2.
    public static let type = CatRaceMessageType.startMatch
    /// The racers, in the order that gives them their index in the race.
    public var playerIDs: [String]

    /// Creates the message. At most 255 ids fit the count byte.
    public init(playerIDs: [String]) {
        precondition(playerIDs.count <= Int(UInt8.max), "START_MATCH holds at most 255 ids")
        self.playerIDs = playerIDs
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        let count = Int(try buffer.readWireByte(field: "count"))
        var ids: [String] = []
        ids.reserveCapacity(count)
        for index in 0..<count {
            ids.append(try buffer.readWireString(field: "playerId[\(index)]"))
        }
        self.playerIDs = ids
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(UInt8(self.playerIDs.count))
        for id in self.playerIDs {
            buffer.writeWireString(id)
        }
    }
}
