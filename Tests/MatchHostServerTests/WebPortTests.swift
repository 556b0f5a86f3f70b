import Foundation
import Logging
import MatchHostProcessTesting
import MatchHostServer
import MatchHostWire
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOWebSocket
import Testing

@testable import MatchHostServer

/// A native server with its web port on 127.0.0.1, port 0.
private func startWithWebPort(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> (RunningNativeServer, Int) {
    let server = try await RunningNativeServer.start { configuration in
        configuration.webPort = 0
        configure(&configuration)
    }
    return (server, try #require(server.listener.webAddress?.port))
}

/// Logs in over the web port's WebSocket.
private func webLogin(port: Int, group: any EventLoopGroup, device: String) async throws -> (TestNativeConnection, NativeAuthenticated) {
    let connection = try await TestNativeConnection.connectWebSocket(port: port, group: group)
    try await connection.send(.hello(version: 1, gameID: "matchhost"))
    guard case .welcome = try await connection.next() else { throw TestClientError.unexpected("no WELCOME") }
    try await connection.send(.authenticate(.device(id: device, secret: "")))
    guard case .authenticated(let authenticated) = try await connection.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
    return (connection, authenticated)
}

@Suite struct WebPortTests {
    /// A browser's player and a TCP player meet in one match: the web port's connections are
    /// native connections of the same world, whatever cuts the stream into messages.
    @Test func aWebSocketPlayerAndATCPPlayerPlayInOneMatch() async throws {
        let (server, web) = try await startWithWebPort()
        let (alice, aliceID) = try await webLogin(port: web, group: server.group, device: "web-alice")
        let (bob, bobID) = try await server.login("tcp-bob")

        let created = try #require(try await alice.response(to: try await alice.request(.createMatch(mode: "relay", maxPlayers: 2, label: "web"))).joined)
        #expect(try await bob.response(to: try await bob.request(.joinMatch(created.matchID))).joined?.players.count == 2)
        #expect(try await alice.nextMessage() == .presence(matchID: created.matchID, playerID: bobID.playerID, change: .joined, reason: .none))

        try await bob.sendReliable(.sendData(matchID: created.matchID, targets: [], payload: ByteBuffer(string: "from tcp")))
        #expect(try await alice.nextMessage() == .matchData(matchID: created.matchID, sender: bobID.playerID, payload: ByteBuffer(string: "from tcp")))

        // Two frames in one WebSocket message, then frames cut into messages of 3 bytes: the
        // payloads are one byte stream.
        try await alice.sendReliable([
            .sendData(matchID: created.matchID, targets: [], payload: ByteBuffer(string: "one")),
            .sendData(matchID: created.matchID, targets: [], payload: ByteBuffer(string: "two")),
        ])
        #expect(try await bob.nextMessage() == .matchData(matchID: created.matchID, sender: aliceID.playerID, payload: ByteBuffer(string: "one")))
        #expect(try await bob.nextMessage() == .matchData(matchID: created.matchID, sender: aliceID.playerID, payload: ByteBuffer(string: "two")))
        let (carol, probe) = try await TestNativeConnection.connectWebSocketProbed(port: web, group: server.group)
        try await probe.cutMessages(at: 3)
        try await carol.send(.hello(version: 1, gameID: "matchhost"))
        guard case .welcome = try await carol.next() else { throw TestClientError.unexpected("no WELCOME") }
        try await carol.send(.authenticate(.device(id: "web-carol", secret: "")))
        guard case .authenticated = try await carol.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
        #expect(try await carol.response(to: try await carol.request(.getProfile(playerID: aliceID.playerID))).isSuccess)

        #expect(try await server.listener.counts().connections == 3, "both ports' connections are the native port's")
        await alice.close()
        await bob.close()
        await carol.close()
        try await server.stop()
    }

    /// What is not the native protocol over the WebSocket is bad input: ERROR, a Close frame,
    /// the close of that connection alone.
    @Test func badInputOverTheWebSocketClosesOnlyThatConnection() async throws {
        let (server, web) = try await startWithWebPort { $0.maxFrameBytes = 1024 }
        let (bystander, _) = try await webLogin(port: web, group: server.group, device: "web-bystander")

        let cases: [(String, WebSocketFrame, NativeErrorCode)] = [
            ("text", WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: "hello")), .badMessage),
            ("unmasked", WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [0, 0, 0, 3, 1, 0, 1])), .badMessage),
            (
                "over the frame limit",
                WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: ByteBuffer(repeating: 0, count: 1024 + 5)), .frameTooLarge
            ),
            // RFC 6455 5.5: a control frame is never fragmented and carries at most 125 bytes.
            ("a fragmented Ping", WebSocketFrame(fin: false, opcode: .ping, maskKey: .random(), data: ByteBuffer(bytes: [1])), .badMessage),
            ("a Ping of 126 bytes", WebSocketFrame(fin: true, opcode: .ping, maskKey: .random(), data: ByteBuffer(repeating: 1, count: 126)), .badMessage),
        ]
        for (name, frame, code) in cases {
            let (connection, probe) = try await TestNativeConnection.connectWebSocketProbed(port: web, group: server.group)
            try await probe.sendRaw(frame)
            let error = try await connection.closingError()
            #expect(error.code == code, "\(name): \(error)")
            #expect(probe.closeCode.withLockedValue { $0 } == 1000, "\(name): a Close frame before the close")
        }
        // A native frame over --max-frame inside a WebSocket frame under its limit: the native check.
        let (large, largeProbe) = try await TestNativeConnection.connectWebSocketProbed(port: web, group: server.group)
        try await largeProbe.cutMessages(at: 512)
        try await large.sendRaw([0, 0, 0x08, 0] + [UInt8](repeating: 1, count: 2048))
        #expect(try await large.closingError().code == .frameTooLarge)

        #expect(try await bystander.response(to: try await bystander.request(.getProfile(playerID: ""))).isSuccess)
        await bystander.close()
        try await server.stop()
    }

    /// A server stopping tells its WebSocket players why (ERROR `SHUTTING_DOWN`, so that they
    /// sign in again later rather than wait to resume) and closes with a Close frame.
    @Test func aStoppingServerSaysSoOverTheWebSocketAndSendsAClose() async throws {
        let (server, web) = try await startWithWebPort()
        // On a group of its own: the stop shuts the server's down, maybe before the client has
        // read the close.
        let (connection, probe) = try await TestNativeConnection.connectWebSocketProbed(port: web, group: MultiThreadedEventLoopGroup.singleton)
        try await connection.send(.hello(version: 1, gameID: "matchhost"))
        guard case .welcome = try await connection.next() else { throw TestClientError.unexpected("no WELCOME") }
        try await connection.send(.authenticate(.device(id: "web-until-the-end", secret: "")))
        guard case .authenticated = try await connection.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
        async let stopped: Void = server.stop()
        #expect(try await connection.closingError().code == .shuttingDown)
        #expect(probe.closeCode.withLockedValue { $0 } == 1000)
        try await stopped
    }

    /// PROTOCOL.md's example, byte for byte, over a raw socket: the upgrade, a masked HELLO, and
    /// the WELCOME in an unmasked binary frame. The HELLO comes in the same write as the
    /// upgrade request, as a client that does not wait for the 101 sends it.
    @Test func theProtocolDocumentsWebSocketExampleHoldsByteForByte() async throws {
        let (server, web) = try await startWithWebPort { $0.gameIDs = ["abc"] }
        let raw = try await RawSocket.connect(port: web, group: server.group)
        let key: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        let hello: [UInt8] = [0x00, 0x00, 0x00, 0x08, 0x01, 0x00, 0x01, 0x00, 0x03, 0x61, 0x62, 0x63]
        try await raw.write(
            Array(
                "GET /native HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                    .utf8) + [0x82, 0x8C] + key + hello.enumerated().map { $0.element ^ key[$0.offset % 4] })
        let head = String(decoding: try await raw.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 101 "), "\(head)")
        #expect(head.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "RFC 6455's own example key")
        let welcome = try await raw.read(count: 21)
        let heartbeat = UInt32(server.configuration.heartbeatInterval.nanoseconds / 1_000_000)
        let idle = UInt32(server.configuration.idleTimeout.nanoseconds / 1_000_000)
        #expect(
            welcome
                == [0x82, 0x13, 0x00, 0x00, 0x00, 0x0f, 0x02, 0x00, 0x01] + withUnsafeBytes(of: heartbeat.bigEndian, Array.init)
                + withUnsafeBytes(of: idle.bigEndian, Array.init) + [0x00, 0x01, 0x00, 0x00])
        await raw.close()
        try await server.stop()
    }

    /// `/` lists the browser clients, each a page with its script beside the native client's,
    /// which names the server's game id; `/native` wants a WebSocket; anything else is a short
    /// error. Every answer closes its connection.
    @Test func theWebPortServesTheBrowserClients() async throws {
        let (server, web) = try await startWithWebPort { $0.gameIDs = ["cats</script>", "matchhost"] }
        let index = try await httpGet("/", port: web, group: server.group)
        #expect(index.status == 200)
        #expect(index.headers["content-type"] == "text/html; charset=utf-8")
        #expect(index.headers["connection"] == "close")
        #expect(index.headers["content-security-policy"] == "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'")
        for game in ["catrace", "disks", "fourinarow"] {
            #expect(index.body.contains(#"<a href="/\#(game)">"#))
            let page = try await httpGet("/\(game)", port: web, group: server.group)
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.body.contains(#"<script src="/matchhost.js"></script>"#) && page.body.contains(#"<script src="/\#(game).js"></script>"#))
            #expect(
                !page.body.contains("<script>") && !page.body.contains("<style") && !page.body.contains(" style=")
                    && page.body.range(of: #" on[a-z]+="#, options: .regularExpression) == nil, "nothing inline: the policy allows none")
            #expect(page.body.hasSuffix("</html>"))
            let script = try await httpGet("/\(game).js", port: web, group: server.group)
            #expect(script.status == 200)
            #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
        }
        let client = try await httpGet("/matchhost.js", port: web, group: server.group)
        #expect(client.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(client.body.contains("const GAME_ID = \"cats\\u003c/script\\u003e\";"), "the first game id, unable to end the script")
        #expect(try await httpGet("/matchhost.css", port: web, group: server.group).headers["content-type"] == "text/css; charset=utf-8")

        let plain = try await httpGet("/native", port: web, group: server.group)
        #expect(plain.status == 426)
        #expect(try await httpGet("/favicon.ico", port: web, group: server.group).status == 404)
        for (request, status) in [
            ("POST /native HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "405"), ("HEAD /nothing HTTP/1.1\r\nHost: x\r\n\r\n", "404"),
        ] {
            let raw = try await RawSocket.connect(port: web, group: server.group)
            try await raw.write(Array(request.utf8))
            let head = String(decoding: try await raw.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 \(status) "), "\(request): \(head)")
            await raw.close()
        }
        try await server.stop()
    }

    /// The pages offer no size the server would refuse, and always its bound.
    @Test func thePagesOfferMatchSizesUpToTheServersBounds() async throws {
        let (server, web) = try await startWithWebPort {
            $0.maxPlayersPerMatch = 8
            $0.maxRacers = 5
        }
        func sizes(_ path: String) async throws -> [String] {
            let page = try await httpGet(path, port: web, group: server.group).body
            return page.matches(of: /<option( selected)?>(\d+)<\/option>/).map { String($0.output.2) + ($0.output.1 == nil ? "" : "*") }
        }
        #expect(try await sizes("/catrace") == ["2*", "3", "4", "5"])
        #expect(try await sizes("/disks") == ["2", "3", "4*", "6", "8"])
        try await server.stop()
        let (small, smallWeb) = try await startWithWebPort { $0.maxPlayersPerMatch = 3 }
        let disks = try await httpGet("/disks", port: smallWeb, group: small.group).body
        #expect(disks.contains("<option>2</option><option selected>3</option></select>"), "the default 4 is over the bound: the bound is chosen")
        try await small.stop()
    }

    /// A taken game port stops `serve` with one line naming the port, why, and the flags to
    /// change, and exit status 2, as a taken admin port does.
    @Test(arguments: [
        ("--catrace-port", "catrace", "choose another --catrace-port"),
        ("--port", "native", "choose another --port"),
        ("--web-port", "web", "choose another --web-port, or pass --no-web"),
    ])
    func aTakenPortStopsTheServerWithOneLine(flag: String, port: String, remedy: String) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let holder = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let taken = try #require(holder.localAddress?.port)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-taken-\(port)-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        var ports = ["--catrace-port": "0", "--port": "0", "--web-port": "0"]
        ports[flag] = "\(taken)"
        let run = try await runMatchHostToExit(
            ["serve", "--host", "127.0.0.1", "--no-admin", "--data", data.path, "--log-level", "critical"]
                + ports.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] })
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("matchhost: cannot serve the \(port) port on 127.0.0.1:\(taken) (Address already in use, errno "), "\(run.stderr)")
        #expect(run.stderr.hasSuffix("); \(remedy)\n"), "one line: \(run.stderr)")
        try await holder.close()
        try await group.shutdownGracefully()
    }

    /// A connection that sends no request is closed after the idle timeout, like a silent
    /// native one: it cannot hold a place of --max-connections for good.
    @Test func aSilentWebConnectionIsClosedAfterTheIdleTimeout() async throws {
        let (server, web) = try await startWithWebPort { configuration in
            configuration.idleTimeout = .milliseconds(300)
            configuration.heartbeatInterval = .milliseconds(100)
        }
        let silent = try await TestNativeConnection.connect(port: web, group: server.group)
        try await silent.waitUntilClosed(timeout: .seconds(10))
        try await server.waitForConnections(atMost: 0)
        #expect(try await server.listener.counts().connections == 0)
        try await server.stop()
    }

    /// --max-connections-per-address counts both ports: a network at its limit on the TCP port
    /// gets HTTP 503 on the web port, with the reason.
    @Test func theConnectionLimitsCountBothPorts() async throws {
        let (server, web) = try await startWithWebPort { $0.maxConnectionsPerAddress = 1 }
        let (holder, _) = try await server.login("holder")
        let refused = try await httpGet("/", port: web, group: server.group)
        #expect(refused.status == 503)
        #expect(refused.body.contains("--max-connections-per-address"))
        await holder.close()
        try await server.waitForConnections(atMost: 0)
        #expect(try await httpGet("/", port: web, group: server.group).status == 200)
        try await server.stop()
    }
}

/// Refused connections that linger half-closed, for their 503 to be read, are at most
/// ``ConnectionRegistry/maximumLingeringRefusals`` at once: a flood of them cannot hold the
/// server's file descriptors.
@Suite struct LingeringRefusalTests {
    @Test func atMost32RefusedConnectionsLingerAtOnce() throws {
        let loop = EmbeddedEventLoop()
        let registry = ConnectionRegistry(
            maximum: 1, maximumPerAddress: 1, port: "web", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let channels = (0..<33).map { _ in EmbeddedChannel(loop: loop) }
        #expect(channels.prefix(32).allSatisfy { registry.mayLinger($0) })
        #expect(!registry.mayLinger(channels[32]), "the 33rd closes at once")
        try channels[0].close().wait()
        loop.run()
        #expect(registry.mayLinger(channels[32]), "a place is free again once one has closed")
        for channel in channels.dropFirst() { _ = try? channel.finish() }
    }
}

/// The bridge alone, in an EmbeddedChannel: what each kind of WebSocket frame becomes.
@Suite struct NativeWebSocketBridgeTests {
    private final class ErrorCatcher: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var errors: [any Error] = []
        func errorCaught(context: ChannelHandlerContext, error: any Error) { self.errors.append(error) }
    }

    private func masked(_ opcode: WebSocketOpcode, _ bytes: [UInt8]) -> WebSocketFrame {
        let key = WebSocketMaskingKey([1, 2, 3, 4])!
        var data = ByteBuffer(bytes: bytes)
        data.webSocketMask(key)
        return WebSocketFrame(fin: true, opcode: opcode, maskKey: key, data: data)
    }

    @Test func binaryPayloadsAreTheStreamAndWritesBecomeBinaryMessages() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(NativeWebSocketBridge(maximumFramePayload: 100, bareFramesPerSecond: 10))
        try channel.writeInbound(self.masked(.binary, [0, 0, 0, 1]))
        try channel.writeInbound(self.masked(.continuation, [9]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [0, 0, 0, 1]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [9]))

        try channel.writeOutbound(ByteBuffer(bytes: [0, 0, 0, 1, 8]))
        let out = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(out.opcode == .binary && out.fin && out.maskKey == nil)
        #expect(out.data == ByteBuffer(bytes: [0, 0, 0, 1, 8]))
        _ = try channel.finish()
    }

    @Test func pingsOfOneReadGetOnePongAndACloseIsAnsweredAndCloses() throws {
        let channel = EmbeddedChannel()
        let catcher = ErrorCatcher()
        try channel.pipeline.syncOperations.addHandlers([NativeWebSocketBridge(maximumFramePayload: 100, bareFramesPerSecond: 10), catcher])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        // Three Pings read in one go: one Pong, for the latest, once the read is done.
        channel.pipeline.fireChannelRead(self.masked(.ping, [1]))
        channel.pipeline.fireChannelRead(self.masked(.ping, [2]))
        channel.pipeline.fireChannelRead(self.masked(.ping, [7, 7]))
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil)
        channel.pipeline.fireChannelReadComplete()
        let pong = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(pong.opcode == .pong && pong.data == ByteBuffer(bytes: [7, 7]))
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil)
        #expect(catcher.errors.isEmpty)

        try channel.writeInbound(self.masked(.connectionClose, [0x03, 0xE9, 0x41]))  // 1001, "A"
        let close = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(close.opcode == .connectionClose && close.data == ByteBuffer(bytes: [0x03, 0xE9]), "its status code, echoed")
        #expect(!channel.isActive)
        _ = try? channel.close().wait()
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil, "one Close only")
    }

    /// A client that does not read gets no Pong to hold: a Ping that comes while the connection
    /// is not writable is not answered (the next one, once it is, is).
    @Test func noPongIsWrittenWhileTheConnectionIsNotWritable() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(NativeWebSocketBridge(maximumFramePayload: 100, bareFramesPerSecond: 10))
        channel.isWritable = false
        try channel.writeInbound(self.masked(.ping, [1]))
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil)
        channel.isWritable = true
        try channel.writeInbound(self.masked(.ping, [2]))
        let pong = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(pong.opcode == .pong && pong.data == ByteBuffer(bytes: [2]))
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil, "the unanswered Ping stays unanswered")
        _ = try? channel.finish()
    }

    @Test func aCloseWithACodeNoEndpointMaySendIsAnsweredAsAProtocolError() {
        let allocator = ByteBufferAllocator()
        #expect(NativeWebSocketBridge.closeReply(to: ByteBuffer(bytes: [0x03, 0xE8]), allocator: allocator) == ByteBuffer(bytes: [0x03, 0xE8]))
        #expect(NativeWebSocketBridge.closeReply(to: ByteBuffer(), allocator: allocator) == ByteBuffer(), "no code given, none sent")
        for payload: [UInt8] in [[0x03], [0x03, 0xED], [0x03, 0xEE], [0x00, 0x10], [0x13, 0x88]] {  // 1 byte, 1005, 1006, 16, 5000
            #expect(NativeWebSocketBridge.closeReply(to: ByteBuffer(bytes: payload), allocator: allocator) == ByteBuffer(bytes: [0x03, 0xEA]), "\(payload)")
        }
    }

    @Test func framesWithoutStreamBytesOverTheMessageRateAreRateLimited() throws {
        let channel = EmbeddedChannel()
        let catcher = ErrorCatcher()
        let stopped = NIODeadline.now()
        try channel.pipeline.syncOperations.addHandlers([
            NativeWebSocketBridge(maximumFramePayload: 100, bareFramesPerSecond: 10, now: { stopped }), catcher,
        ])
        // A burst of one second's worth of pings, pongs and empty data frames passes (frames
        // with bytes of the stream are the native handler's to pace); the one after it is refused.
        let bare: [WebSocketOpcode] = [.ping, .pong, .binary, .continuation]
        for index in 0..<10 {
            let opcode = bare[index % bare.count]
            try channel.writeInbound(self.masked(opcode, opcode == .ping || opcode == .pong ? [UInt8(index)] : []))
            try channel.writeInbound(self.masked(.binary, [UInt8(index)]))
        }
        #expect(catcher.errors.isEmpty)
        var stream = ByteBuffer()
        while let bytes = try channel.readInbound(as: ByteBuffer.self) { stream.writeImmutableBuffer(bytes) }
        #expect(stream == ByteBuffer(bytes: Array(0..<10)), "only the bytes, and every one")
        for index in 10..<12 {
            try channel.writeInbound(self.masked(index % 2 == 0 ? .ping : .pong, [UInt8(index)]))
        }
        #expect(catcher.errors.count == 1)
        #expect((catcher.errors.first as? NativeError)?.code == .rateLimited)
        _ = try? channel.finish()
    }

    @Test func whatIsNotTheNativeProtocolIsANativeError() throws {
        for (frame, code) in [
            (self.masked(.text, [65]), NativeErrorCode.badMessage),
            (WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [1])), .badMessage),
            ({ var frame = self.masked(.binary, [1]); frame.rsv1 = true; return frame }(), .badMessage),
        ] as [(WebSocketFrame, NativeErrorCode)] {
            let channel = EmbeddedChannel()
            let catcher = ErrorCatcher()
            try channel.pipeline.syncOperations.addHandlers([NativeWebSocketBridge(maximumFramePayload: 100, bareFramesPerSecond: 10), catcher])
            try channel.writeInbound(frame)
            #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
            #expect((catcher.errors.first as? NativeError)?.code == code)
            // Nothing after bad input is read.
            try channel.writeInbound(self.masked(.binary, [1]))
            #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
            _ = try? channel.finish()
        }
        let channel = EmbeddedChannel()
        let catcher = ErrorCatcher()
        try channel.pipeline.syncOperations.addHandlers([NativeWebSocketBridge(maximumFramePayload: 100, bareFramesPerSecond: 10), catcher])
        channel.pipeline.fireErrorCaught(NIOWebSocketError.invalidFrameLength)
        #expect((catcher.errors.first as? NativeError)?.code == .frameTooLarge)
        _ = try? channel.finish()
    }
}

/// A TCP connection read and written as bytes, for exact wire checks.
private final class RawSocket: Sendable {
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let bytes = NIOLockedValueBox([UInt8]())
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = Self.unwrapInboundIn(data)
            self.bytes.withLockedValue { $0.append(contentsOf: buffer.readableBytesView) }
        }
    }

    private let channel: any Channel
    private let collector: Collector
    private let taken = NIOLockedValueBox(0)

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    static func connect(port: Int, group: any EventLoopGroup) async throws -> RawSocket {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: group).channelInitializer { $0.pipeline.addHandler(collector) }
            .connect(host: "127.0.0.1", port: port).get()
        return RawSocket(channel: channel, collector: collector)
    }

    func write(_ bytes: [UInt8]) async throws {
        try await self.channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// The next bytes up to and including `marker` (waiting up to 10 s for them).
    func read(through marker: [UInt8]) async throws -> [UInt8] {
        try await self.take { bytes in
            guard bytes.count >= marker.count else { return nil }
            return (marker.count...bytes.count).first { Array(bytes[($0 - marker.count)..<$0]) == marker }
        }
    }

    /// The next `count` bytes (waiting up to 10 s for them).
    func read(count: Int) async throws -> [UInt8] {
        try await self.take { $0.count >= count ? count : nil }
    }

    private func take(_ end: @escaping @Sendable ([UInt8]) -> Int?) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let start = self.taken.withLockedValue { $0 }
            let unread = Array(self.collector.bytes.withLockedValue { $0 }.dropFirst(start))
            if let length = end(unread) {
                self.taken.withLockedValue { $0 += length }
                return Array(unread.prefix(length))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestClientError.unexpected("the bytes did not come")
    }

    func close() async {
        try? await self.channel.close()
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
