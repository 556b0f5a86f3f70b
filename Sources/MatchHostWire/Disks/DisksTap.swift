import NIOCore

/// C→S type 1 `TAP`: the player touched the board. Fields: `u16 x`, `u16 y`, in board units
/// (``DisksBoard``; origin top-left). Points off the board are read as they are and simply hit nothing.
public struct DisksTap: Sendable, Hashable {
    /// The point's x.
    public var x: UInt16
    /// The point's y.
    public var y: UInt16

    /// Creates a tap.
    public init(x: UInt16, y: UInt16) {
        self.x = x
        self.y = y
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.x = try buffer.readNativeUInt16(field: "tap x")
        self.y = try buffer.readNativeUInt16(field: "tap y")
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeNativeUInt16(self.x)
        buffer.writeNativeUInt16(self.y)
    }
}
