import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import NIOPosix

/// The native-protocol TCP listener (`--port`, default 7355).
///
/// Every native connection is placed on the world's event loop, with the sessions and
/// matches, so that a message crosses from a connection into a match with no hop.
public final class NativeListener: Sendable {
    /// The address the listener actually bound (with the real port when 0 was asked for).
    public let localAddress: SocketAddress
    private let serverChannel: any Channel
    private let worldLoop: any EventLoop
    private let state: NIOLoopBound<(world: NativeWorld, connections: ConnectionRegistry)>

    private init(
        localAddress: SocketAddress, serverChannel: any Channel, worldLoop: any EventLoop,
        state: NIOLoopBound<(world: NativeWorld, connections: ConnectionRegistry)>
    ) {
        self.localAddress = localAddress
        self.serverChannel = serverChannel
        self.worldLoop = worldLoop
        self.state = state
    }

    /// Binds the listener.
    /// - Parameters:
    ///   - configuration: host, port, timing and limits.
    ///   - group: the event loops; one of them becomes the native world's.
    ///   - logger: the server's logger.
    public static func bind(configuration: ServerConfiguration, group: any EventLoopGroup, logger: Logger) async throws -> NativeListener {
        let worldLoop = group.next()
        var logger = logger
        logger[metadataKey: "listener"] = "native"
        let options = NativeWorldOptions(
            gameIDs: Set(configuration.gameIDs),
            sessionGrace: configuration.sessionGrace,
            seatGrace: configuration.sessionGrace,
            maxBacklogBytes: configuration.maxBacklogBytes,
            maxPlayersPerMatch: configuration.maxPlayersPerMatch,
            maxMatchesPerPlayer: configuration.maxMatchesPerPlayer,
            catRace: CatRaceOptions(maxTapRate: configuration.maxTapRate),
            welcome: NativeWelcome(
                version: NativeFrame.protocolVersion,
                heartbeatMilliseconds: UInt32(clamping: configuration.heartbeatInterval.nanoseconds / 1_000_000),
                idleTimeoutMilliseconds: UInt32(clamping: configuration.idleTimeout.nanoseconds / 1_000_000),
                maximumFrameBytes: UInt32(clamping: configuration.maxFrameBytes)))
        let signer = SessionTokenSigner(key: configuration.tokenSigningKey)
        let tokenLifetime = UInt64(max(1, configuration.tokenLifetime.nanoseconds / 1_000_000_000))
        let worldLogger = logger
        let state = try await worldLoop.submit {
            NIOLoopBound(
                (
                    world: NativeWorld(
                        options: options,
                        authenticator: NativeAuthenticator(signer: signer, tokenLifetimeSeconds: tokenLifetime),
                        clock: EventLoopClock(eventLoop: worldLoop), logger: worldLogger),
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
                    let handler = NativeConnectionHandler(
                        world: state.value.world, maximumFrameBody: maximumFrameBody, limits: limits, flusher: flusher.value,
                        connections: state.value.connections, logger: connectionLogger)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        guard let address = channel.localAddress else {
            throw ListenerError.noLocalAddress
        }
        return NativeListener(localAddress: address, serverChannel: channel, worldLoop: worldLoop, state: state)
    }

    /// How many connections are open, sessions live and matches running (for tests and the admin page).
    public func counts() async throws -> (connections: Int, sessions: Int, matches: Int) {
        try await self.worldLoop.submit {
            (self.state.value.connections.count, self.state.value.world.sessions.count, self.state.value.world.matchCount)
        }.get()
    }

    /// Stops accepting, ends every match (MATCH_ENDED) and session (ERROR SHUTTING_DOWN), and
    /// closes every connection.
    public func close() async {
        try? await self.serverChannel.close()
        let open: [any Channel] =
            (try? await self.worldLoop.submit {
                self.state.value.world.shutDown()
                return self.state.value.connections.all
            }.get()) ?? []
        for channel in open {
            channel.flush()
            try? await channel.close()
        }
    }
}
