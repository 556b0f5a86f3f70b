import Logging
import MatchHostCore
import MatchHostGames
import NIOCore

/// The Cat Race TCP listener: the tutorial's port 1955, speaking its protocol byte for byte.
///
/// Every Cat Race connection is placed on the world's event loop (see `GameListener`), so the
/// whole Cat Race path (decode, rules, broadcast, write) runs on one loop with no hop, no lock
/// and no task per message.
///
/// With ``ServerConfiguration/store`` set, players and races outlive the process
/// (``CatRaceStorage``); without it the port keeps everything in memory.
public final class CatRaceListener: Sendable {
    let listener: GameListener<CatRaceWorld>
    /// The store the port records in, if any.
    let store: (any GameStore)?
    /// What the port read from the store before it bound: a native listener sharing the store
    /// continues from it instead of reading (and abandoning) again.
    let startup: WorldStartup?
    /// The store's outages, which a native listener sharing the store reports through too.
    let storageOutages: StorageOutageMonitor?
    /// New players per source network, a budget a native listener shares.
    let registrations: NetworkBudget
    /// New matches per source network, a budget a native listener shares.
    let matchCreations: NetworkBudget

    /// The address the listener actually bound (with the real port when 0 was asked for).
    public var localAddress: SocketAddress { self.listener.localAddress }

    private init(
        listener: GameListener<CatRaceWorld>, store: (any GameStore)?, startup: WorldStartup?, storageOutages: StorageOutageMonitor?,
        registrations: NetworkBudget, matchCreations: NetworkBudget
    ) {
        self.listener = listener
        self.registrations = registrations
        self.matchCreations = matchCreations
        self.store = store
        self.startup = startup
        self.storageOutages = storageOutages
    }

    /// Binds the listener.
    /// - Parameters:
    ///   - configuration: host, port and limits.
    ///   - group: the event loops; one of them becomes the Cat Race world's.
    ///   - logger: the server's logger.
    /// - Throws: what the store throws when its matches interrupted by the last run cannot be
    ///   ended (before anything is bound).
    public static func bind(
        configuration: ServerConfiguration, group: any EventLoopGroup, logger: Logger
    ) async throws -> CatRaceListener {
        // One store, one outage, whichever listener sees it: logged without a listener's name.
        let storageOutages = configuration.store.map { _ in StorageOutageMonitor(logger: logger) }
        var logger = logger
        logger[metadataKey: "listener"] = "catrace"
        let worldOptions = CatRaceWorldOptions(
            gracePeriod: configuration.gracePeriod,
            maxRacers: configuration.maxRacers,
            race: CatRaceOptions(maxTapRate: configuration.maxTapRate))
        let maximumFrameBody = configuration.maxFrameBytes
        let frameTimeout = configuration.idleTimeout
        let limits = ConnectionLimits(
            maxMessageRate: configuration.maxMessageRate, maxInboundBytesPerSecond: configuration.maxInboundBytesPerSecond,
            maxFrameBytes: configuration.maxFrameBytes, slowConsumerGrace: configuration.slowConsumerGrace,
            maxOutboundBytes: configuration.maxOutboundBytes,
            // Unreliable: what one pass hands a tutorial client is a few frames.
            outboundHardLimit: 2 * configuration.maxOutboundBytes)
        let listenerLogger = logger
        let registrations = NetworkBudget.newPlayers(perMinute: configuration.maxNewPlayersPerMinute)
        let matchCreations = NetworkBudget.newMatches(perMinute: configuration.maxNewMatchesPerMinute)
        let maximumUnstoredEndings = configuration.maxUnstoredResults
        let maximumBacklog = configuration.maxStoreBacklog
        let store = configuration.store
        // Before binding: races the last run left unfinished are abandoned before new ones start.
        let startup: WorldStartup? = if let store { try await WorldStartup.load(from: store, now: configuration.wallClock.now()) } else { nil }
        let listener = try await GameListener.bind(
            configuration: configuration, port: configuration.catRacePort, group: group,
            // The tutorial's protocol has no error message: a refused client just sees the close.
            portName: "catrace", portFlag: "--catrace-port", logger: logger, farewell: nil,
            makeWorld: { clock in
                let world = CatRaceWorld(options: worldOptions, clock: clock, logger: listenerLogger)
                world.admitsNewRace = { network in matchCreations.admit(network, now: clock.now) }
                if let store, let startup {
                    world.recorder = CatRaceStorage(
                        storage: WorldStore(
                            store: store, eventLoop: clock.eventLoop, clock: clock, logger: listenerLogger, outages: storageOutages,
                            maximumUnstoredEndings: maximumUnstoredEndings, maximumBacklog: maximumBacklog),
                        registrations: registrations)
                    world.continueMatchIDs(after: startup.largestMatchID)
                }
                return world
            },
            makeHandler: { world, flusher in
                CatRaceConnectionHandler(
                    world: world, maximumFrameBody: maximumFrameBody, frameTimeout: frameTimeout, limits: limits,
                    flusher: flusher, logger: listenerLogger)
            })
        return CatRaceListener(
            listener: listener, store: store, startup: startup, storageOutages: storageOutages, registrations: registrations,
            matchCreations: matchCreations)
    }

    /// How many connections are open and how many races run (for tests and the admin page).
    public func counts() async throws -> (connections: Int, players: Int, matches: Int) {
        try await self.listener.inspect { world, connections in (connections.count, world.playerCount, world.matchCount) }
    }

    /// Stops accepting, tells every racer its race is over (NOT_IN_MATCH), and closes every
    /// connection; then waits for the store writes in flight (the races' endings among them),
    /// so that whoever closes the store next does not cut them short.
    public func close() async {
        await self.listener.close { world in world.endAllMatches(reason: "server shutting down") }
        await self.listener.finishStoreWrites { world in world.storage?.storage }
    }
}
