import NIOCore

/// S→C type 3 MOVE_REFUSED, only to the mover: its MOVE was not played. Body:
/// `u16 moveNumber` (as the MOVE had it), `u8 reason`, `str text`.
public struct FourInARowMoveRefused: FourInARowMessage {
    /// The type byte, 3.
    public static let type: UInt8 = 3
    /// The longest `text` accepted, in bytes.
    public static let maximumTextLength = 1024

    /// The move number the refused MOVE carried.
    public var moveNumber: UInt16
    /// Why it was refused.
    public var reason: FourInARowRefusalReason
    /// The reason in words, for logs and developers; clients should go by ``reason``.
    public var text: String

    /// Creates the message.
    public init(moveNumber: UInt16, reason: FourInARowRefusalReason, text: String) {
        self.moveNumber = moveNumber
        self.reason = reason
        self.text = text
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.moveNumber = try buffer.readNativeUInt16(field: "moveNumber")
        self.reason = try buffer.readFourInARowCode(FourInARowRefusalReason.self, field: "reason")
        self.text = try buffer.readNativeString(field: "text", maximumLength: Self.maximumTextLength)
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt16(self.moveNumber)
        buffer.writeWireByte(self.reason.rawValue)
        buffer.writeNativeString(self.text)
    }
}
