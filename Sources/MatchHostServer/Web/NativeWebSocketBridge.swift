import MatchHostWire
import NIOCore
import NIOWebSocket

/// Carries the native protocol over a WebSocket: the payloads of the client's binary messages
/// are the byte stream a TCP client would send (length-prefixed frames), and everything the
/// server writes goes out as binary messages of that same stream.
///
/// Between the WebSocket codec and ``NativeConnectionHandler``, which so runs unchanged: it
/// still reads bytes and writes one gathered buffer per event-loop pass, which becomes one
/// WebSocket message (the buffer is not copied: the codec writes its header in front of it).
/// Message boundaries mean nothing to either side, so a client may send a frame in several
/// messages or several frames in one.
///
/// What is not the native protocol is bad input, answered as any other: ERROR
/// `BAD_MESSAGE` (or `FRAME_TOO_LARGE` for a WebSocket frame over its limit) inside a binary
/// message, then a Close frame and the close. A client's Ping gets its Pong (one per read,
/// for the latest Ping, as RFC 6455 5.5.3 allows, and none while the client is not reading).
/// Frames that bring no byte of the stream (Pings, Pongs, empty binary or continuation
/// frames) cost the server a frame each but are never charged by the native handler's pacing,
/// which counts native frames and bytes: together they may come at `--max-message-rate` (a
/// burst of one second's worth; over it: `RATE_LIMITED`). Its
/// Close is answered with a Close, and the connection then closes as a dropped one (the
/// session waits for a resume: GOODBYE is how a client ends it).
final class NativeWebSocketBridge: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    /// The largest WebSocket frame payload taken: one largest native frame and its length prefix.
    let maximumFramePayload: Int
    /// The allowance of frames that bring no byte of the stream.
    private var bareFrames: RateBucket
    /// The payload of the latest Ping not answered yet.
    private var pongDue: ByteBuffer?
    private var sentClose = false
    private var isBroken = false

    private let now: () -> NIODeadline

    /// - Parameters:
    ///   - bareFramesPerSecond: how many frames that bring no byte of the stream may come a second.
    ///   - now: the clock that allowance refills by (tests stop it).
    init(maximumFramePayload: Int, bareFramesPerSecond: Double, now: @escaping () -> NIODeadline = { .now() }) {
        self.maximumFramePayload = maximumFramePayload
        self.now = now
        self.bareFrames = .frames(perSecond: bareFramesPerSecond, now: now())
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.isBroken else { return }
        let frame = Self.unwrapInboundIn(data)
        if frame.maskKey == nil {
            return self.refuse(context: context, NativeError(.badMessage, "a client's WebSocket frames must be masked (RFC 6455 5.1)"))
        }
        if frame.rsv1 || frame.rsv2 || frame.rsv3 {
            return self.refuse(context: context, NativeError(.badMessage, "a WebSocket frame has reserved bits set, and no extension was agreed"))
        }
        switch frame.opcode {
        case .binary where frame.length > 0, .continuation where frame.length > 0:
            context.fireChannelRead(Self.wrapInboundOut(frame.unmaskedData))
        case .binary, .continuation, .ping, .pong:
            guard self.bareFrames.take(1, now: self.now()) else {
                return self.refuse(
                    context: context,
                    NativeError(
                        .rateLimited,
                        "more than \(self.bareFrames.rate) WebSocket frames a second that carry no native bytes (pings, pongs, empty messages; --max-message-rate)"
                    ))
            }
            if frame.opcode == .ping { self.pongDue = frame.unmaskedData }
        case .connectionClose:
            self.sendClose(context: context, payload: Self.closeReply(to: frame.unmaskedData, allocator: context.channel.allocator))
            context.close(promise: nil)
        case .text:
            self.refuse(context: context, NativeError(.badMessage, "the native protocol travels in binary WebSocket messages, not text"))
        default:
            self.refuse(context: context, NativeError(.badMessage, "unknown WebSocket opcode \(frame.opcode)"))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if let payload = self.pongDue {
            self.pongDue = nil
            // A client that does not read gets no more to hold.
            if context.channel.isWritable, !self.sentClose {
                context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: payload)), promise: nil)
            }
        }
        context.fireChannelReadComplete()
    }

    /// The Close that answers a client's: its own status code (RFC 6455 5.5.1), none if it
    /// gave none, 1002 (protocol error) for a code no endpoint may send or a 1-byte payload.
    static func closeReply(to payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var payload = payload
        var reply = allocator.buffer(capacity: 2)
        guard payload.readableBytes > 0 else { return reply }
        let code = payload.readInteger(as: UInt16.self) ?? 0
        let sendable = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
        reply.writeInteger(sendable ? code : 1002)
        return reply
    }

    /// Hands the native handler an error it answers with ERROR and the close.
    private func refuse(context: ChannelHandlerContext, _ error: NativeError) {
        self.isBroken = true
        context.fireErrorCaught(error)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? NIOWebSocketError else { return context.fireErrorCaught(error) }
        // The decoder stops at its first error: nothing after it can be read.
        self.isBroken = true
        switch error {
        case .invalidFrameLength:
            context.fireErrorCaught(
                NativeError(
                    .frameTooLarge,
                    "a WebSocket frame over the most one may carry, \(self.maximumFramePayload) bytes (--max-frame and a frame's length prefix)"))
        case .fragmentedControlFrame, .multiByteControlFrameLength:
            context.fireErrorCaught(NativeError(.badMessage, "a WebSocket control frame that is fragmented or over 125 bytes"))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = WebSocketFrame(fin: true, opcode: .binary, data: Self.unwrapOutboundIn(data))
        context.write(Self.wrapOutboundOut(frame), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all {
            // 1000: the reason, if any, went just before in an ERROR frame.
            var normal = context.channel.allocator.buffer(capacity: 2)
            normal.write(webSocketErrorCode: .normalClosure)
            self.sendClose(context: context, payload: normal)
        }
        context.close(mode: mode, promise: promise)
    }

    private func sendClose(context: ChannelHandlerContext, payload: ByteBuffer) {
        guard !self.sentClose else { return }
        self.sentClose = true
        context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)), promise: nil)
    }
}
