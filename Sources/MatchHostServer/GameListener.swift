import Logging
import MatchHostCore
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

    /// Builds an admitted connection's pipeline: adds the game's handler at once (TCP), or
    /// after a handshake of its own (the WebSocket port's HTTP upgrade). Runs on the world's loop.
    typealias PipelineSetup = @Sendable (_ channel: any Channel, _ makeHandler: @escaping @Sendable () -> any ChannelHandler) throws -> Void

    /// The pipeline of a plain TCP port: the game's handler is the whole of it.
    static var handlerOnly: PipelineSetup {
        { channel, makeHandler in try channel.pipeline.syncOperations.addHandler(makeHandler()) }
    }

    let localAddress: SocketAddress
    let serverChannel: any Channel
    let worldLoop: WorldLoop
    let state: State

    /// Creates the world on one loop of `group` (or on `worldLoop`) and binds `port`.
    /// - Parameters:
    ///   - worldLoop: the loop for the world and its connections; another listener's, so that
    ///     both worlds can reach each other's matches without a hop, and share its timers.
    ///     Default: a new one on the group's next loop.
    ///   - portName: the port's name in the log and metrics (`catrace`, `native`).
    ///   - portFlag: the flag that sets the port, named by the ``PortBindError`` thrown when it
    ///     cannot be bound.
    ///   - farewell: the frame a refused connection (over `--max-connections` or
    ///     `--max-connections-per-address`) gets before it is closed; nil for a protocol that has
    ///     no way to say it.
    ///   - makeWorld: builds the world, on its loop, with the loop's match clock.
    ///   - makeHandler: builds one connection's handler, on the world's loop.
    static func bind(
        configuration: ServerConfiguration, port: Int, group: any EventLoopGroup, worldLoop: WorldLoop? = nil,
        portName: String, portFlag: String, logger: Logger, tls: TLSPortSetup? = nil, farewell: (@Sendable (ConnectionRefusal) -> ByteBuffer)?,
        makeWorld: @escaping @Sendable (EventLoopClock) -> World,
        makeHandler: @escaping @Sendable (World, FlushCoalescer) -> any ChannelHandler
    ) async throws -> GameListener<World> {
        let sharedLoop = worldLoop
        let worldLoop: WorldLoop
        if let sharedLoop {
            worldLoop = sharedLoop
        } else {
            worldLoop = try await WorldLoop.open(on: group.next(), flushBudget: configuration.flushBudget)
        }
        let loop = worldLoop.eventLoop
        let clock = worldLoop.clock
        let state = try await loop.submit {
            worldLoop.retain()
            let connections = ConnectionRegistry(
                maximum: configuration.maxConnections, maximumPerAddress: configuration.maxConnectionsPerAddress, port: portName,
                logger: logger)
            return State((world: makeWorld(clock.value), connections: connections), eventLoop: loop)
        }.get()
        let channel: any Channel
        do {
            channel = try await Self.accept(
                configuration: configuration, port: port, group: group, loop: loop, state: state, flusher: worldLoop.flusher, farewell: farewell,
                tls: tls, setUp: Self.handlerOnly, makeHandler: makeHandler)
        } catch {
            throw PortBindError(port: portName, host: configuration.host, hostFlag: "--host", number: port, portFlag: portFlag, error: error)
        }
        guard let address = channel.localAddress else {
            throw ListenerError.noLocalAddress
        }
        return GameListener(localAddress: address, serverChannel: channel, worldLoop: worldLoop, state: state)
    }

    /// Accepts connections on another port into this listener's world, counted by the same
    /// registry (so `--max-connections` bounds both ports together), each set up by `setUp`.
    /// Returns the bound server channel; the caller closes it before ``close(shutDown:)``.
    func acceptAlso(
        configuration: ServerConfiguration, port: Int, group: any EventLoopGroup, farewell: (@Sendable (ConnectionRefusal) -> ByteBuffer)?,
        refusalLinger: TimeAmount? = nil, tls: TLSPortSetup? = nil, setUp: @escaping PipelineSetup,
        makeHandler: @escaping @Sendable (World, FlushCoalescer) -> any ChannelHandler
    ) async throws -> any Channel {
        try await Self.accept(
            configuration: configuration, port: port, group: group, loop: self.worldLoop.eventLoop, state: self.state, flusher: self.worldLoop.flusher,
            farewell: farewell, refusalLinger: refusalLinger, tls: tls, setUp: setUp, makeHandler: makeHandler)
    }

    private static func accept(
        configuration: ServerConfiguration, port: Int, group: any EventLoopGroup, loop: any EventLoop, state: State,
        flusher: NIOLoopBound<FlushCoalescer>, farewell: (@Sendable (ConnectionRefusal) -> ByteBuffer)?, refusalLinger: TimeAmount? = nil,
        tls: TLSPortSetup? = nil, setUp: @escaping PipelineSetup,
        makeHandler: @escaping @Sendable (World, FlushCoalescer) -> any ChannelHandler
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group, childGroup: loop)
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
                    if let refusal = state.value.connections.admit(channel) {
                        guard let tls else {
                            let linger = refusalLinger.flatMap { state.value.connections.mayLinger(channel) ? $0 : nil }
                            try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler(farewell: farewell?(refusal), linger: linger))
                            return
                        }
                        // Told why only after a handshake: that holds the connection a while,
                        // so as many at once as may linger, and the rest closed at once.
                        guard state.value.connections.mayLinger(channel) else {
                            channel.close(promise: nil)
                            return
                        }
                        try channel.pipeline.syncOperations.addHandler(
                            TLSPortGate(port: tls, refusal: RefusedConnectionHandler(farewell: farewell?(refusal), linger: refusalLinger)))
                        return
                    }
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(TLSPortGate(port: tls))
                    }
                    try setUp(channel) { makeHandler(state.value.world, flusher.value) }
                }
            }
            .bind(host: configuration.host, port: port)
            .get()
    }

    /// Stops accepting; runs `shutDown` on the world (it tells players why), then flushes and
    /// closes every connection.
    func close(shutDown: @escaping @Sendable (World) -> Void) async {
        try? await self.serverChannel.close()
        let state = self.state
        let open: [any Channel] =
            (try? await self.worldLoop.eventLoop.submit {
                shutDown(state.value.world)
                return state.value.connections.all
            }.get()) ?? []
        // All at once: a TLS connection's close waits for its client's close_notify (up to
        // a second), and a thousand of them one after another would hold the stop for minutes.
        let closed = open.map { channel in
            // Flush what the shutdown said before closing.
            channel.flush()
            return channel.close()
        }
        try? await EventLoopFuture.andAllComplete(closed, on: self.worldLoop.eventLoop).get()
        await self.worldLoop.closeIfLast()
    }

    /// Runs `body` on the world's loop.
    func inspect<Value: Sendable>(_ body: @escaping @Sendable (World, ConnectionRegistry) -> Value) async throws -> Value {
        let state = self.state
        return try await self.worldLoop.eventLoop.submit { body(state.value.world, state.value.connections) }.get()
    }
}

/// How a port speaks TLS (``TLSPortGate``): its context, and what a client that speaks
/// plaintext to it reads before the close.
struct TLSPortSetup: Sendable {
    /// The certificate and key, reloadable.
    let tls: ServerTLS
    /// One whole frame or response in the port's plaintext protocol.
    let plaintextAnswer: ByteBuffer

    /// How long a refused connection may take to finish its handshake and read why.
    static let refusalDeadline = TimeAmount.seconds(5)
    /// How long a plaintext client has to read the answer before the close (its request,
    /// unread, would otherwise reset the connection and could destroy the answer).
    static let plaintextLinger = TimeAmount.seconds(2)
}

/// The loop a world lives on, with the one clock that runs all its matches' timers.
///
/// Two listeners that share a loop share this too, so that one timer queue decides when the
/// loop's ticks yield to its sockets (two queues could keep each other due forever).
final class WorldLoop: Sendable {
    /// The loop.
    let eventLoop: any EventLoop
    /// The match clock every world on the loop uses.
    let clock: NIOLoopBound<EventLoopClock>
    /// The flushes of every connection on the loop, whichever port's: one budget a pass, and
    /// one backlog that waits for the loop's polls as the clock's overdue timers do.
    let flusher: NIOLoopBound<FlushCoalescer>
    private let doorbell: NIOLoopBound<IOPassDoorbell>
    private let users: NIOLoopBoundBox<Int>

    private init(
        eventLoop: any EventLoop, clock: NIOLoopBound<EventLoopClock>, flusher: NIOLoopBound<FlushCoalescer>,
        doorbell: NIOLoopBound<IOPassDoorbell>
    ) {
        self.eventLoop = eventLoop
        self.clock = clock
        self.flusher = flusher
        self.doorbell = doorbell
        self.users = NIOLoopBoundBox.makeBoxSendingValue(0, eventLoop: eventLoop)
    }

    /// Opens the loop's doorbell, clock and flush coalescer.
    /// - Parameter flushBudget: ``ServerConfiguration/flushBudget``.
    static func open(on loop: any EventLoop, flushBudget: TimeAmount = .milliseconds(4)) async throws -> WorldLoop {
        let doorbell = try await IOPassDoorbell.open(on: loop)
        let (clock, flusher) = try await loop.submit {
            let afterNextPoll: (@escaping () -> Void) -> Void = { body in doorbell.value.afterNextPoll(body) }
            return (
                NIOLoopBound(EventLoopClock(eventLoop: loop, yieldToIO: afterNextPoll), eventLoop: loop),
                NIOLoopBound(FlushCoalescer(eventLoop: loop, budget: flushBudget, yieldToIO: afterNextPoll), eventLoop: loop)
            )
        }.get()
        return WorldLoop(eventLoop: loop, clock: clock, flusher: flusher, doorbell: doorbell)
    }

    /// Counts one more listener on the loop; call on the loop.
    func retain() {
        self.users.value += 1
    }

    /// Closes the doorbell when the last listener on the loop closes.
    func closeIfLast() async {
        try? await self.eventLoop.submit {
            self.users.value -= 1
            if self.users.value <= 0 { self.doorbell.value.close() }
        }.get()
    }
}

/// A listener could not start.
enum ListenerError: Error, CustomStringConvertible {
    case noLocalAddress

    var description: String { "the listener has no local address after bind" }
}
