import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

/// The native-protocol TCP listener (`--port`, default 7355).
///
/// Every native connection is placed on the world's event loop, with the sessions and
/// matches (see `GameListener`), so that a message crosses from a connection into a match
/// with no hop.
public final class NativeListener: Sendable {
    private let listener: GameListener<NativeWorld>
    private let storageOutages: StorageOutageMonitor
    private let webChannel: (any Channel)?
    private let resultWaitAtShutdown: TimeAmount

    /// The address the listener actually bound (with the real port when 0 was asked for).
    public var localAddress: SocketAddress { self.listener.localAddress }

    /// The web port's address (``ServerConfiguration/webPort``), nil when it has none.
    public var webAddress: SocketAddress? { self.webChannel?.localAddress }

    /// Whether the database is failing writes now (both ports share one outage).
    public var isStorageFailing: Bool { self.storageOutages.isFailing }

    private init(
        listener: GameListener<NativeWorld>, storageOutages: StorageOutageMonitor, webChannel: (any Channel)?, resultWaitAtShutdown: TimeAmount
    ) {
        self.listener = listener
        self.storageOutages = storageOutages
        self.webChannel = webChannel
        self.resultWaitAtShutdown = resultWaitAtShutdown
    }

    /// Binds the listener.
    /// - Parameters:
    ///   - configuration: host, port, timing and limits.
    ///   - group: the event loops; one of them becomes the native world's.
    ///   - logger: the server's logger.
    ///   - catRace: the Cat Race port's listener, whose loop the native world then shares, so
    ///     that a native catrace match can seat tutorial clients (see PROTOCOL.md). When it
    ///     records in a store, the native world uses that store (and what the port read from
    ///     it at startup) and the same sequence of match ids.
    public static func bind(
        configuration: ServerConfiguration, group: any EventLoopGroup, logger: Logger, catRace: CatRaceListener? = nil
    ) async throws -> NativeListener {
        let tls = configuration.tls
        let storageOutages = catRace?.storageOutages ?? StorageOutageMonitor(logger: logger)
        // One budget of new players for both ports: a network may not double it by using both.
        let registrations = catRace?.registrations ?? NetworkBudget.newPlayers(perMinute: configuration.maxNewPlayersPerMinute)
        let matchCreations = catRace?.matchCreations ?? NetworkBudget.newMatches(perMinute: configuration.maxNewMatchesPerMinute)
        let failedJoins = NetworkBudget.failedJoins(perMinute: configuration.maxFailedJoinsPerMinute)
        let valueWrites = NetworkBudget.valueWrites(bytesPerMinute: configuration.maxValueBytesPerMinute)
        var logger = logger
        logger[metadataKey: "listener"] = "native"
        let options = NativeWorldOptions(
            gameIDs: Set(configuration.gameIDs),
            sessionGrace: configuration.sessionGrace,
            seatGrace: configuration.sessionGrace,
            maxBacklogBytes: configuration.maxBacklogBytes,
            maxPlayersPerMatch: configuration.maxPlayersPerMatch,
            maxRacers: configuration.maxRacers,
            maxMatchesPerPlayer: configuration.maxMatchesPerPlayer,
            maxPendingStoredRequests: configuration.maxPendingRequests,
            maxSessions: configuration.maxSessions,
            catRace: CatRaceOptions(maxTapRate: configuration.maxTapRate),
            disks: configuration.disksOptions,
            turnTimeLimit: configuration.turnTimeLimit,
            welcome: NativeWelcome(
                version: NativeFrame.protocolVersion,
                heartbeatMilliseconds: UInt32(clamping: configuration.heartbeatInterval.nanoseconds / 1_000_000),
                idleTimeoutMilliseconds: UInt32(clamping: configuration.idleTimeout.nanoseconds / 1_000_000),
                maximumFrameBytes: UInt32(clamping: configuration.maxFrameBytes)),
            lobbyInterval: configuration.lobbyInterval,
            matchmaker: MatchmakerConfiguration(
                interval: configuration.matchmakerInterval, relaxAfter: configuration.matchmakerRelaxAfter,
                maxTicketsPerPlayer: configuration.maxTicketsPerPlayer, capacity: configuration.maxTickets,
                sliceDuration: configuration.matchmakerSlice),
            maxDevicesPerPlayer: configuration.maxDevicesPerPlayer,
            linkCodeLifetime: configuration.linkCodeLifetime,
            aliasRules: AliasRules(maximumLength: configuration.maxAliasLength),
            linkCodeKey: SecretBytes(configuration.tokenSigningKey))
        let signer = SessionTokenSigner(key: configuration.tokenSigningKey)
        let tokenLifetime = UInt64(max(1, configuration.tokenLifetime.nanoseconds / 1_000_000_000))
        let maximumFrameBody = configuration.maxFrameBytes
        let limits = ConnectionLimits(
            maxMessageRate: configuration.maxMessageRate, maxInboundBytesPerSecond: configuration.maxInboundBytesPerSecond,
            maxFrameBytes: configuration.maxFrameBytes, slowConsumerGrace: configuration.slowConsumerGrace,
            maxOutboundBytes: configuration.maxOutboundBytes,
            // A client that reads has at most its session's unacknowledged data waiting (no
            // more than --max-backlog) and unreliable data written while under --max-outbound.
            // One that stops reading but acknowledges what it never read (the sequence numbers
            // are easy to guess) would slip past --max-backlog: this holds it.
            outboundHardLimit: configuration.maxBacklogBytes + 2 * configuration.maxOutboundBytes)
        let listenerLogger = logger
        let wallClock = configuration.wallClock
        // With a Cat Race port that records, both worlds share its store, and what it read at
        // startup (reading again would find nothing left to abandon).
        let store = catRace?.store ?? configuration.store ?? InMemoryGameStore(outlivesServer: false)
        // Before binding: no player may arrive before the world knows what the last run left.
        let startup: WorldStartup =
            if let shared = catRace?.startup { shared } else { try await WorldStartup.load(from: store, now: configuration.wallClock.now()) }
        // Encoded once: a flood of connections to a full port gets it again and again.
        let portFull = NativeFrame.error(
            NativeError(.serverFull, "the server holds its most connections (\(configuration.maxConnections)); try again later")
        ).encodedFrame()
        let makeHandler: @Sendable (NativeWorld, FlushCoalescer) -> any ChannelHandler = { world, flusher in
            NativeConnectionHandler(
                world: world, maximumFrameBody: maximumFrameBody, limits: limits, flusher: flusher, logger: listenerLogger)
        }
        let listener = try await GameListener.bind(
            configuration: configuration, port: configuration.port, group: group, worldLoop: catRace?.listener.worldLoop,
            portName: "native", portFlag: "--port", logger: logger,
            tls: tls.map {
                TLSPortSetup(
                    tls: $0,
                    plaintextAnswer: NativeFrame.error(
                        NativeError(.tlsRequired, "this port speaks TLS only: connect with TLS (the Swift client: Configuration.tls; matchhost's commands: --tls)")
                    ).encodedFrame())
            },
            farewell: { refusal in
                switch refusal {
                case .portFull:
                    portFull
                case .addressFull(let source, let maximum):
                    NativeFrame.error(
                        NativeError(
                            .serverFull,
                            "\(source) has the most connections one network may open (\(maximum), --max-connections-per-address); close one or try again later"
                        )
                    ).encodedFrame()
                }
            },
            makeWorld: { clock in
                let loop = clock.eventLoop
                let world = NativeWorld(
                    options: options,
                    authenticator: NativeAuthenticator(
                        signer: signer, tokenLifetimeSeconds: tokenLifetime, maximumDevicesPerPlayer: configuration.maxDevicesPerPlayer,
                        now: { UInt64(clamping: wallClock.now().milliseconds / 1000) }),
                    clock: clock, storage: WorldStore(
                        store: store, eventLoop: loop, clock: clock, logger: listenerLogger, outages: storageOutages,
                        maximumUnstoredEndings: configuration.maxUnstoredResults, maximumBacklog: configuration.maxStoreBacklog,
                        now: wallClock.now),
                    registrations: registrations, matchCreations: matchCreations, failedJoins: failedJoins,
                    valueWrites: valueWrites, logger: listenerLogger)
                world.start(from: startup)
                return world
            },
            makeHandler: makeHandler)
        if let catRace {
            let native = listener.state
            let tutorial = catRace.listener.state
            try await listener.worldLoop.eventLoop.submit {
                let world = native.value.world
                let port = tutorial.value.world
                world.catRaceWorld = port
                port.onInvitedRacerIdentified = { [unowned world] storedID, seat, race in
                    world.tutorialRacerIdentified(storedID, seat: seat, in: race)
                }
                if port.recorder != nil {
                    // Both worlds record matches in one store: one sequence of ids, so none repeats.
                    world.nextMatchID = max(world.nextMatchID, port.nextMatchID)
                    port.matchIDSource = { [unowned world] in world.takeMatchID() }
                }
            }.get()
        }
        var webChannel: (any Channel)?
        if let webPort = configuration.webPort {
            let maxConnections = configuration.maxConnections
            // Encoded once, as the TCP port's: a flood to a full port gets it again and again.
            let webPortFull = WebPort.farewell(.portFull, maxConnections: maxConnections)
            do {
                webChannel = try await listener.acceptAlso(
                    configuration: configuration, port: webPort, group: group,
                    farewell: { refusal in
                        if case .portFull = refusal { return webPortFull }
                        return WebPort.farewell(refusal, maxConnections: maxConnections)
                    }, refusalLinger: WebPort.refusalLinger,
                    tls: tls.map { TLSPortSetup(tls: $0, plaintextAnswer: WebPort.plaintextAnswer) },
                    setUp: WebPort.pipeline(configuration: configuration), makeHandler: makeHandler)
            } catch {
                await NativeListener(
                    listener: listener, storageOutages: storageOutages, webChannel: nil,
                    resultWaitAtShutdown: configuration.resultWaitAtShutdown
                ).close()
                throw PortBindError(
                    port: "web", host: configuration.host, hostFlag: "--host", number: webPort, portFlag: "--web-port", offFlag: "--no-web",
                    error: error)
            }
        }
        return NativeListener(
            listener: listener, storageOutages: storageOutages, webChannel: webChannel,
            resultWaitAtShutdown: configuration.resultWaitAtShutdown)
    }

    /// How many connections are open, sessions live and matches running (for tests and the admin page).
    public func counts() async throws -> (connections: Int, sessions: Int, matches: Int) {
        try await self.listener.inspect { world, connections in (connections.count, world.sessions.count, world.matchCount) }
    }

    /// The running matches, lowest id first, at most `limit`, and how many run in all (for the
    /// admin page, which asks every 2 s). The world's loop, which every match shares, only
    /// copies the ids and then describes the `limit` first: the sort is done off it.
    public func runningMatches(limit: Int) async throws -> (total: Int, matches: [RunningMatchSummary]) {
        let ids = try await self.listener.inspect { world, _ in Array(world.matches.keys) }
        let first = Array(ids.sorted().prefix(max(0, limit)))
        let matches = try await self.listener.inspect { world, _ in
            // One that ended meanwhile is left out.
            first.compactMap { id -> RunningMatchSummary? in
                guard let match = world.matches[id], !match.isEnded else { return nil }
                let info = match.info()
                return RunningMatchSummary(
                    id: info.matchID, mode: info.mode, label: info.label, players: info.players.count,
                    connected: info.players.filter { $0.presence == .connected }.count, capacity: Int(info.capacity),
                    isPrivate: !info.inviteCode.isEmpty)
            }
        }
        return (ids.count, matches)
    }

    /// Bans `playerID` with `reason` (or, with nil, lifts its ban), for `lasting` from now (nil:
    /// until lifted): committed to the store first, then its sign-ins are refused with ERROR
    /// `PLAYER_BANNED` and a session it has ends with that error. Returns once all of that is
    /// done. A ban that has ended lets the player sign in again, with nothing more to do.
    /// - Returns: the ban made, nil when lifted.
    /// - Throws: ``GameStoreError/unknownPlayer(_:)`` for a player the store does not know, or
    ///   the store's failure.
    @discardableResult
    public func setBan(reason: String?, lasting: Duration? = nil, of playerID: PlayerID) async throws -> PlayerBan? {
        try await self.onWorld { world, done in
            let since = world.storage.now()
            // Its end to the whole second (rounded up), as the player is told it.
            let ban = reason.map { PlayerBan(reason: $0, since: since, until: lasting.map { since.adding($0).roundedUpToSecond }) }
            world.setBan(ban, of: playerID) { result in done.completeWith(result.map { ban }) }
        }
    }

    /// Lifts `playerID`'s ban (``setBan(reason:lasting:of:)`` with none); returns whether one
    /// was in force, read on the loop with the lift itself.
    public func liftBan(of playerID: PlayerID) async throws -> Bool {
        try await self.onWorld { world, done in
            let wasInForce = world.bans[playerID]?.isInForce(at: world.storage.now()) == true
            world.setBan(nil, of: playerID) { result in done.completeWith(result.map { wasInForce }) }
        }
    }

    /// The bans in force now, the latest made first: what the world holds in memory to refuse
    /// sign-ins, so no read of the store.
    public func bansInForce() async throws -> [PlayerBanRecord] {
        try await self.listener.inspect { world, _ in PlayerBanRecord.inForce(world.bans, at: world.storage.now()) }
    }

    /// Every ban made, of `playerID` (nil: of every player), the latest made first, at most
    /// `limit` (``GameStore/banRecords(playerID:limit:)``), read off the loop once every ban
    /// change made so far is stored.
    public func banRecords(of playerID: PlayerID?, limit: Int) async throws -> [PlayerBanRecord] {
        try await self.onWorld { world, done in
            world.storage.readAfterQueuedWrites({ store in try await store.banRecords(playerID: playerID, limit: limit) }) {
                done.completeWith($0)
            }
        }
    }

    /// The operator's unlink: removes `deviceID` from `playerID`'s devices, as UNLINK_DEVICE
    /// does (committed first; every token of the player is revoked, and the device's secret no
    /// longer signs in), then ends the player's session with ERROR `SESSION_REVOKED`, so that
    /// the unlinked device cannot stay signed in. Returns once all of that is done.
    /// - Throws: ``GameStoreError/unknownDevice(deviceID:)`` for a device that is not the player's,
    ///   ``GameStoreError/lastDevice(_:)`` for its only device, or the store's failure.
    public func unlinkDevice(_ deviceID: String, of playerID: PlayerID) async throws {
        try await self.onWorld { world, done in world.unlinkByOperator(deviceID, of: playerID) { done.completeWith($0) } }
    }

    /// A link code for `playerID` made by the operator, good for one new device and
    /// ``ServerConfiguration/linkCodeLifetime``, replacing the player's last code: how a player
    /// who lost every device gets one back (AUTHENTICATE method 3).
    /// - Throws: ``GameStoreError/unknownPlayer(_:)``, ``GameStoreError/tooManyDevices(_:limit:)``
    ///   for a player at `--max-devices-per-player`, or the store's failure.
    public func createLinkCode(for playerID: PlayerID) async throws -> (code: String, expiresAt: UnixMillis) {
        try await self.onWorld { world, done in world.linkCodeByOperator(for: playerID) { done.completeWith($0) } }
    }

    /// The operator takes `playerID`'s account back from whoever holds its devices: every
    /// device is removed, its only one too, and every token revoked, in one commit; its session
    /// ends with ERROR `SESSION_REVOKED`; then a link code is made for the owner's device, as
    /// ``createLinkCode(for:)`` makes one. Returns the devices removed (in byte order) and the code.
    /// - Throws: ``GameStoreError/unknownPlayer(_:)``, or the store's failure.
    public func recoverAccount(of playerID: PlayerID) async throws -> (removed: [String], code: String, expiresAt: UnixMillis) {
        try await self.onWorld { world, done in world.recoverByOperator(playerID) { done.completeWith($0) } }
    }

    /// The operator changes `playerID`'s alias, its lock, or both, and returns the player once
    /// that is committed. A given alias must pass the rules SET_ALIAS applies
    /// (`--max-alias-length` and the rest); while locked, the player's SET_ALIAS gets ALIAS_LOCKED.
    /// - Throws: ``NativeError`` `BAD_ARGUMENT` (the reason) for an alias the rules refuse,
    ///   ``GameStoreError/unknownPlayer(_:)``, or the store's failure.
    public func changeAlias(of playerID: PlayerID, _ change: OperatorAliasChange) async throws -> PlayerRecord {
        try await self.onWorld { world, done in world.renameByOperator(playerID, change) { done.completeWith($0) } }
    }

    /// Runs `body` on the world's loop, and returns what it completes `done` with.
    private func onWorld<Value: Sendable>(_ body: @escaping @Sendable (NativeWorld, EventLoopPromise<Value>) -> Void) async throws -> Value {
        let state = self.listener.state
        let loop = self.listener.worldLoop.eventLoop
        let done = loop.makePromise(of: Value.self)
        loop.execute { body(state.value.world, done) }
        return try await done.futureResult.get()
    }

    /// How many store calls of `player`'s queue are running or waiting now (for tests: that
    /// one was made).
    func storeCallsQueued(forPlayer player: PlayerID) async throws -> Int {
        try await self.listener.inspect { world, _ in world.storage.callsQueued(in: .player(player)) }
    }

    /// The bans the world holds in memory now (for tests: what it refuses without a read).
    func bansHeld() async throws -> [PlayerID: PlayerBan] {
        try await self.listener.inspect { world, _ in world.bans }
    }

    /// Stops accepting, ends every match (MATCH_ENDED) and session (ERROR SHUTTING_DOWN), and
    /// closes every connection. A match that had just finished is told its result once it is
    /// committed (waiting at most ``ServerConfiguration/resultWaitAtShutdown``), before its players' sessions end.
    public func close() async {
        try? await self.listener.serverChannel.close()
        try? await self.webChannel?.close()
        let loop = self.listener.worldLoop.eventLoop
        let writes = try? await self.listener.inspect { world, _ in
            world.endMatchesForShutdown()
            return world.storage.inFlight
        }
        if let writes, !writes.isEmpty {
            let settled = loop.makePromise(of: Void.self)
            let timeout = loop.scheduleTask(in: self.resultWaitAtShutdown) { settled.succeed() }
            EventLoopFuture.andAllComplete(writes, on: loop).whenComplete { _ in
                timeout.cancel()
                settled.succeed()
            }
            try? await settled.futureResult.get()
        }
        await self.listener.close { world in world.shutDown() }
        // What the shutdown recorded (matches abandoned) is still being written.
        await self.listener.finishStoreWrites { world in world.storage }
    }
}
