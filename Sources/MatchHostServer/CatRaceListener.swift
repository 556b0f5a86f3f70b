import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import NIOPosix

/// The Cat Race TCP listener: the tutorial's port 1955, speaking its protocol byte for byte.
///
/// Every Cat Race connection is placed on the world's event loop, so the whole Cat Race path
/// (decode, rules, broadcast, write) runs on one loop with no hop, no lock and no task per
/// message. Accepting runs on the group, so a connect burst does not wait on game work.
public final class CatRaceListener: Sendable {
    /// The address the listener actually bound (with the real port when 0 was asked for).
    public let localAddress: SocketAddress
    private let serverChannel: any Channel
    private let worldLoop: any EventLoop
    private let state: NIOLoopBound<(world: CatRaceWorld, connections: ConnectionRegistry)>

    private init(
        localAddress: SocketAddress, serverChannel: any Channel, worldLoop: any EventLoop,
        state: NIOLoopBound<(world: CatRaceWorld, connections: ConnectionRegistry)>
    ) {
        self.localAddress = localAddress
        self.serverChannel = serverChannel
        self.worldLoop = worldLoop
        self.state = state
    }

    /// Binds the listener.
    /// - Parameters:
    ///   - configuration: host, port and limits.
    ///   - group: the event loops; one of them becomes the Cat Race world's.
    ///   - logger: the server's logger.
    public static func bind(
        configuration: ServerConfiguration, group: any EventLoopGroup, logger: Logger
    ) async throws -> CatRaceListener {
        let worldLoop = group.next()
        var logger = logger
        logger[metadataKey: "listener"] = "catrace"
        let worldOptions = CatRaceWorldOptions(
            gracePeriod: configuration.gracePeriod,
            maxRacers: configuration.maxRacers,
            race: CatRaceOptions(maxTapRate: configuration.maxTapRate))
        let worldLogger = logger
        let state = try await worldLoop.submit {
            NIOLoopBound(
                (
                    world: CatRaceWorld(
                        options: worldOptions, clock: EventLoopClock(eventLoop: worldLoop), logger: worldLogger),
                    connections: ConnectionRegistry()
                ), eventLoop: worldLoop)
        }.get()
        let flusher = try await worldLoop.submit { NIOLoopBound(FlushCoalescer(eventLoop: worldLoop), eventLoop: worldLoop) }
            .get()
        let maximumFrameBody = configuration.maxFrameBytes
        let limits = ConnectionLimits(maxMessageRate: configuration.maxMessageRate)
        let connectionLogger = logger

        let channel = try await ServerBootstrap.gameServer(configuration: configuration, group: group, childLoop: worldLoop)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = CatRaceConnectionHandler(
                        world: state.value.world, maximumFrameBody: maximumFrameBody, limits: limits, flusher: flusher.value,
                        connections: state.value.connections, logger: connectionLogger)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: configuration.host, port: configuration.catRacePort)
            .get()
        guard let address = channel.localAddress else {
            throw ListenerError.noLocalAddress
        }
        return CatRaceListener(localAddress: address, serverChannel: channel, worldLoop: worldLoop, state: state)
    }

    /// How many connections are open and how many races run (for tests and the admin page).
    public func counts() async throws -> (connections: Int, players: Int, matches: Int) {
        try await self.worldLoop.submit {
            (self.state.value.connections.count, self.state.value.world.playerCount, self.state.value.world.matchCount)
        }.get()
    }

    /// Stops accepting, tells every racer its race is over (NOT_IN_MATCH), and closes every connection.
    public func close() async {
        try? await self.serverChannel.close()
        let open: [any Channel] =
            (try? await self.worldLoop.submit {
                self.state.value.world.endAllMatches(reason: "server shutting down")
                return self.state.value.connections.all
            }.get()) ?? []
        for channel in open {
            // Flush what the shutdown said before closing.
            channel.flush()
            try? await channel.close()
        }
    }
}

extension ServerBootstrap {
    /// The bootstrap both game listeners use: accepting on `group`, every connection on
    /// `childLoop` (the world's loop), sized for connect bursts, with the outbound limit as
    /// the write-buffer high-water mark.
    static func gameServer(configuration: ServerConfiguration, group: any EventLoopGroup, childLoop: any EventLoop) -> ServerBootstrap {
        ServerBootstrap(group: group, childGroup: childLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: Int32(clamping: configuration.backlog))
            // Accept many connections per wake-up so a connect burst drains the backlog fast.
            .serverChannelOption(.maxMessagesPerRead, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(low: configuration.maxOutboundBytes / 2, high: max(1, configuration.maxOutboundBytes)))
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 65536))
    }
}

/// A listener could not start.
enum ListenerError: Error, CustomStringConvertible {
    case noLocalAddress

    var description: String { "the listener has no local address after bind" }
}
