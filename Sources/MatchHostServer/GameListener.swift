import Logging
import NIOCore
import NIOPosix

/// What both game listeners are made of: a world (the players and matches behind a port) on
/// one event loop, the open connections, and the server channel accepting them.
///
/// Every connection of the listener is placed on the world's loop, so the whole path from
/// decode through the game to the write runs on one loop with no hop, no lock and no task per
/// message. Accepting runs on the whole group, so a connect burst does not wait on game work.
struct GameListener<World> {
    /// The loop-confined parts.
    typealias State = NIOLoopBound<(world: World, connections: ConnectionRegistry)>

    let localAddress: SocketAddress
    let serverChannel: any Channel
    let worldLoop: any EventLoop
    let state: State

    /// Creates the world on one loop of `group` (or on `worldLoop`) and binds `port`.
    /// - Parameters:
    ///   - worldLoop: the loop for the world and its connections; another listener's, so that
    ///     both worlds can reach each other's matches without a hop. Default: the group's next.
    ///   - makeWorld: builds the world, on its loop.
    ///   - makeHandler: builds one connection's handler, on the world's loop.
    static func bind(
        configuration: ServerConfiguration, port: Int, group: any EventLoopGroup, worldLoop: (any EventLoop)? = nil,
        makeWorld: @escaping @Sendable (any EventLoop) -> World,
        makeHandler: @escaping @Sendable (World, FlushCoalescer, ConnectionRegistry) -> any ChannelHandler
    ) async throws -> GameListener<World> {
        let worldLoop = worldLoop ?? group.next()
        let state = try await worldLoop.submit {
            State((world: makeWorld(worldLoop), connections: ConnectionRegistry()), eventLoop: worldLoop)
        }.get()
        let flusher = try await worldLoop.submit { NIOLoopBound(FlushCoalescer(eventLoop: worldLoop), eventLoop: worldLoop) }
            .get()
        let channel = try await ServerBootstrap(group: group, childGroup: worldLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: Int32(clamping: configuration.backlog))
            // Accept many connections per wake-up so a connect burst drains the backlog fast.
            .serverChannelOption(.maxMessagesPerRead, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(low: configuration.maxOutboundBytes / 2, high: max(1, configuration.maxOutboundBytes)))
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 65536))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = makeHandler(state.value.world, flusher.value, state.value.connections)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: configuration.host, port: port)
            .get()
        guard let address = channel.localAddress else {
            throw ListenerError.noLocalAddress
        }
        return GameListener(localAddress: address, serverChannel: channel, worldLoop: worldLoop, state: state)
    }

    /// Stops accepting; runs `shutDown` on the world (it tells players why), then flushes and
    /// closes every connection.
    func close(shutDown: @escaping @Sendable (World) -> Void) async {
        try? await self.serverChannel.close()
        let state = self.state
        let open: [any Channel] =
            (try? await self.worldLoop.submit {
                shutDown(state.value.world)
                return state.value.connections.all
            }.get()) ?? []
        for channel in open {
            // Flush what the shutdown said before closing.
            channel.flush()
            try? await channel.close()
        }
    }

    /// Runs `body` on the world's loop.
    func inspect<Value: Sendable>(_ body: @escaping @Sendable (World, ConnectionRegistry) -> Value) async throws -> Value {
        let state = self.state
        return try await self.worldLoop.submit { body(state.value.world, state.value.connections) }.get()
    }
}

/// A listener could not start.
enum ListenerError: Error, CustomStringConvertible {
    case noLocalAddress

    var description: String { "the listener has no local address after bind" }
}
