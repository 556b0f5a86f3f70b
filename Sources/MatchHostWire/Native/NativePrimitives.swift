import NIOCore

/// Field readers and writers of the native protocol: big-endian unsigned integers of 1, 2, 4
/// and 8 bytes, strings as a 2-byte byte count and UTF-8 bytes (no NUL), and byte blobs as a
/// 4-byte count and the bytes.
///
/// Blobs are read as slices of the frame (no copy), so a relayed payload travels from the
/// sender's read buffer to the recipients' frames with one copy at most.
extension ByteBuffer {
    /// Reads a 2-byte big-endian unsigned integer named `field` in errors.
    public mutating func readNativeUInt16(field: String) throws -> UInt16 {
        guard let value = self.readInteger(endianness: .big, as: UInt16.self) else {
            throw WireError.truncated(field: field, needed: 2, available: self.readableBytes)
        }
        return value
    }

    /// Reads an 8-byte big-endian unsigned integer named `field` in errors.
    public mutating func readNativeUInt64(field: String) throws -> UInt64 {
        guard let value = self.readInteger(endianness: .big, as: UInt64.self) else {
            throw WireError.truncated(field: field, needed: 8, available: self.readableBytes)
        }
        return value
    }

    /// Reads a native string: a 2-byte byte count, then that many bytes of UTF-8. Invalid UTF-8
    /// and control characters (U+0000-U+001F, U+007F-U+009F) are errors.
    public mutating func readNativeString(field: String, maximumLength: Int = 1024) throws -> String {
        let count = Int(try self.readNativeUInt16(field: "\(field) length"))
        guard count <= maximumLength else {
            throw WireError.stringTooLong(field: field, length: count, maximum: maximumLength)
        }
        guard let raw = self.readSlice(length: count) else {
            throw WireError.truncated(field: field, needed: count, available: self.readableBytes)
        }
        return try ByteBuffer.wireText(raw.readableBytesView, field: field)
    }

    /// Reads a native byte blob: a 4-byte count, then that many bytes, as a slice of this buffer.
    public mutating func readNativeBytes(field: String) throws -> ByteBuffer {
        let count = Int(try self.readWireInt(field: "\(field) length"))
        guard let slice = self.readSlice(length: count) else {
            throw WireError.truncated(field: field, needed: count, available: self.readableBytes)
        }
        return slice
    }

    /// Writes a 2-byte big-endian unsigned integer.
    public mutating func writeNativeUInt16(_ value: UInt16) {
        self.writeInteger(value, endianness: .big)
    }

    /// Writes an 8-byte big-endian unsigned integer.
    public mutating func writeNativeUInt64(_ value: UInt64) {
        self.writeInteger(value, endianness: .big)
    }

    /// Writes a native string; a control character goes as a space (``readNativeString(field:maximumLength:)``
    /// refuses them). Strings longer than 65,535 bytes are a programming error.
    public mutating func writeNativeString(_ value: String) {
        let value = value.withControlCharactersAsSpaces
        let count = value.utf8.count
        precondition(count <= Int(UInt16.max), "native strings hold at most 65,535 bytes")
        self.writeInteger(UInt16(count), endianness: .big)
        self.writeString(value)
    }

    /// Writes a native byte blob: its 4-byte count, then its readable bytes.
    public mutating func writeNativeBytes(_ value: ByteBuffer) {
        self.writeInteger(UInt32(value.readableBytes), endianness: .big)
        self.writeImmutableBuffer(value)
    }
}
