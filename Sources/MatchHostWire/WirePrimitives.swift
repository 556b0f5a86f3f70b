import NIOCore

/// Readers and writers for the primitive field types shared by both protocols:
/// a byte, a 4-byte big-endian integer, and a string (4-byte byte count, then the bytes).
///
/// Strings are read with or without one trailing NUL (the tutorial's iOS client
/// counts and sends a NUL; other clients need not), and always written with one
/// trailing NUL counted in the length, because the iOS client reads strings with
/// `stringWithCString` and would otherwise run past the end of the frame.
extension ByteBuffer {
    /// The longest string, in bytes and without its NUL, that a protocol field accepts by default.
    public static let wireStringDefaultMaximum = 255

    /// Reads one unsigned byte named `field` in errors.
    public mutating func readWireByte(field: String) throws -> UInt8 {
        guard let value = self.readInteger(as: UInt8.self) else {
            throw WireError.truncated(field: field, needed: 1, available: self.readableBytes)
        }
        return value
    }

    /// Reads one 4-byte big-endian unsigned integer named `field` in errors.
    public mutating func readWireInt(field: String) throws -> UInt32 {
        guard let value = self.readInteger(endianness: .big, as: UInt32.self) else {
            throw WireError.truncated(field: field, needed: 4, available: self.readableBytes)
        }
        return value
    }

    /// Reads a length-prefixed UTF-8 string, dropping one trailing NUL if present. Invalid
    /// UTF-8 and control characters (U+0000-U+001F, U+007F-U+009F) are errors.
    /// - Parameters:
    ///   - field: the field's name, for errors.
    ///   - maximumLength: the longest accepted string in bytes, the trailing NUL not counted.
    public mutating func readWireString(field: String, maximumLength: Int = wireStringDefaultMaximum) throws -> String {
        let count = Int(try self.readWireInt(field: "\(field) length"))
        // A NUL may come on top of the maximum; check before reading so a huge count costs nothing.
        guard count <= maximumLength + 1 else {
            throw WireError.stringTooLong(field: field, length: count, maximum: maximumLength)
        }
        guard let bytes = self.readSlice(length: count) else {
            throw WireError.truncated(field: field, needed: count, available: self.readableBytes)
        }
        var length = count
        if length > 0, bytes.getInteger(at: bytes.readerIndex + length - 1, as: UInt8.self) == 0 {
            length -= 1
        }
        guard length <= maximumLength else {
            throw WireError.stringTooLong(field: field, length: length, maximum: maximumLength)
        }
        return try Self.wireText(bytes.readableBytesView.prefix(length), field: field)
    }

    /// The string `raw` holds: valid UTF-8 without control characters, or the error saying
    /// which of the two it is not. Both protocols' string readers end here.
    static func wireText(_ raw: ByteBufferView, field: String) throws -> String {
        // String(decoding:) repairs bad sequences with U+FFFD; a repaired string no longer
        // matches its bytes, which is how invalid UTF-8 is caught without a newer-OS-only API.
        let string = String(decoding: raw, as: UTF8.self)
        guard string.utf8.elementsEqual(raw) else {
            throw WireError.invalidUTF8(field: field)
        }
        guard !string.unicodeScalars.contains(where: \.isWireControl) else {
            throw WireError.controlCharacter(field: field)
        }
        return string
    }

    /// Writes one unsigned byte.
    public mutating func writeWireByte(_ value: UInt8) {
        self.writeInteger(value)
    }

    /// Writes one 4-byte big-endian unsigned integer.
    public mutating func writeWireInt(_ value: UInt32) {
        self.writeInteger(value, endianness: .big)
    }

    /// Writes a string as its UTF-8 byte count plus one, the bytes, and a NUL. A control
    /// character goes as a space (``readWireString(field:maximumLength:)`` refuses them).
    public mutating func writeWireString(_ value: String) {
        let value = value.withControlCharactersAsSpaces
        self.writeInteger(UInt32(value.utf8.count + 1), endianness: .big)
        self.writeString(value)
        self.writeInteger(UInt8(0))
    }
}

extension String {
    /// This string with each control character (U+0000-U+001F, U+007F-U+009F) made a space:
    /// the string writers send it so, as the readers refuse them (an error text quoting a
    /// multi-line description is still readable, and still a valid message).
    var withControlCharactersAsSpaces: String {
        guard self.unicodeScalars.contains(where: \.isWireControl) else { return self }
        return String(String.UnicodeScalarView(self.unicodeScalars.map { $0.isWireControl ? " " : $0 }))
    }
}

extension Unicode.Scalar {
    /// Whether this is a control character no string on the wire may hold: C0
    /// (U+0000-U+001F), DEL and C1 (U+007F-U+009F). What both readers refuse and both writers
    /// replace.
    var isWireControl: Bool { self.value < 0x20 || (0x7F...0x9F).contains(self.value) }
}
