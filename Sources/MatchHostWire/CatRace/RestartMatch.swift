import NIOCore

/// C→S type 7: race again after a win. Empty body.
public struct RestartMatch: CatRaceMessage {
    /// The type byte, 7.
    public static let type = CatRaceMessageType.restartMatch

    /// Creates the message.
    public init() {}

    /// Reads the (absent) fields.
    public init(decodingFields buffer: inout ByteBuffer) throws {}

    /// Writes nothing: the message has no fields.
    public func encodeFields(into buffer: inout ByteBuffer) {}
}
