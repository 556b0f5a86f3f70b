import Logging
import MatchHostWire
import NIOCore
import NIOConcurrencyHelpers
import NIOPosix
import NIOSSL

/// A client of a MatchHost server's native protocol: authentication, requests, relay, presence,
/// and a session that survives dropped connections without losing or repeating a message.
///
/// ```swift
/// let client = MatchHostClient(configuration: .init(
///     host: "127.0.0.1", credentials: .device(id: deviceID, secret: storedSecret)))
/// let session = try await client.connect()
/// if !session.deviceSecret.isEmpty { store(session.deviceSecret) }   // first contact
/// let match = try await client.createMatch(mode: "relay", maxPlayers: 4, label: "friday")
/// try await client.send([1, 2, 3], in: match.matchID)
/// for try await event in client.events { ... }
/// await client.close()
/// ```
///
/// **Reliability.** Reliable messages (requests, and sends with `reliable: true`) are numbered
/// and kept until the server acknowledges them. When the connection drops (end of stream, an
/// error, or nothing received for the server's idle timeout) the client reconnects on its own,
/// following ``Configuration/reconnectPolicy``, resumes the session and resends exactly what the
/// server has not received; the server does the same, and duplicates are dropped by number, so
/// each reliable message arrives once and in order. Meanwhile sends are queued, up to
/// ``Configuration/maximumSendQueueBytes``.
///
/// **A lost session.** Sessions live in the server's memory: after a server restart, or once
/// the session's grace period has run out, `RESUME` is refused with `SESSION_NOT_FOUND`. The
/// client then authenticates again (with its session token, which outlives a restart, or its
/// own credentials) and goes on in a new session
/// (``Configuration/reauthenticatesAfterSessionLoss``, on by default): requests waiting for an
/// answer fail with ``MatchHostClientError/sessionLost(_:)``, ``events`` continues with
/// ``Event/sessionRestarted(_:)``, which hands back the reliable messages the server never
/// acknowledged (not resent: they may have been handled), then ``Event/matchResumed(_:)`` for
/// each stored match the server kept for the player. Other refusals (`RESUME_REFUSED`,
/// `SESSION_REPLACED`, ...), and `SESSION_NOT_FOUND` with that option off, close the client:
/// its state becomes ``ConnectionState/closed(_:)``, waiting requests fail, ``events`` ends
/// with the error.
///
/// **A server that stops.** A graceful stop (SIGTERM: a deploy, a rolling restart) ends every
/// session with `SHUTTING_DOWN`. The client takes it as "back soon" and rides through it as
/// through a crash (``Configuration/reconnectsAfterServerShutdown``, on by default):
/// ``events`` yields ``Event/serverShuttingDown(_:)``, the client reconnects following
/// ``Configuration/reconnectPolicy`` and, once the server answers, goes on in a new session as
/// above. Off, or if the server is not back within the policy's limits, the client closes.
///
/// **Threads.** All of the client's state lives on one event loop of the group it is given; every
/// call hops there once. Messages from the server are handled on that loop and handed to
/// ``events`` without creating a task per message.
///
/// Call ``close()`` when done: it ends the session on the server and frees the connection.
public final class MatchHostClient: Sendable {
    /// The configuration the client was created with.
    public let configuration: Configuration
    /// The event loop all of the client's work runs on.
    public let eventLoop: any EventLoop
    /// What happens in the player's matches (presence, data, match ends), in the order the
    /// server sent it. One consumer; events wait, unbounded, until it reads them, so nothing is
    /// lost between ``connect()`` and the start of iteration. Finishes when the client closes:
    /// normally after ``close()``, throwing ``MatchHostClientError/closed(_:)`` otherwise.
    public let events: AsyncThrowingStream<Event, any Error>
    private let session: NIOLoopBoundBox<ClientSession>
    private let builtTLSContext = NIOLockedValueBox<NIOSSLContext?>(nil)

    /// Creates a client; nothing happens on the network until ``connect()``.
    /// - Parameters:
    ///   - configuration: the server, the credentials and the client's limits.
    ///   - eventLoopGroup: where the connection runs (one loop of it is chosen).
    ///   - logger: where the client logs (at `debug` and below, except problems).
    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "matchhost.client")
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoopGroup.next()
        let (events, continuation) = AsyncThrowingStream.makeStream(
            of: Event.self, throwing: (any Error).self, bufferingPolicy: .unbounded)
        self.events = events
        self.session = NIOLoopBoundBox.makeBoxSendingValue(
            ClientSession(configuration: configuration, eventLoop: self.eventLoop, logger: logger, events: continuation),
            eventLoop: self.eventLoop)
    }

    /// The client's state now.
    public var state: ConnectionState {
        get async { await self.onLoop { $0.state } ?? .closed(.closedByClient) }
    }

    /// Every state change from now on, starting with the current state, until (and including)
    /// ``ConnectionState/closed(_:)``. Each call makes a new stream; any number may be observed.
    public func stateChanges() -> AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectionState.self, bufferingPolicy: .unbounded)
        let session = self.session
        self.eventLoop.execute {
            session.value.addStateObserver(continuation, box: session)
        }
        return stream
    }

    /// The session the server issued at ``connect()`` (or, after
    /// ``Event/sessionRestarted(_:)``, when the client authenticated again): player id, session
    /// token, and so on. `nil` before the first successful ``connect()``.
    public var authenticated: NativeAuthenticated? {
        get async { await self.onLoop { $0.authenticated } ?? nil }
    }

    /// The matches the server seated this session in again as it began (MATCH_RESUMED: saved
    /// turn-based games, after a server restart), in the order they came; each is also an
    /// ``Event/matchResumed(_:)``. They follow AUTHENTICATED at once: a round trip after
    /// ``connect()`` (``ping()``) is enough for all of them to have arrived. Emptied when a new
    /// session begins.
    public var resumedMatches: [NativeMatchInfo] {
        get async { await self.onLoop { $0.resumedMatches } ?? [] }
    }

    /// The round-trip time measured by the latest answered heartbeat ping, if any
    /// (see ``Configuration/heartbeatInterval``).
    public var roundTripTime: TimeAmount? {
        get async { await self.onLoop { $0.roundTripTime } ?? nil }
    }

    /// How many requests wait for an answer now. Internal: tests use it to know that a request
    /// made from another task has reached the client before the network changes under it.
    var waitingRequestCount: Int {
        get async { await self.onLoop { $0.waitingRequestCount } ?? 0 }
    }

    /// Pings the server and waits for its answer.
    /// - Returns: the round-trip time (also kept in ``roundTripTime``).
    /// - Throws: ``MatchHostClientError/connectionFailed(_:)`` if there is no live connection or
    ///   no answer within ``Configuration/requestTimeout``; ``MatchHostClientError/notConnected``,
    ///   ``MatchHostClientError/closed(_:)``.
    public func ping() async throws -> TimeAmount {
        let session = self.session
        let timeout = self.configuration.requestTimeout
        return try await self.eventLoop.flatSubmit { session.value.ping(timeout: timeout) }.get()
    }

    /// Connects, says `HELLO`, authenticates with ``Configuration/credentials`` and starts a
    /// session.
    ///
    /// On a device's first contact the result carries a new ``NativeAuthenticated/deviceSecret``:
    /// store it, it is the only way back to this player from this device.
    ///
    /// - Returns: what the server said in `AUTHENTICATED`.
    /// - Throws: ``NativeError`` when the server refuses (`UNKNOWN_GAME`, `UNSUPPORTED_VERSION`,
    ///   `AUTHENTICATION_FAILED`, `TOKEN_INVALID`, `TOKEN_EXPIRED`, ...);
    ///   ``MatchHostClientError/connectionFailed(_:)`` or ``MatchHostClientError/handshakeTimedOut``
    ///   when the server cannot be reached. After any of these the state is
    ///   ``ConnectionState/disconnected`` and `connect()` may be called again.
    @discardableResult
    public func connect() async throws -> NativeAuthenticated {
        let session = self.session
        let tls = try self.tlsContext()
        return try await self.eventLoop.flatSubmit { session.value.connect(tls: tls) }.get()
    }

    /// The TLS context, built by the first ``connect()`` that needs it (off the event loop: it
    /// reads certificates from disk) and kept for every connection after.
    private func tlsContext() throws -> NIOSSLContext? {
        guard let tls = self.configuration.tls else { return nil }
        return try self.builtTLSContext.withLockedValue { built in
            if let built { return built }
            let context = try tls.makeContext()
            built = context
            return context
        }
    }

    /// Sends a request and waits for its answer.
    ///
    /// The request is reliable: if the connection drops meanwhile it is resent after the
    /// session resumes, and the answer still comes back. If the session cannot be resumed (the
    /// server lost it) the request fails with ``MatchHostClientError/sessionLost(_:)``.
    /// - Parameters:
    ///   - request: what to ask.
    ///   - timeout: how long to wait; ``Configuration/requestTimeout`` if `nil`.
    /// - Throws: ``NativeError`` for a `REQUEST_ERROR` (`NO_SUCH_MATCH`, `MATCH_FULL`, ...);
    ///   ``MatchHostClientError/requestTimedOut(requestID:after:)`` when no answer came in time;
    ///   ``MatchHostClientError/sendQueueFull(bytes:limit:)``, ``MatchHostClientError/notConnected``,
    ///   ``MatchHostClientError/closed(_:)``.
    public func request(_ request: NativeRequest, timeout: TimeAmount? = nil) async throws -> NativeResponse {
        let timeout = timeout ?? self.configuration.requestTimeout
        let session = self.session
        return try await self.eventLoop.flatSubmit { session.value.request(request, timeout: timeout) }.get()
    }

    /// Creates a match and seats this player in it.
    /// - Parameters:
    ///   - mode: the game mode (`relay` forwards every ``send(_:to:in:reliable:)``).
    ///   - maxPlayers: the most players; 0 takes the mode's default.
    ///   - label: free text shown to players (a room name, say).
    /// - Returns: the match, with this player in it.
    public func createMatch(mode: String = "relay", maxPlayers: UInt8 = 0, label: String = "", isPrivate: Bool = false)
        async throws -> NativeMatchInfo
    {
        guard mode.utf8.count <= NativeLimits.mode, label.utf8.count <= NativeLimits.identifier else {
            throw MatchHostClientError.invalidArgument("mode is at most 64 bytes and label at most 255")
        }
        return try Self.matchInfo(
            from: await self.request(.createMatch(mode: mode, maxPlayers: maxPlayers, label: label, isPrivate: isPrivate)))
    }

    /// Seats this player in an existing match.
    /// - Returns: the match, with the players already there.
    public func joinMatch(_ matchID: MatchIdentifier) async throws -> NativeMatchInfo {
        try Self.matchInfo(from: await self.request(.joinMatch(matchID)))
    }

    /// Takes this player out of a match; the others see it leave.
    public func leaveMatch(_ matchID: MatchIdentifier) async throws {
        let response = try await self.request(.leaveMatch(matchID))
        guard case .matchLeft = response else {
            throw MatchHostClientError.protocolViolation("LEAVE_MATCH answered with \(response)")
        }
    }

    static func matchInfo(from response: NativeResponse) throws -> NativeMatchInfo {
        guard case .matchJoined(let info) = response else {
            throw MatchHostClientError.protocolViolation("expected MATCH_JOINED, got \(response)")
        }
        return info
    }

    /// Sends bytes to players of a match (`SEND_DATA`); they receive them as
    /// ``Event/matchData(matchID:sender:payload:reliable:)``.
    ///
    /// A reliable send is queued (while reconnecting too) and arrives exactly once, in order
    /// with every other reliable message; it returns once queued, not once delivered (if the
    /// server loses the session before acknowledging it, it is handed back in
    /// ``Event/sessionRestarted(_:)`` instead of being resent). An
    /// unreliable send is written at once if the connection is up and keeping up, and dropped
    /// otherwise; it is never resent.
    /// - Parameters:
    ///   - payload: the bytes.
    ///   - targets: the player ids to send to; empty sends to every other player of the match.
    ///   - matchID: the match.
    ///   - reliable: `RELIABLE` (the default) or `UNRELIABLE`.
    /// - Throws: ``MatchHostClientError/sendQueueFull(bytes:limit:)`` when the reliable queue is
    ///   full (nothing is dropped silently), ``MatchHostClientError/messageTooLarge(bytes:limit:)``,
    ///   ``MatchHostClientError/notConnected``, ``MatchHostClientError/closed(_:)``.
    public func send(
        _ payload: ByteBuffer, to targets: [String] = [], in matchID: MatchIdentifier, reliable: Bool = true
    ) async throws {
        guard targets.count <= Int(UInt8.max), targets.allSatisfy({ $0.utf8.count <= 255 }) else {
            throw MatchHostClientError.invalidArgument("at most 255 targets of at most 255 bytes each")
        }
        let message = NativeClientMessage.sendData(matchID: matchID, targets: targets, payload: payload).encoded()
        try await self.send(message: message, reliable: reliable)
    }

    /// Sends an input to the game a match runs (`MATCH_INPUT`), in that game's encoding (for
    /// `catrace`, a Cat Race client message body); the game answers with
    /// ``Event/matchEvent(matchID:event:reliable:)``. Reliable and unreliable as for
    /// ``send(_:to:in:reliable:)``.
    public func sendInput(_ input: ByteBuffer, in matchID: MatchIdentifier, reliable: Bool = true) async throws {
        let message = NativeClientMessage.matchInput(matchID: matchID, input: input).encoded()
        try await self.send(message: message, reliable: reliable)
    }

    private func send(message: ByteBuffer, reliable: Bool) async throws {
        let session = self.session
        if self.eventLoop.inEventLoop {
            try session.value.send(message: message, reliable: reliable)
        } else {
            try await self.eventLoop.submit { try session.value.send(message: message, reliable: reliable) }.get()
        }
    }

    /// Sends bytes to players of a match; see ``send(_:to:in:reliable:)``.
    public func send(
        _ payload: [UInt8], to targets: [String] = [], in matchID: MatchIdentifier, reliable: Bool = true
    ) async throws {
        try await self.send(ByteBuffer(bytes: payload), to: targets, in: matchID, reliable: reliable)
    }

    /// Ends the session: sends everything queued, then `GOODBYE` (the player's matches see it
    /// leave), and closes the connection. Waiting requests fail with
    /// ``MatchHostClientError/closed(_:)``; ``events`` finishes. Safe to call more than once.
    public func close() async {
        let session = self.session
        let closed = self.eventLoop.flatSubmit { session.value.close() }
        try? await closed.get()
    }

    /// Drops the TCP connection without `GOODBYE`, as a network failure would; the client then
    /// reconnects and resumes its session as it would after a real failure. For testing how a
    /// game copes with a connection loss.
    public func dropConnection() async {
        let session = self.session
        try? await self.eventLoop.flatSubmit { session.value.dropConnection() }.get()
    }

    private func onLoop<Value: Sendable>(_ body: @escaping @Sendable (ClientSession) -> Value) async -> Value? {
        let session = self.session
        return try? await self.eventLoop.submit { body(session.value) }.get()
    }
}
