import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A load generator's connection to the web port (`bench native --websocket`): the HTTP
/// upgrade of `GET /native`, then the same native handler as over TCP, behind a bridge that
/// masks each write into one binary message and hands on the payloads of the server's
/// messages as a byte stream (PROTOCOL.md, Over a WebSocket).
enum BenchWebSocket {
    /// Sets `channel` up for the upgrade; `handler` is added once the server has accepted it
    /// (it then finds the channel active already).
    static func initialize(_ channel: any Channel, host: String, port: Int, handler: @escaping @Sendable () -> any ChannelHandler) throws {
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: 16 << 20, automaticErrorHandling: false,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([ClientBridge(), handler()])
                }
            })
        try channel.pipeline.syncOperations.addHTTPClientHandlers(withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try channel.pipeline.syncOperations.addHandler(UpgradeRequest(host: host, port: port))
    }

    /// Sends the upgrade request as the connection opens.
    private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let host: String
        let port: Int
        init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
        func channelActive(context: ChannelHandlerContext) {
            let headers = HTTPHeaders([("Host", "\(self.host):\(self.port)"), ("Content-Length", "0")])
            context.write(Self.wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/native", headers: headers))), promise: nil)
            context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
    }

    /// The client's half of the bridge: masked binary messages out, payloads in.
    private final class ClientBridge: ChannelDuplexHandler {
        typealias InboundIn = WebSocketFrame
        typealias InboundOut = ByteBuffer
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = WebSocketFrame

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = Self.unwrapInboundIn(data)
            switch frame.opcode {
            case .binary, .continuation: context.fireChannelRead(Self.wrapInboundOut(frame.data))
            case .connectionClose: context.close(promise: nil)
            default: break
            }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: Self.unwrapOutboundIn(data))
            context.write(Self.wrapOutboundOut(frame), promise: promise)
        }
    }
}
