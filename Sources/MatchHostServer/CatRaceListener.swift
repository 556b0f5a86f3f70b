import Logging
import MatchHostCore
import MatchHostGames
import NIOCore

/// The Cat Race TCP listener: the tutorial's port 1955, speaking its protocol byte for byte.
///
/// Every Cat Race connection is placed on the world's event loop (see `GameListener`), so the
/// whole Cat Race path (decode, rules, broadcast, write) runs on one loop with no hop, no lock
/// and no task per message.
public final class CatRaceListener: Sendable {
    let listener: GameListener<CatRaceWorld>

    /// The address the listener actually bound (with the real port when 0 was asked for).
    public var localAddress: SocketAddress { self.listener.localAddress }

    private init(listener: GameListener<CatRaceWorld>) {
        self.listener = listener
    }

    /// Binds the listener.
    /// - Parameters:
    ///   - configuration: host, port and limits.
    ///   - group: the event loops; one of them becomes the Cat Race world's.
    ///   - logger: the server's logger.
    public static func bind(
        configuration: ServerConfiguration, group: any EventLoopGroup, logger: Logger
    ) async throws -> CatRaceListener {
        var logger = logger
        logger[metadataKey: "listener"] = "catrace"
        let worldOptions = CatRaceWorldOptions(
            gracePeriod: configuration.gracePeriod,
            maxRacers: configuration.maxRacers,
            race: CatRaceOptions(maxTapRate: configuration.maxTapRate))
        let maximumFrameBody = configuration.maxFrameBytes
        let limits = ConnectionLimits(maxMessageRate: configuration.maxMessageRate)
        let listenerLogger = logger
        let listener = try await GameListener.bind(
            configuration: configuration, port: configuration.catRacePort, group: group,
            makeWorld: { clock in CatRaceWorld(options: worldOptions, clock: clock, logger: listenerLogger) },
            makeHandler: { world, flusher, connections in
                CatRaceConnectionHandler(
                    world: world, maximumFrameBody: maximumFrameBody, limits: limits, flusher: flusher,
                    connections: connections, logger: listenerLogger)
            })
        return CatRaceListener(listener: listener)
    }

    /// How many connections are open and how many races run (for tests and the admin page).
    public func counts() async throws -> (connections: Int, players: Int, matches: Int) {
        try await self.listener.inspect { world, connections in (connections.count, world.playerCount, world.matchCount) }
    }

    /// Stops accepting, tells every racer its race is over (NOT_IN_MATCH), and closes every connection.
    public func close() async {
        await self.listener.close { world in world.endAllMatches(reason: "server shutting down") }
    }
}
