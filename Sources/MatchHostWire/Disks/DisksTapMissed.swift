import NIOCore

/// S→C type 4 `TAP_MISSED`, to the tapper only: its tap hit nothing.
/// Fields: `u16 x`, `u16 y` (the tap as sent), `u8 reason` (``DisksMissReason``).
public struct DisksTapMissed: Sendable, Hashable {
    /// The tap's x.
    public var x: UInt16
    /// The tap's y.
    public var y: UInt16
    /// Why it missed.
    public var reason: DisksMissReason

    /// Creates the message.
    public init(x: UInt16, y: UInt16, reason: DisksMissReason) {
        self.x = x
        self.y = y
        self.reason = reason
    }

    /// Reads the fields after the type byte.
    /// - Throws: ``WireError`` for a truncated field, ``NativeWireError`` for an unknown reason.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.x = try buffer.readNativeUInt16(field: "tapMissed x")
        self.y = try buffer.readNativeUInt16(field: "tapMissed y")
        self.reason = try buffer.readDisksCode(DisksMissReason.self, field: "tapMissed reason")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt16(self.x)
        buffer.writeNativeUInt16(self.y)
        buffer.writeWireByte(self.reason.rawValue)
    }
}
