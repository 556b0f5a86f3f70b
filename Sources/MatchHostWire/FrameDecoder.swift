import NIOCore

/// Splits a byte stream into frames: a 4-byte big-endian body length (not counting
/// itself) followed by that many bytes of body.
///
/// The length is checked against ``maximumBodySize`` as soon as its 4 bytes have
/// arrived, so a peer announcing a huge frame is refused before any of it is buffered.
/// Unlike the Cat Race tutorial's server and client, which compared the buffer with
/// the body length alone, a frame is produced only once all `4 + N` bytes are here.
///
/// ```swift
/// var decoder = FrameDecoder(maximumBodySize: 64 * 1024)
/// while let body = try decoder.decode(buffer: &cumulation) { handle(body) }
/// ```
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder, Sendable {
    /// A frame body: the message type byte and its fields.
    public typealias InboundOut = ByteBuffer

    /// The default limit on a frame body, 64 KiB.
    public static let defaultMaximumBodySize = 64 * 1024

    /// The largest body accepted, in bytes.
    public let maximumBodySize: Int

    /// Creates a decoder that refuses bodies over `maximumBodySize` bytes.
    public init(maximumBodySize: Int = FrameDecoder.defaultMaximumBodySize) {
        precondition(maximumBodySize >= 0, "maximumBodySize must not be negative")
        self.maximumBodySize = maximumBodySize
    }

    /// Returns the next complete frame body, `nil` when more bytes are needed.
    /// - Throws: ``WireError/frameTooLarge(length:maximum:)`` when the announced body is over the limit.
    public func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, endianness: .big, as: UInt32.self) else {
            return nil
        }
        guard UInt64(length) <= UInt64(self.maximumBodySize) else {
            throw WireError.frameTooLarge(length: length, maximum: self.maximumBodySize)
        }
        guard buffer.readableBytes >= 4 + Int(length) else {
            return nil
        }
        buffer.moveReaderIndex(forwardBy: 4)
        return buffer.readSlice(length: Int(length))
    }

    /// Decodes what is left at end of stream; a partial frame there is simply dropped,
    /// since the peer has gone and nobody is left to tell.
    public func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        try self.decode(buffer: &buffer)
    }
}

extension ByteBuffer {
    /// Writes one frame: reserves the 4-byte length, lets `body` write the body, then
    /// fills the length in. Returns the number of bytes written, length included.
    @discardableResult
    public mutating func writeFrame(_ body: (inout ByteBuffer) -> Void) -> Int {
        let start = self.writerIndex
        self.writeInteger(UInt32(0), endianness: .big)
        body(&self)
        let bodyLength = self.writerIndex - start - 4
        self.setInteger(UInt32(bodyLength), at: start, endianness: .big)
        return bodyLength + 4
    }
}
