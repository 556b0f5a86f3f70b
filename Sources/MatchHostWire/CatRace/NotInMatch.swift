import NIOCore

/// S→C type 1: the player is in no match; the client goes back to matchmaking. Empty body.
public struct NotInMatch: CatRaceMessage {
    /// The type byte, 1.
    public static let type = CatRaceMessageType.notInMatch

    /// Creates the message.
    public init() {}

    /// Reads the (absent) fields.
    public init(decodingFields buffer: inout ByteBuffer) throws {}

    /// Writes nothing: the message has no fields.
    public func encodeFields(into buffer: inout ByteBuffer) {}
}
