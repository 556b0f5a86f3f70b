import Logging
import MatchHostWire
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client for the Cat Race protocol (the 2011 tutorial's protocol, MatchHost port 1955).
///
/// ```swift
/// let client = try await CatRaceClient.connect(host: "127.0.0.1", port: 1955, playerID: "G:1", alias: "Ann")
/// for try await message in client.messages {
///     switch message {
///     case .notInMatch: try await client.startMatch(with: ["G:1", "G:2"])
///     case .matchStarted(let started): ...
///     default: break
///     }
/// }
/// await client.close()
/// ```
///
/// `connect` sends PLAYER_CONNECTED; the server answers NOT_IN_MATCH or MATCH_STARTED, which
/// arrive like every other server message, through ``messages`` or ``next(timeout:)``.
///
/// **Backpressure.** A send goes to the channel at once while the channel is writable (the
/// bytes waiting for the socket are under ``Configuration/writeBufferHighWatermark``);
/// otherwise it suspends until the channel drains, and at most
/// ``Configuration/maxPendingSends`` sends may wait. Received messages wait in an inbox of at
/// most ``Configuration/maxBufferedMessages``; while it is full the client stops reading the
/// socket, so a slow consumer slows the server's writes instead of growing memory.
///
/// The client does not reconnect. All methods may be called from any task.
public final class CatRaceClient: Sendable {
    /// Limits and timeouts of one connection.
    public struct Configuration: Sendable {
        /// How long `connect` waits for the TCP connection. Default 10 s.
        public var connectTimeout: TimeAmount = .seconds(10)
        /// The largest frame body accepted from the server, in bytes; a larger one ends the
        /// connection with ``CatRaceClientError/badMessage(_:)``. Default 64 KiB.
        public var maxFrameBytes: Int = FrameDecoder.defaultMaximumBodySize
        /// Received messages kept until read; reading from the socket pauses while the inbox
        /// holds this many and resumes when it is half empty. Default 256.
        public var maxBufferedMessages: Int = 256
        /// Sends that may wait while the channel is not writable; one more fails with
        /// ``CatRaceClientError/outboundQueueFull(limit:)``. Default 64.
        public var maxPendingSends: Int = 64
        /// Outbound bytes not yet written to the socket above which the channel is not
        /// writable and sends wait. Default 64 KiB.
        public var writeBufferHighWatermark: Int = 64 * 1024
        /// Outbound bytes below which the channel is writable again. Default 16 KiB.
        public var writeBufferLowWatermark: Int = 16 * 1024

        /// The default configuration.
        public init() {}
    }

    /// The player id this connection speaks for (sent in PLAYER_CONNECTED).
    public let playerID: String
    /// The display name sent in PLAYER_CONNECTED.
    public let alias: String

    private let channel: any Channel
    private let handler: NIOLoopBound<CatRaceClientHandler>
    private let logger: Logger

    private init(channel: any Channel, handler: NIOLoopBound<CatRaceClientHandler>, playerID: String, alias: String, logger: Logger) {
        self.channel = channel
        self.handler = handler
        self.playerID = playerID
        self.alias = alias
        self.logger = logger
    }

    /// Connects to a Cat Race server and sends PLAYER_CONNECTED.
    ///
    /// - Parameters:
    ///   - host: the server's host name or address.
    ///   - port: the server's Cat Race port (1955 by default on the server).
    ///   - playerID: the id to play as; the protocol does not authenticate it. At most 255 UTF-8 bytes.
    ///   - alias: the name other racers see. At most 255 UTF-8 bytes.
    ///   - continueMatch: `true` to resume a race this player is in, `false` to quit it.
    ///   - configuration: limits and timeouts.
    ///   - group: the event loops to use; by default NIO's shared singleton group.
    ///   - logger: where connection events are logged (at debug level); by default nowhere.
    /// - Returns: the connected client. Read the server's answer from ``messages`` or ``next(timeout:)``.
    /// - Throws: ``CatRaceClientError/connectFailed(host:port:reason:)`` if the connection
    ///   cannot be opened.
    public static func connect(
        host: String,
        port: Int,
        playerID: String,
        alias: String,
        continueMatch: Bool = true,
        configuration: Configuration = Configuration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "matchhost.catrace.client", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> CatRaceClient {
        let high = max(1, configuration.writeBufferHighWatermark)
        let low = min(max(0, configuration.writeBufferLowWatermark), high)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelOption(.writeBufferWaterMark, value: .init(low: low, high: high))
                .connectTimeout(configuration.connectTimeout)
                .channelInitializer { channel in
                    // One handler per channel: connecting to a name may try several addresses.
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            CatRaceClientHandler(
                                eventLoop: channel.eventLoop, maxFrameBytes: configuration.maxFrameBytes,
                                maxBufferedMessages: configuration.maxBufferedMessages,
                                maxPendingSends: configuration.maxPendingSends))
                    }
                }
                .connect(host: host, port: port)
                .get()
        } catch {
            throw CatRaceClientError.connectFailed(host: host, port: port, reason: Self.describe(error))
        }
        let handler: NIOLoopBound<CatRaceClientHandler>
        do {
            handler = try await channel.eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: CatRaceClientHandler.self), eventLoop: channel.eventLoop)
            }.get()
        } catch {
            // Closed before it could be used.
            try? await channel.close()
            throw CatRaceClientError.connectionClosed
        }
        var logger = logger
        logger[metadataKey: "player"] = "\(playerID)"
        logger.debug("connected", metadata: ["server": "\(host):\(port)"])
        let client = CatRaceClient(channel: channel, handler: handler, playerID: playerID, alias: alias, logger: logger)
        do {
            try await client.send(.playerConnected(PlayerConnected(playerID: playerID, alias: alias, continueMatch: continueMatch)))
        } catch {
            await client.close()
            throw error
        }
        return client
    }

    // MARK: Sending

    /// Sends one message.
    ///
    /// Returns once the frame has been handed to the channel (not when the server has it).
    /// Suspends while the channel is not writable.
    /// - Throws: ``CatRaceClientError/connectionClosed`` (or the error that ended the
    ///   connection) once it has ended; ``CatRaceClientError/outboundQueueFull(limit:)`` when
    ///   ``Configuration/maxPendingSends`` sends are already waiting; `CancellationError` if the
    ///   task is cancelled while waiting (the frame is then not sent).
    public func send(_ message: CatRaceClientMessage) async throws {
        var frame = self.channel.allocator.buffer(capacity: 32)
        message.encodeFrame(into: &frame)
        let loop = self.channel.eventLoop
        let handler = self.handler
        let promise = loop.makePromise(of: Void.self)
        let frameToSend = frame
        loop.execute { handler.value.send(frameToSend, promise: promise) }
        try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            loop.execute { handler.value.cancelSend(promise) }
        }
    }

    /// Sends START_MATCH: a race between these players, seated in this order. The server
    /// requires this player to be one of them and 2 to 16 distinct ids; a refusal is silent.
    public func startMatch(with playerIDs: [String]) async throws {
        try await self.send(.startMatch(StartMatch(playerIDs: playerIDs)))
    }

    /// Sends MOVED_SELF: this racer's new absolute x. The server moves the racer only if it is
    /// whole steps of ``CatRaceTrack/stepX`` ahead, and only as many of them as its tap-rate
    /// bucket holds.
    public func moved(to posX: UInt32) async throws {
        try await self.send(.movedSelf(MovedSelf(posX: posX)))
    }

    /// Sends RESTART_MATCH: race again after a win (ignored by the server while a race runs).
    public func restartMatch() async throws {
        try await self.send(.restartMatch)
    }

    /// Sends NOTIFY_READY: tells `inviterID` (if connected) that this player is ready.
    public func notifyReady(inviter inviterID: String) async throws {
        try await self.send(.notifyReady(NotifyReady(playerID: inviterID)))
    }

    // MARK: Receiving

    /// The server's messages in arrival order; the sequence ends when the connection closes
    /// and throws a ``CatRaceClientError`` if it ended on an error (after every message
    /// received before it).
    ///
    /// All iterators, and ``next(timeout:)``, read the same inbox: each message goes to
    /// exactly one reader.
    public var messages: Messages {
        Messages(client: self)
    }

    /// The next server message.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until a message arrives or the
    ///   connection ends.
    /// - Returns: the message, or `nil` once the connection has closed and every message
    ///   received before the close has been read.
    /// - Throws: ``CatRaceClientError/timedOut`` when nothing arrived in time (the
    ///   connection stays usable); the ``CatRaceClientError`` that ended the connection;
    ///   `CancellationError` if the task is cancelled while waiting.
    public func next(timeout: Duration? = nil) async throws -> CatRaceServerMessage? {
        let loop = self.channel.eventLoop
        let handler = self.handler
        let promise = loop.makePromise(of: CatRaceServerMessage?.self)
        let amount = timeout.map { Self.timeAmount($0) }
        loop.execute { handler.value.next(promise: promise, timeout: amount) }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            loop.execute { handler.value.failWaiter(promise, with: CancellationError()) }
        }
    }

    // MARK: Closing

    /// Closes the connection and waits until it is closed. Sends still waiting fail; messages
    /// already received can still be read, then ``next(timeout:)`` returns `nil`.
    /// Closing twice is harmless.
    public func close() async {
        self.logger.debug("closing")
        try? await self.channel.close()
        try? await self.channel.closeFuture.get()
    }

    /// Whether the connection is still open.
    public var isConnected: Bool {
        self.channel.isActive
    }

    // MARK: Helpers

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        if seconds >= Int64.max / 1_000_000_000 { return .nanoseconds(.max) }
        if seconds < 0 { return .zero }
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    static func describe(_ error: any Error) -> String {
        if let io = error as? IOError { return "\(String(cString: strerror(io.errnoCode))) (errno \(io.errnoCode))" }
        if let connection = error as? NIOConnectionError, let first = connection.connectionErrors.first {
            return self.describe(first.error)
        }
        if let channel = error as? ChannelError, case .connectTimeout = channel { return "connect timeout" }
        return String(describing: error)
    }
}

extension CatRaceClient {
    /// The server's messages as an `AsyncSequence` (see ``CatRaceClient/messages``).
    public struct Messages: AsyncSequence, Sendable {
        /// Each element is one server message.
        public typealias Element = CatRaceServerMessage

        let client: CatRaceClient

        /// Creates an iterator reading the client's inbox.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(client: self.client)
        }

        /// Reads the client's inbox, one message per `next()`.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let client: CatRaceClient

            /// The next message; `nil` when the connection has closed.
            public mutating func next() async throws -> CatRaceServerMessage? {
                try await self.client.next()
            }
        }
    }
}

/// Why a ``CatRaceClient`` operation failed.
public enum CatRaceClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The TCP connection could not be opened.
    case connectFailed(host: String, port: Int, reason: String)
    /// The connection is closed (by either side).
    case connectionClosed
    /// The server sent bytes that are not a valid Cat Race server message; the client closed
    /// the connection.
    case badMessage(WireError)
    /// The connection failed with an I/O error.
    case io(String)
    /// Nothing arrived within the timeout given to ``CatRaceClient/next(timeout:)``.
    case timedOut
    /// Too many sends were already waiting for the channel to become writable.
    case outboundQueueFull(limit: Int)
    /// Native only: the match ended (MATCH_ENDED), for this reason; nothing more comes for it.
    case matchEnded(reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .connectFailed(let host, let port, let reason): return "cannot connect to \(host):\(port): \(reason)"
        case .connectionClosed: return "the connection is closed"
        case .badMessage(let error): return "bad message from the server: \(error)"
        case .io(let reason): return "connection error: \(reason)"
        case .timedOut: return "timed out waiting for the server"
        case .outboundQueueFull(let limit): return "\(limit) sends already wait for the connection to drain"
        case .matchEnded(let reason): return "the server ended the match (\(reason))"
        }
    }
}
