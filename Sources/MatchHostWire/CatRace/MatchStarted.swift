import NIOCore

/// S→C type 3: the full state of the player's race.
/// Body: `byte matchState`, `byte count`, then `count × { string playerId, string alias, int posX }`.
public struct MatchStarted: CatRaceMessage {
    /// The type byte, 3.
    public static let type = CatRaceMessageType.matchStarted

    /// The race's state byte: `MATCH_STATE_ACTIVE = 0`, `MATCH_STATE_GAME_OVER = 1`.
    public enum State: UInt8, Sendable, Hashable {
        /// Racers may move.
        case active = 0
        /// Someone has won; only RESTART_MATCH does anything.
        case gameOver = 1
    }

    /// One racer as the client draws it.
    public struct Racer: Sendable, Hashable {
        /// The racer's player id.
        public var playerID: String
        /// The racer's display name.
        public var alias: String
        /// The racer's x position.
        public var posX: UInt32

        /// Creates a racer entry.
        public init(playerID: String, alias: String, posX: UInt32) {
            self.playerID = playerID
            self.alias = alias
            self.posX = posX
        }
    }

    /// The state of the race.
    public var state: State
    /// The racers in index order.
    public var racers: [Racer]

    /// Creates the message.
    public init(state: State, racers: [Racer]) {
        self.state = state
        self.racers = racers
    }

    /// Reads the fields after the type byte. An unknown state byte is read as game over,
    /// the state in which a client cannot move.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.state = State(rawValue: try buffer.readWireByte(field: "matchState")) ?? .gameOver
        let count = Int(try buffer.readWireByte(field: "count"))
        var racers: [Racer] = []
        racers.reserveCapacity(count)
        for index in 0..<count {
            let id = try buffer.readWireString(field: "players[\(index)].playerId")
            let alias = try buffer.readWireString(field: "players[\(index)].alias")
            let x = try buffer.readWireInt(field: "players[\(index)].posX")
            racers.append(Racer(playerID: id, alias: alias, posX: x))
        }
        self.racers = racers
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.state.rawValue)
        buffer.writeWireByte(UInt8(self.racers.count))
        for racer in self.racers {
            buffer.writeWireString(racer.playerID)
            buffer.writeWireString(racer.alias)
            buffer.writeWireInt(racer.posX)
        }
    }
}
