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
/// message, then a Close frame and the close. A client's Ping gets its Pong; its Close is
/// answered with a Close, and the connection then closes as a dropped one (the session waits
/// for a resume: GOODBYE is how a client ends it).
final class NativeWebSocketBridge: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    /// The largest WebSocket frame payload taken: one largest native frame and its length prefix.
    let maximumFramePayload: Int
    private var sentClose = false
    private var isBroken = false

    init(maximumFramePayload: Int) {
        self.maximumFramePayload = maximumFramePayload
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
        case .binary, .continuation:
            context.fireChannelRead(Self.wrapInboundOut(frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(Self.wrapOutboundOut(pong), promise: nil)
        case .pong:
            break
        case .connectionClose:
            // Answered with its own status code, as RFC 6455 5.5.1 asks; then closed.
            var status = frame.unmaskedData
            let code = status.readSlice(length: min(2, status.readableBytes)) ?? context.channel.allocator.buffer(capacity: 0)
            self.sendClose(context: context, payload: code)
            context.close(promise: nil)
        case .text:
            self.refuse(context: context, NativeError(.badMessage, "the native protocol travels in binary WebSocket messages, not text"))
        default:
            self.refuse(context: context, NativeError(.badMessage, "unknown WebSocket opcode \(frame.opcode)"))
        }
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
