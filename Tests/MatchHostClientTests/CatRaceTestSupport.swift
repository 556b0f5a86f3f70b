import Logging
import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// A real Cat Race listener on 127.0.0.1, port 0, for one test.
struct CatRaceTestServer {
    let listener: CatRaceListener
    let group: MultiThreadedEventLoopGroup
    var port: Int { self.listener.localAddress.port! }

    static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> CatRaceTestServer {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.catRacePort = 0
        configuration.maxTapRate = 100_000  // tests tap as fast as the socket allows
        configuration.maxMessageRate = 100_000
        configure(&configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let listener = try await CatRaceListener.bind(
            configuration: configuration, group: group,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        return CatRaceTestServer(listener: listener, group: group)
    }

    /// A client on NIO's singleton group, so it outlives the server's loops.
    func connect(_ id: String, alias: String? = nil, continueMatch: Bool = true) async throws -> CatRaceClient {
        try await CatRaceClient.connect(
            host: "127.0.0.1", port: self.port, playerID: id, alias: alias ?? "alias-\(id)", continueMatch: continueMatch)
    }

    func stop() async throws {
        await self.listener.close()
        try await self.group.shutdownGracefully()
    }
}

extension CatRaceClient {
    /// The next message within `timeout`; fails the test (by throwing) if the connection closed.
    func expectNext(timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> CatRaceServerMessage
    {
        let message = try await self.next(timeout: timeout)
        return try #require(message, "connection closed while waiting for a message", sourceLocation: sourceLocation)
    }
}

extension CatRaceServerMessage {
    var matchStarted: MatchStarted? {
        if case .matchStarted(let message) = self { return message }
        return nil
    }
}

/// A bare TCP server for tests that need a server misbehaving in a precise way. It hands
/// out each accepted channel.
struct RawTestServer {
    let channel: any Channel
    let accepted: AsyncStream<any Channel>
    var port: Int { self.channel.localAddress!.port! }

    /// - Parameters:
    ///   - readsAutomatically: false to leave what clients send unread until a test sets autoRead.
    ///   - receiveBuffer: SO_RCVBUF of accepted sockets (inherited from the listening socket).
    static func start(group: any EventLoopGroup, readsAutomatically: Bool = true, receiveBuffer: Int? = nil) async throws
        -> RawTestServer
    {
        let (accepted, continuation) = AsyncStream.makeStream(of: (any Channel).self)
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: readsAutomatically)
        if let receiveBuffer {
            bootstrap = bootstrap.serverChannelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        let channel = try await bootstrap
            .childChannelInitializer { channel in
                continuation.yield(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DiscardInbound())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawTestServer(channel: channel, accepted: accepted)
    }

    func nextAccepted() async throws -> any Channel {
        var iterator = self.accepted.makeAsyncIterator()
        return try #require(await iterator.next())
    }

    func stop() async {
        try? await self.channel.close()
    }
}

/// Drops whatever a raw test server receives.
final class DiscardInbound: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
