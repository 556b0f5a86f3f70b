import NIOCore

/// Type 8, both directions. C→S: `string inviterPlayerId`, "I accepted this player's invite".
/// S→C: `string readyPlayerId`, "this invitee has connected" (sent to the inviter).
public struct NotifyReady: CatRaceMessage {
    /// The type byte, 8.
    public static let type = CatRaceMessageType.notifyReady
    /// C→S: the inviter's id. S→C: the id of the invitee that is ready.
    public var playerID: String

    /// Creates the message.
    public init(playerID: String) {
        self.playerID = playerID
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.playerID = try buffer.readWireString(field: "playerId")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireString(self.playerID)
    }
}
