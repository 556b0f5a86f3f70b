import MatchHostWire
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A WebSocket client's half of the web port: masked binary messages out (one per write, or
/// the write cut into messages of ``messageSize`` bytes), their payloads in, as a byte stream.
/// Records the server's Close frame. Loop-confined.
final class TestWebSocketClientBridge: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    /// The status code of the server's Close frame, once it came (1005: it had none).
    let closeCode: NIOLockedValueBox<UInt16?>
    /// Cut each write into binary messages of at most this many bytes (nil: one message each).
    var messageSize: Int?
    private var context: ChannelHandlerContext?

    init(closeCode: NIOLockedValueBox<UInt16?>) {
        self.closeCode = closeCode
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        switch frame.opcode {
        case .binary, .continuation:
            context.fireChannelRead(Self.wrapInboundOut(frame.data))
        case .connectionClose:
            var data = frame.data
            let code = data.readInteger(as: UInt16.self) ?? 1005
            self.closeCode.withLockedValue { $0 = code }
        default:
            break
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var bytes = Self.unwrapOutboundIn(data)
        let size = self.messageSize ?? max(1, bytes.readableBytes)
        while bytes.readableBytes > size, let piece = bytes.readSlice(length: size) {
            context.write(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: piece)), promise: nil)
        }
        context.write(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: bytes)), promise: promise)
    }

    /// Writes `frame` as it is, past the bridge (a text message, an unmasked or oversized frame).
    func sendRaw(_ frame: WebSocketFrame) {
        self.context?.writeAndFlush(Self.wrapOutboundOut(frame), promise: nil)
    }
}

extension TestNativeConnection {
    /// Connects to the web port's `/native` WebSocket: the connection then works as a TCP one does.
    static func connectWebSocket(
        port: Int, group: any EventLoopGroup, path: String = "/native", tls: NIOSSLContext? = nil
    ) async throws -> TestNativeConnection {
        try await Self.connectWebSocketProbed(port: port, group: group, path: path, tls: tls).connection
    }

    /// ``connectWebSocket(port:group:path:)``, with what the test sees of the WebSocket itself.
    static func connectWebSocketProbed(
        port: Int, group: any EventLoopGroup, path: String = "/native", tls: NIOSSLContext? = nil
    ) async throws -> (connection: TestNativeConnection, probe: WebSocketProbe) {
        let closeCode = NIOLockedValueBox<UInt16?>(nil)
        let origin = "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)"
        let (channel, inbox) = try await openWebSocket(port: port, group: group, path: path, origin: origin, tls: tls) { channel in
            let inbox = Inbox { try NativeFrame(frameBody: $0) }
            try channel.pipeline.syncOperations.addHandlers([
                TestWebSocketClientBridge(closeCode: closeCode), ByteToMessageHandler(FrameDecoder(maximumBodySize: 1 << 20)), inbox,
            ])
            return NIOLoopBound(inbox, eventLoop: channel.eventLoop)
        }
        return (TestNativeConnection(channel: channel, inbox: inbox), WebSocketProbe(channel: channel, closeCode: closeCode))
    }
}

/// Opens a WebSocket to 127.0.0.1:`port` at `path`; once upgraded, `setUp` adds the handlers
/// that take its frames, on the channel's loop. Sends `Origin` as a browser would, if given.
func openWebSocket<Value: Sendable>(
    port: Int, group: any EventLoopGroup, path: String, origin: String?, tls: NIOSSLContext? = nil,
    setUp: @escaping @Sendable (any Channel) throws -> Value
) async throws -> (any Channel, Value) {
    let upgraded = group.next().makePromise(of: Value.self)
    let channel = try await ClientBootstrap(group: group)
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil)) }
                let upgrader = NIOWebSocketClientUpgrader(
                    maxFrameSize: 1 << 21, automaticErrorHandling: false,
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture { upgraded.succeed(try setUp(channel)) }
                    })
                try channel.pipeline.syncOperations.addHTTPClientHandlers(
                    withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
        }
        .connect(host: "127.0.0.1", port: port).get()
    var headers = HTTPHeaders([("Host", "127.0.0.1:\(port)"), ("Content-Length", "0")])
    if let origin { headers.add(name: "Origin", value: origin) }
    channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)), promise: nil)
    try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
    channel.closeFuture.whenComplete { _ in upgraded.fail(ChannelError.ioOnClosedChannel) }
    return (channel, try await upgraded.futureResult.get())
}

/// What a test sees of a WebSocket under a ``TestNativeConnection``.
struct WebSocketProbe: Sendable {
    let channel: any Channel
    /// The status code of the server's Close frame, nil until one came.
    let closeCode: NIOLockedValueBox<UInt16?>

    /// Writes `frame` as it is, past the bridge.
    func sendRaw(_ frame: WebSocketFrame) async throws {
        try await self.onBridge { $0.sendRaw(frame) }
    }

    /// From now on, writes are cut into binary messages of at most `size` bytes.
    func cutMessages(at size: Int) async throws {
        try await self.onBridge { $0.messageSize = size }
    }

    private func onBridge(_ body: @escaping @Sendable (TestWebSocketClientBridge) -> Void) async throws {
        let channel = self.channel
        try await channel.eventLoop.submit {
            body(try channel.pipeline.syncOperations.handler(type: TestWebSocketClientBridge.self))
        }.get()
    }
}
