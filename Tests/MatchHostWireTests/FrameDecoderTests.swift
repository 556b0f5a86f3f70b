import MatchHostWire
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@Suite struct FrameDecoderTests {
    private func frame(_ body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeFrame { $0.writeBytes(body) }
        return buffer
    }

    @Test func verifierDripFeedsAndBatchesFrames() throws {
        // The verifier feeds the input whole, byte by byte and in other splits, and checks
        // that the same frames come out every time.
        let bodies: [[UInt8]] = [[1], [4, 0, 0, 1, 0xBD], [], Array(repeating: 7, count: 300), [8, 0, 0, 0, 1, 65]]
        var input = ByteBuffer()
        for body in bodies { input.writeFrame { $0.writeBytes(body) } }
        let expected = bodies.map { ByteBuffer(bytes: $0) }
        #expect(throws: Never.self) {
            try ByteToMessageDecoderVerifier.verifyDecoder(
                inputOutputPairs: [(input, expected)],
                decoderFactory: { FrameDecoder(maximumBodySize: 1024) })
        }
    }

    @Test func manyFramesInOneReadThroughAChannel() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder()))
        var input = ByteBuffer()
        for index in 0..<50 { input.writeFrame { $0.writeBytes([4, 0, 0, 0, UInt8(index)]) } }
        try channel.writeInbound(input)
        for index in 0..<50 {
            let body = try #require(try channel.readInbound(as: ByteBuffer.self))
            #expect(Array(body.readableBytesView) == [4, 0, 0, 0, UInt8(index)])
        }
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test func waitsForTheWholeFrameNotJustTheBodyLength() throws {
        // The tutorial compared the buffer with N instead of 4 + N, so a frame missing its
        // last 4 bytes or fewer was processed truncated. Here it must wait.
        let decoder = FrameDecoder()
        var whole = self.frame([0, 0, 0, 0, 5, 71, 58, 49, 0, 9])
        var partial = whole.readSlice(length: whole.readableBytes - 3)!
        #expect(try decoder.decode(buffer: &partial) == nil)
        #expect(partial.readerIndex == 0)
    }

    @Test func refusesAHugeLengthBeforeBufferingTheBody() {
        var buffer = ByteBuffer(bytes: [0x7F, 0xFF, 0xFF, 0xFF])
        #expect(throws: WireError.frameTooLarge(length: 0x7FFF_FFFF, maximum: 65536)) {
            _ = try FrameDecoder().decode(buffer: &buffer)
        }
    }

    @Test func enforcesTheConfiguredMaximumExactly() throws {
        let decoder = FrameDecoder(maximumBodySize: 16)
        var atLimit = self.frame(Array(repeating: 1, count: 16))
        #expect(try decoder.decode(buffer: &atLimit)?.readableBytes == 16)
        var overLimit = ByteBuffer(bytes: [0, 0, 0, 17])
        #expect(throws: WireError.frameTooLarge(length: 17, maximum: 16)) {
            _ = try decoder.decode(buffer: &overLimit)
        }
    }

    @Test func errorsThroughAChannelAreTyped() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(maximumBodySize: 8)))
        #expect(throws: WireError.frameTooLarge(length: 9, maximum: 8)) {
            try channel.writeInbound(ByteBuffer(bytes: [0, 0, 0, 9, 1]))
        }
        _ = try? channel.finish()
    }
}

@Suite struct FrameAccumulatorTests {
    @Test func reassemblesFramesSplitAnywhereAndHoldsNothingWhenDrained() throws {
        var stream = ByteBuffer()
        for index in 0..<20 { stream.writeFrame { $0.writeBytes([4, 0, 0, 0, UInt8(index)]) } }
        var accumulator = FrameAccumulator(maximumBodySize: 64)
        var bodies: [[UInt8]] = []
        // Feed in chunks of 7 bytes: frames (9 bytes each) straddle every read.
        while stream.readableBytes > 0 {
            var chunk = stream.readSlice(length: min(7, stream.readableBytes))!
            accumulator.append(&chunk)
            while let body = try accumulator.nextFrame() { bodies.append(Array(body.readableBytesView)) }
        }
        #expect(bodies == (0..<20).map { [4, 0, 0, 0, UInt8($0)] })
        #expect(accumulator.bufferedBytes == 0)
    }

    @Test func keepsAPartialFrameAndRefusesAnOversizedOne() throws {
        var accumulator = FrameAccumulator(maximumBodySize: 8)
        var partial = ByteBuffer(bytes: [0, 0, 0, 5, 4, 0])
        accumulator.append(&partial)
        #expect(try accumulator.nextFrame() == nil)
        #expect(accumulator.bufferedBytes == 6)
        var rest = ByteBuffer(bytes: [0, 0, 35, 0, 0, 0, 9])
        accumulator.append(&rest)
        #expect(try accumulator.nextFrame().map { Array($0.readableBytesView) } == [4, 0, 0, 0, 35])
        #expect(throws: WireError.frameTooLarge(length: 9, maximum: 8)) { _ = try accumulator.nextFrame() }
    }
}
