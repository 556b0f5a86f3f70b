import NIOCore

/// Collects bytes from reads and hands out whole frame bodies, holding no buffer while idle.
///
/// A connection's reads append here; ``nextFrame()`` returns bodies as ``FrameDecoder``
/// finds them. Once everything buffered has been consumed the buffer is released, so an idle
/// connection costs no memory for it (unlike NIO's `ByteToMessageHandler`, which keeps its
/// cumulation buffer). Used by the server's connection handlers and by clients.
///
/// ```swift
/// accumulator.append(&incoming)
/// while let body = try accumulator.nextFrame() { handle(body) }
/// ```
public struct FrameAccumulator {
    /// The framing rules, including the maximum body size.
    public let decoder: FrameDecoder
    private var buffer: ByteBuffer?

    /// Creates an accumulator refusing bodies over `maximumBodySize` bytes.
    public init(maximumBodySize: Int = FrameDecoder.defaultMaximumBodySize) {
        self.decoder = FrameDecoder(maximumBodySize: maximumBodySize)
    }

    /// Bytes received but not yet handed out as frames.
    public var bufferedBytes: Int { self.buffer?.readableBytes ?? 0 }

    /// Adds the bytes of one read. Takes the buffer as is when nothing is pending (no copy).
    public mutating func append(_ bytes: inout ByteBuffer) {
        if self.buffer == nil || self.buffer!.readableBytes == 0 {
            self.buffer = bytes
        } else {
            self.buffer!.writeBuffer(&bytes)
        }
    }

    /// The next whole frame body, or `nil` until more bytes arrive.
    /// - Throws: ``WireError/frameTooLarge(length:maximum:)`` as soon as a length over the maximum is seen.
    public mutating func nextFrame() throws -> ByteBuffer? {
        guard self.buffer != nil else { return nil }
        if let body = try self.decoder.decode(buffer: &self.buffer!) {
            return body
        }
        if self.buffer!.readableBytes == 0 {
            self.buffer = nil
        } else if self.buffer!.readerIndex > 4096 {
            self.buffer!.discardReadBytes()
        }
        return nil
    }

    /// Drops whatever is buffered (the connection is closing).
    public mutating func reset() {
        self.buffer = nil
    }
}
