import MatchHostWire
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A raw native-protocol connection over a real socket: the test drives every frame itself,
/// so it can also send what a well-behaved client never would.
final class TestNativeConnection: Sendable {
    let channel: any Channel
    private let inbox: NIOLoopBound<Inbox<NativeFrame>>
    private let sequences = Mutex((nextOut: UInt64(1), lastIn: UInt64(0), nextRequest: UInt32(1)))

    init(channel: any Channel, inbox: NIOLoopBound<Inbox<NativeFrame>>) {
        self.channel = channel
        self.inbox = inbox
    }

    /// - Parameters:
    ///   - from: the local address to connect from (another 127.x address is another network
    ///     to the server); any by default.
    ///   - tls: speaks TLS with this context (to a server with ``ServerConfiguration/tls``).
    static func connect(
        port: Int, group: any EventLoopGroup, from local: String? = nil, tls: NIOSSLContext? = nil
    ) async throws -> TestNativeConnection {
        var bootstrap = ClientBootstrap(group: group).channelOption(.socketOption(.tcp_nodelay), value: 1)
        if let local { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: local, port: 0)) }
        // The inbox is kept from the initializer, not looked up afterwards: a server that closes
        // at once (a handshake timeout on a loaded machine) takes it out of the pipeline.
        let (channel, inbox) = try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let inbox = Inbox { try NativeFrame(frameBody: $0) }
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil)) }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumBodySize: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(inbox)
                    return (channel, NIOLoopBound(inbox, eventLoop: channel.eventLoop))
                }
            }
        return TestNativeConnection(channel: channel, inbox: inbox)
    }

    /// Connects, says HELLO and checks the WELCOME.
    static func handshake(
        port: Int, group: any EventLoopGroup, gameID: String = "matchhost", from local: String? = nil, tls: NIOSSLContext? = nil
    ) async throws -> TestNativeConnection {
        let connection = try await Self.connect(port: port, group: group, from: local, tls: tls)
        try await connection.send(.hello(version: 1, gameID: gameID))
        guard case .welcome = try await connection.next() else { throw TestClientError.unexpected("no WELCOME") }
        return connection
    }

    /// Connects and authenticates a device; returns the connection and what AUTHENTICATED said.
    static func login(
        port: Int, group: any EventLoopGroup, device: String, secret: String = "", from local: String? = nil, tls: NIOSSLContext? = nil
    ) async throws -> (TestNativeConnection, NativeAuthenticated) {
        let connection = try await Self.handshake(port: port, group: group, from: local, tls: tls)
        try await connection.send(.authenticate(.device(id: device, secret: secret)))
        guard case .authenticated(let authenticated) = try await connection.next() else {
            throw TestClientError.unexpected("no AUTHENTICATED")
        }
        return (connection, authenticated)
    }

    func send(_ frame: NativeFrame) async throws {
        try await self.channel.writeAndFlush(frame.encodedFrame(allocator: self.channel.allocator))
    }

    func sendRaw(_ bytes: [UInt8]) async throws {
        try await self.channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Sends `message` in a RELIABLE frame with the next sequence number, acknowledging what arrived.
    func sendReliable(_ message: NativeClientMessage) async throws {
        let (sequence, ack) = self.sequences.withLock { state in
            defer { state.nextOut += 1 }
            return (state.nextOut, state.lastIn)
        }
        try await self.send(.reliable(sequence: sequence, ack: ack, message: message.encoded()))
    }

    /// Sends `messages` in RELIABLE frames with the next sequence numbers, all in one write.
    func sendReliable(_ messages: [NativeClientMessage]) async throws {
        var buffer = self.channel.allocator.buffer(capacity: 0)
        for message in messages {
            let (sequence, ack) = self.sequences.withLock { state in
                defer { state.nextOut += 1 }
                return (state.nextOut, state.lastIn)
            }
            var frame = NativeFrame.reliable(sequence: sequence, ack: ack, message: message.encoded()).encodedFrame(allocator: self.channel.allocator)
            buffer.writeBuffer(&frame)
        }
        try await self.channel.writeAndFlush(buffer)
    }

    /// Sends a request and returns the id it used.
    @discardableResult
    func request(_ request: NativeRequest) async throws -> UInt32 {
        let id = self.sequences.withLock { state in
            defer { state.nextRequest += 1 }
            return state.nextRequest
        }
        try await self.sendReliable(.request(id: id, request))
        return id
    }

    /// The last server sequence number received.
    var lastReceived: UInt64 { self.sequences.withLock { $0.lastIn } }

    /// Continues a resumed session's numbering where it stood.
    func continueSequences(from other: TestNativeConnection) {
        let state = other.sequences.withLock { $0 }
        self.sequences.withLock { $0 = state }
    }

    func nextEvent(timeout: TimeAmount = .seconds(5)) async throws -> InboxEvent<NativeFrame> {
        let inbox = self.inbox
        let loop = self.channel.eventLoop
        return try await loop.flatSubmit { inbox.value.next(on: loop, timeout: timeout) }.get()
    }

    /// The next frame; throws if the connection closed or nothing came in time.
    func next(timeout: TimeAmount = .seconds(5)) async throws -> NativeFrame {
        switch try await self.nextEvent(timeout: timeout) {
        case .message(let frame): return frame
        case .closed: throw TestClientError.unexpected("connection closed")
        }
    }

    /// The next server message, skipping ACK, PING and PONG; checks reliable numbering. Throws
    /// if none came within `timeout`, however many PINGs did (a test waiting for what never
    /// comes would otherwise wait out the idle timeout).
    func nextMessage(timeout: TimeAmount = .seconds(5)) async throws -> NativeServerMessage {
        let deadline = NIODeadline.now() + timeout
        while true {
            switch try await self.next(timeout: max(.zero, deadline - .now())) {
            case .ack, .ping, .pong:
                continue
            case .reliable(let sequence, _, let message):
                let expected = self.sequences.withLock { state -> UInt64 in
                    defer { if sequence == state.lastIn + 1 { state.lastIn = sequence } }
                    return state.lastIn + 1
                }
                guard sequence == expected else {
                    throw TestClientError.unexpected("sequence \(sequence), expected \(expected)")
                }
                return try NativeServerMessage(message: message)
            case .unreliable(let message):
                return try NativeServerMessage(message: message)
            case let other:
                throw TestClientError.unexpected("\(other)")
            }
        }
    }

    /// The response to request `id`; throws on anything else first.
    func response(to id: UInt32) async throws -> Result<NativeResponse, NativeError> {
        switch try await self.nextMessage() {
        case .response(id, let response): return .success(response)
        case .requestError(id, let error): return .failure(error)
        case let other: throw TestClientError.unexpected("\(other)")
        }
    }

    /// Everything the server sent before a barrier request's answer: proves nothing else is pending.
    func drain(timeout: TimeAmount = .seconds(5)) async throws -> [NativeServerMessage] {
        let id = try await self.request(.leaveMatch(0))
        var extra: [NativeServerMessage] = []
        while true {
            let message = try await self.nextMessage(timeout: timeout)
            if case .requestError(id, _) = message { return extra }
            extra.append(message)
        }
    }

    /// The ERROR the server sends before closing, skipping other frames.
    func closingError(timeout: TimeAmount = .seconds(10)) async throws -> NativeError {
        while true {
            if case .error(let error) = try await self.next(timeout: timeout) {
                guard case .closed = try await self.nextEvent(timeout: timeout) else {
                    throw TestClientError.unexpected("still open after ERROR")
                }
                return error
            }
        }
    }

    /// Waits for the connection to close, skipping frames.
    func waitUntilClosed(timeout: TimeAmount = .seconds(10)) async throws {
        while try await self.nextEvent(timeout: timeout) != .closed {}
    }

    func close() async {
        try? await self.channel.close()
    }
}
