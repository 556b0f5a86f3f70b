import NIOCore

/// C→S type 0: a client introduces itself. Body: `string playerId`, `string alias`, `byte continueMatch`.
public struct PlayerConnected: CatRaceMessage {
    /// The type byte, 0.
    public static let type = CatRaceMessageType.playerConnected
    /// The player's id (a Game Center id in the tutorial). Not authenticated by this protocol.
    public var playerID: String
    /// The display name.
    public var alias: String
    /// Whether to resume a match this player is in (`true`) or to quit it (`false`).
    public var continueMatch: Bool

    /// Creates the message.
    public init(playerID: String, alias: String, continueMatch: Bool) {
        self.playerID = playerID
        self.alias = alias
        self.continueMatch = continueMatch
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.playerID = try buffer.readWireString(field: "playerId")
        self.alias = try buffer.readWireString(field: "alias")
        self.continueMatch = try buffer.readWireByte(field: "continueMatch") != 0
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireString(self.playerID)
        buffer.writeWireString(self.alias)
        buffer.writeWireByte(self.continueMatch ? 1 : 0)
    }
}
