import MatchHostWire
import NIOCore
import NIOPosix

/// What a test client saw.
enum InboxEvent<Message: Equatable & Sendable>: Equatable, Sendable {
    case message(Message)
    case closed
}

/// What a Cat Race test client saw.
typealias ClientEvent = InboxEvent<CatRaceServerMessage>

/// Keeps what arrives on one connection, decoded, until the test asks for it. Loop-confined.
/// A frame that does not decode is reported as the connection closing.
final class Inbox<Message: Equatable & Sendable>: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias Event = InboxEvent<Message>

    private let decode: (ByteBuffer) throws -> Message
    private var queue: [Event] = []
    private var waiter: EventLoopPromise<Event>?
    private var closed = false

    init(decode: @escaping (ByteBuffer) throws -> Message) {
        self.decode = decode
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = Self.unwrapInboundIn(data)
        let event = (try? self.decode(body)).map(Event.message) ?? .closed
        self.push(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.closed = true
        self.push(.closed)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func push(_ event: Event) {
        if let waiter = self.waiter {
            self.waiter = nil
            waiter.succeed(event)
        } else {
            self.queue.append(event)
        }
    }

    func next(on loop: any EventLoop, timeout: TimeAmount) -> EventLoopFuture<Event> {
        if !self.queue.isEmpty {
            let event = self.queue.removeFirst()
            if event == .closed { self.queue.insert(.closed, at: 0) }  // stays closed
            return loop.makeSucceededFuture(event)
        }
        let promise = loop.makePromise(of: Event.self)
        self.waiter = promise
        loop.assumeIsolated().scheduleTask(in: timeout) {
            if self.waiter?.futureResult === promise.futureResult {
                self.waiter = nil
                promise.fail(TestClientError.timeout)
            }
        }
        return promise.futureResult
    }
}

enum TestClientError: Error {
    case timeout
    case unexpected(String)
}

/// A Cat Race client over a real socket, for end-to-end tests.
final class TestCatRaceClient: Sendable {
    let channel: any Channel
    let id: String
    private let inbox: NIOLoopBound<Inbox<CatRaceServerMessage>>

    private init(channel: any Channel, inbox: NIOLoopBound<Inbox<CatRaceServerMessage>>, id: String) {
        self.channel = channel
        self.inbox = inbox
        self.id = id
    }

    /// Connects; with `id`, also sends PLAYER_CONNECTED.
    static func connect(
        port: Int, group: any EventLoopGroup, id: String = "", alias: String? = nil, continueMatch: Bool = true,
        autoRead: Bool = true, receiveBuffer: Int? = nil
    ) async throws -> TestCatRaceClient {
        var bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.autoRead, value: autoRead)
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        // The inbox is kept from the initializer, not looked up afterwards: a server that closes
        // at once takes it out of the pipeline.
        let (channel, inbox) = try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let inbox = Inbox { try CatRaceServerMessage(frameBody: $0) }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumBodySize: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(inbox)
                    return (channel, NIOLoopBound(inbox, eventLoop: channel.eventLoop))
                }
            }
        let client = TestCatRaceClient(channel: channel, inbox: inbox, id: id)
        if !id.isEmpty {
            try await client.send(.playerConnected(PlayerConnected(playerID: id, alias: alias ?? "alias-\(id)", continueMatch: continueMatch)))
        }
        return client
    }

    func send(_ message: CatRaceClientMessage) async throws {
        var buffer = self.channel.allocator.buffer(capacity: 32)
        message.encodeFrame(into: &buffer)
        try await self.channel.writeAndFlush(buffer)
    }

    func sendRaw(_ bytes: [UInt8]) async throws {
        try await self.channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    func nextEvent(timeout: TimeAmount = .seconds(5)) async throws -> ClientEvent {
        let inbox = self.inbox
        let loop = self.channel.eventLoop
        return try await loop.flatSubmit { inbox.value.next(on: loop, timeout: timeout) }.get()
    }

    /// The next message; throws if the connection closed or nothing came in time.
    func next(timeout: TimeAmount = .seconds(5)) async throws -> CatRaceServerMessage {
        switch try await self.nextEvent(timeout: timeout) {
        case .message(let message): return message
        case .closed: throw TestClientError.unexpected("connection closed")
        }
    }

    /// Proves nothing arrived: a NOTIFY_READY naming ourselves comes back through the server's
    /// single Cat Race loop, after anything it sent us before. Needs a PLAYER_CONNECTED id.
    func expectNothingPending() async throws -> [CatRaceServerMessage] {
        try await self.send(.notifyReady(NotifyReady(playerID: self.id)))
        var extra: [CatRaceServerMessage] = []
        while true {
            let message = try await self.next()
            if message == .notifyReady(NotifyReady(playerID: self.id)) { return extra }
            extra.append(message)
        }
    }

    /// Waits for the server to close this connection, skipping messages that came first.
    func waitUntilClosed(timeout: TimeAmount = .seconds(10)) async throws {
        while try await self.nextEvent(timeout: timeout) != .closed {}
    }

    func close() async {
        try? await self.channel.close()
    }
}
