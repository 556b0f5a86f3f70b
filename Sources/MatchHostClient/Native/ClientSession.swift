import Logging
import MatchHostWire
import NIOCore
import NIOPosix
import NIOSSL

/// The state machine behind a ``MatchHostClient``: one protocol session, across as many TCP
/// connections as it takes.
///
/// Confined to one event loop: every method runs there (the public client hops once per call;
/// the channel handlers call in directly), so there is no lock and no task per message.
final class ClientSession {
    typealias State = MatchHostClient.ConnectionState

    private struct PendingRequest {
        let promise: EventLoopPromise<NativeResponse>
        let timer: Scheduled<Void>
    }

    let configuration: MatchHostClient.Configuration
    let eventLoop: any EventLoop
    private var logger: Logger

    private(set) var state: State = .disconnected
    private var stateObservers: [Int: AsyncStream<State>.Continuation] = [:]
    private var nextObserverID = 0
    private let events: AsyncThrowingStream<MatchHostClient.Event, any Error>.Continuation

    /// The session the server issued (nil before the first `AUTHENTICATED`).
    private(set) var authenticated: NativeAuthenticated?
    /// The matches the server seated the current session in again as it began (MATCH_RESUMED).
    private(set) var resumedMatches: [NativeMatchInfo] = []
    /// The matches this session is seated in, by what the server said: joined (a response or
    /// MATCHMAKER_MATCHED) or resumed, and not left or ended since.
    private var seatedMatches: Set<MatchIdentifier> = []
    /// After a session restart: the lost session's matches that have come back neither as
    /// MATCH_RESUMED nor as MATCH_ENDED. Once a ping's answer shows that the server has said
    /// all it will for the new session (it sends those right after AUTHENTICATED), each left
    /// is reported ended (``lostMatchReason``): the server no longer has it (a relay, or a
    /// game still waiting for its second player, after a crash) or no longer seats the player.
    private var matchesToSettle: Set<MatchIdentifier>?
    /// The matches last reported ended (MATCH_ENDED, or lost at a session restart): a
    /// MATCH_ENDED the server sends again for one (after a crash that kept its copy, or for a
    /// seat handed over while the match's result was being stored) is not reported a second time.
    private var reportedEnded = RecentlyEndedMatches(capacity: 1_024)
    /// The device secret the server issued on first contact: the configured one was empty.
    private var issuedDeviceSecret: String?
    /// Set from a `SESSION_NOT_FOUND` until the next `AUTHENTICATED`: connections then
    /// authenticate instead of resuming.
    private var reauthentication: Reauthentication?
    private var welcome: NativeWelcome?
    /// Every reliable message sent and not yet acknowledged (also the bounded send queue).
    private var outbox: ReliableOutbox
    /// The reliable messages of the outbox not yet written to the current connection, oldest
    /// first (references to the outbox's buffers, not copies).
    private var unwritten = CircularBuffer<(sequence: UInt64, message: ByteBuffer)>()
    private var inbox = ReliableInbox()
    private var acknowledgementTimer: Scheduled<Void>?

    private var connection: ClientConnection?
    private var connectionCount = 0
    /// The TLS context every connection shares (``MatchHostClient/Configuration/tls``), built
    /// off the loop by the first ``connect(tls:)``.
    private var tlsContext: NIOSSLContext?
    private var pendingConnect: EventLoopPromise<NativeAuthenticated>?
    private var pendingRequests: [UInt32: PendingRequest] = [:]
    /// How many requests wait for an answer (sent, or queued while there is no connection).
    var waitingRequestCount: Int { self.pendingRequests.count }
    private var nextRequestID: UInt32 = 1
    private var reconnectAttempt = 0
    private var reconnectTimer: Scheduled<Void>?
    /// The latest measured round-trip time.
    private(set) var roundTripTime: TimeAmount?
    /// Pings sent by ``ping(timeout:)``, by the value they carry.
    private var pendingPings: [UInt64: EventLoopPromise<TimeAmount>] = [:]

    init(
        configuration: MatchHostClient.Configuration, eventLoop: any EventLoop, logger: Logger,
        events: AsyncThrowingStream<MatchHostClient.Event, any Error>.Continuation
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        self.events = events
        self.outbox = ReliableOutbox(maximumBytes: max(0, configuration.maximumSendQueueBytes))
    }

    // MARK: - State

    private func setState(_ state: State) {
        guard state != self.state else { return }
        self.logger.debug("client state", metadata: ["state": "\(state)"])
        self.state = state
        for observer in self.stateObservers.values {
            observer.yield(state)
        }
        if state.isClosed {
            for observer in self.stateObservers.values { observer.finish() }
            self.stateObservers.removeAll()
        }
    }

    /// Registers `continuation` for every state change, starting with the current state.
    func addStateObserver(_ continuation: AsyncStream<State>.Continuation, box: NIOLoopBoundBox<ClientSession>) {
        continuation.yield(self.state)
        guard !self.state.isClosed else {
            continuation.finish()
            return
        }
        let id = self.nextObserverID
        self.nextObserverID += 1
        self.stateObservers[id] = continuation
        let eventLoop = self.eventLoop
        continuation.onTermination = { _ in
            eventLoop.execute { box.value.stateObservers[id] = nil }
        }
    }

    // MARK: - Public operations

    /// Opens the first connection and authenticates.
    func connect(tls: NIOSSLContext?) -> EventLoopFuture<NativeAuthenticated> {
        switch self.state {
        case .closed(let reason):
            return self.eventLoop.makeFailedFuture(MatchHostClientError.closed(reason))
        case .disconnected:
            break
        default:
            return self.eventLoop.makeFailedFuture(MatchHostClientError.alreadyConnected)
        }
        let promise = self.eventLoop.makePromise(of: NativeAuthenticated.self)
        self.pendingConnect = promise
        self.tlsContext = tls
        self.setState(.connecting)
        self.openConnection()
        return promise.futureResult
    }

    /// Queues a request and returns its answer.
    func request(_ request: NativeRequest, timeout: TimeAmount) -> EventLoopFuture<NativeResponse> {
        let id = self.nextRequestID
        self.nextRequestID &+= 1
        if self.nextRequestID == 0 { self.nextRequestID = 1 }
        let message = NativeClientMessage.request(id: id, request).encoded()
        do {
            try self.enqueueReliable(message)
        } catch {
            return self.eventLoop.makeFailedFuture(error)
        }
        let promise = self.eventLoop.makePromise(of: NativeResponse.self)
        let timer = self.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            guard let pending = self.pendingRequests.removeValue(forKey: id) else { return }
            pending.promise.fail(MatchHostClientError.requestTimedOut(requestID: id, after: timeout))
        }
        self.pendingRequests[id] = PendingRequest(promise: promise, timer: timer)
        return promise.futureResult
    }

    /// Sends an encoded client message (`SEND_DATA`, `MATCH_INPUT`) reliably or not.
    func send(message: ByteBuffer, reliable: Bool) throws {
        if reliable {
            try self.enqueueReliable(message)
            return
        }
        try self.checkUsable()
        try self.checkFrameSize(messageBytes: message.readableBytes, header: 1)
        // Unreliable: written now if the connection can take it, dropped otherwise (as the server
        // drops unreliable messages for a player who is away).
        guard let connection = self.connection, connection.phase == .active, let channel = connection.channel,
            channel.isWritable
        else {
            self.logger.trace("unreliable message dropped: no writable connection")
            return
        }
        var buffer = channel.allocator.buffer(capacity: 5 + message.readableBytes)
        buffer.writeUnreliableFrame(message: message)
        channel.writeAndFlush(buffer, promise: nil)
    }

    /// The server seats this session in `match`: should its id be one reported ended before
    /// (ids repeat only after a restore from a backup), its end is to be reported again.
    private func seated(in match: MatchIdentifier) {
        self.seatedMatches.insert(match)
        self.reportedEnded.remove(match)
    }

    /// Sends `GOODBYE` (after everything queued) and closes for good.
    func close() -> EventLoopFuture<Void> {
        if self.state.isClosed { return self.eventLoop.makeSucceededVoidFuture() }
        guard let connection = self.connection, connection.phase == .active, let channel = connection.channel else {
            let closed = self.connection?.channel?.closeFuture
            self.finish(.closedByClient)
            return closed ?? self.eventLoop.makeSucceededVoidFuture()
        }
        // Everything queued goes out first, writability notwithstanding: TCP keeps the order,
        // so the server handles it all before GOODBYE.
        self.writeUnwritten(on: connection, respectingWritability: false)
        // What arrived is acknowledged before GOODBYE, not left to the acknowledgement timer:
        // the server keeps what a client never acknowledged (a MATCH_ENDED it stored) for the
        // next session, which would hear it again.
        self.sendOwedAcknowledgement()
        connection.phase = .finished
        connection.cancelTimers()
        self.connection = nil
        let goodbye = NativeFrame.goodbye.encodedFrame(allocator: channel.allocator)
        channel.writeAndFlush(goodbye).whenComplete { _ in channel.close(promise: nil) }
        self.finish(.closedByClient)
        return channel.closeFuture
    }

    /// Pings the server now and returns the round-trip time.
    func ping(timeout: TimeAmount) -> EventLoopFuture<TimeAmount> {
        do { try self.checkUsable() } catch { return self.eventLoop.makeFailedFuture(error) }
        guard let connection = self.connection, connection.phase == .active else {
            return self.eventLoop.makeFailedFuture(MatchHostClientError.connectionFailed("no live connection"))
        }
        var value = UInt64(NIODeadline.now().uptimeNanoseconds)
        while self.pendingPings[value] != nil { value += 1 }
        let promise = self.eventLoop.makePromise(of: TimeAmount.self)
        self.pendingPings[value] = promise
        connection.write(.ping(value))
        connection.flush()
        let sent = value
        self.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            self.pendingPings.removeValue(forKey: sent)?.fail(MatchHostClientError.connectionFailed("no answer to ping"))
        }
        return promise.futureResult
    }

    /// Fails every ping waiting for its answer.
    private func failPings(_ error: any Error) {
        let pings = self.pendingPings
        self.pendingPings.removeAll()
        for promise in pings.values { promise.fail(error) }
    }

    /// Drops the current connection without `GOODBYE`, as a network failure would.
    func dropConnection() -> EventLoopFuture<Void> {
        guard let channel = self.connection?.channel else { return self.eventLoop.makeSucceededVoidFuture() }
        channel.close(promise: nil)
        return channel.closeFuture
    }

    // MARK: - Sending

    private func checkUsable() throws {
        if case .closed(let reason) = self.state { throw MatchHostClientError.closed(reason) }
        guard self.authenticated != nil else { throw MatchHostClientError.notConnected }
    }

    private func checkFrameSize(messageBytes: Int, header: Int) throws {
        let limit = self.welcome.map { Int($0.maximumFrameBytes) } ?? self.configuration.maximumFrameBytes
        let body = header + messageBytes
        guard body <= limit else { throw MatchHostClientError.messageTooLarge(bytes: body, limit: limit) }
    }

    private func enqueueReliable(_ message: ByteBuffer) throws {
        try self.checkUsable()
        try self.checkFrameSize(messageBytes: message.readableBytes, header: 1 + 8 + 8)
        let sequence: UInt64
        do {
            sequence = try self.outbox.append(message)
        } catch {
            switch error {
            case .backlogExceeded(let bytes, let limit):
                throw MatchHostClientError.sendQueueFull(bytes: bytes, limit: limit)
            default:
                throw MatchHostClientError.sendQueueFull(bytes: message.readableBytes, limit: self.outbox.maximumBytes)
            }
        }
        self.unwritten.append((sequence, message))
        if let connection = self.connection, connection.phase == .active {
            self.writeUnwritten(on: connection, respectingWritability: true)
        }
    }

    /// Writes queued reliable messages, each with the current acknowledgement piggybacked,
    /// while the channel is writable (or all of them), then flushes.
    private func writeUnwritten(on connection: ClientConnection, respectingWritability: Bool) {
        guard let channel = connection.channel else { return }
        var wrote = false
        while !respectingWritability || channel.isWritable, let next = self.unwritten.popFirst() {
            var buffer = channel.allocator.buffer(capacity: NativeFrame.reliableHeaderSize + next.message.readableBytes)
            buffer.writeReliableFrame(sequence: next.sequence, ack: self.inbox.lastReceived, message: next.message)
            self.inbox.acknowledgedByPiggyback()
            channel.write(buffer, promise: nil)
            wrote = true
        }
        if wrote { channel.flush() }
    }

    // MARK: - Connections

    private func openConnection() {
        self.connectionCount += 1
        let connection = ClientConnection(number: self.connectionCount, maximumFrameBytes: self.configuration.maximumFrameBytes)
        self.connection = connection
        connection.handshakeTimer = self.eventLoop.assumeIsolated().scheduleTask(in: self.configuration.connectTimeout) {
            guard connection.phase != .active else { return }
            self.connection(connection, didCloseWith: MatchHostClientError.handshakeTimedOut)
        }
        let bound = NIOLoopBound((session: self, connection: connection), eventLoop: self.eventLoop)
        let highWater = max(1024, min(self.configuration.maximumSendQueueBytes, 256 * 1024))
        let tls = self.tlsContext.map { context in
            (context: context, serverHostname: self.configuration.tls?.serverHostname(host: self.configuration.host))
        }
        ClientBootstrap(group: self.eventLoop)
            .connectTimeout(self.configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.writeBufferWaterMark, value: .init(low: highWater / 2, high: highWater))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let (session, connection) = bound.value
                    connection.channel = channel
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls.context, serverHostname: tls.serverHostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ClientConnectionHandler(session: session, connection: connection))
                }
            }
            .connect(host: self.configuration.host, port: self.configuration.port)
            .hop(to: self.eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    if connection.phase == .finished || connection !== self.connection {
                        channel.close(promise: nil)
                    }
                case .failure(let error):
                    self.connection(connection, didCloseWith: MatchHostClientError.connectionFailed("\(error)"))
                }
            }
    }

    func connectionDidBecomeActive(_ connection: ClientConnection) {
        guard connection === self.connection, connection.phase == .connecting else { return }
        connection.phase = .awaitingWelcome
        connection.lastReadAt = .now()
        self.setState(self.authenticated == nil || self.reauthentication != nil ? .handshaking : .resuming)
        connection.write(.hello(version: NativeFrame.protocolVersion, gameID: self.configuration.gameID))
        connection.flush()
    }

    func connection(_ connection: ClientConnection, didRead bytes: ByteBuffer) {
        guard connection === self.connection, connection.isOpen else { return }
        connection.lastReadAt = .now()
        var bytes = bytes
        connection.accumulator.append(&bytes)
        // Stop as soon as a frame ends this connection.
        while connection === self.connection {
            let frame: NativeFrame
            do {
                guard let body = try connection.accumulator.nextFrame() else { return }
                frame = try NativeFrame(frameBody: body)
            } catch {
                self.violation("undecodable frame: \(error)")
                return
            }
            self.handle(frame, on: connection)
        }
    }

    func connectionDidFinishReadBatch(_ connection: ClientConnection) {
        guard connection === self.connection, connection.isOpen else { return }
        if connection.phase == .active, self.inbox.unacknowledgedCount > 0, self.acknowledgementTimer == nil {
            let delay = self.configuration.acknowledgementDelay
            if delay <= .zero {
                self.sendOwedAcknowledgement()
            } else {
                // One timer per delay, not per message: a RELIABLE frame sent meanwhile carries the ack.
                self.acknowledgementTimer = self.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    self.acknowledgementTimer = nil
                    self.sendOwedAcknowledgement()
                }
            }
        }
        connection.flush()
    }

    private func sendOwedAcknowledgement() {
        guard let connection = self.connection, connection.isOpen, connection.phase == .active,
            let ack = self.inbox.takeAcknowledgement()
        else { return }
        connection.write(.ack(ack))
        connection.flush()
    }

    func connectionWritabilityDidChange(_ connection: ClientConnection) {
        guard connection === self.connection, connection.phase == .active, connection.channel?.isWritable == true else {
            return
        }
        self.writeUnwritten(on: connection, respectingWritability: true)
    }

    /// The connection is gone or unusable: reconnect (a live session), or fail `connect()` (none yet).
    func connection(_ connection: ClientConnection, didCloseWith error: any Error) {
        guard connection === self.connection else { return }
        self.abandon(connection)
        self.failPings(MatchHostClientError.connectionFailed("connection lost"))
        if self.state.isClosed { return }
        self.logger.debug("connection lost", metadata: ["connection": "\(connection.number)", "error": "\(error)"])
        guard self.authenticated != nil else {
            // The first connect failed: no session to resume. connect() may be called again.
            self.welcome = nil
            let promise = self.pendingConnect
            self.pendingConnect = nil
            self.setState(.disconnected)
            promise?.fail(error)
            return
        }
        self.scheduleReconnect()
    }

    /// Stops using `connection` (the current one) and closes it.
    private func abandon(_ connection: ClientConnection) {
        self.connection = nil
        connection.phase = .finished
        connection.cancelTimers()
        connection.channel?.close(promise: nil)
    }

    private func scheduleReconnect() {
        self.reconnectAttempt += 1
        let policy = self.configuration.reconnectPolicy
        if let maximum = policy.maximumAttempts, self.reconnectAttempt > maximum {
            self.finish(.reconnectAttemptsExhausted(attempts: maximum))
            return
        }
        self.setState(.reconnecting(attempt: self.reconnectAttempt))
        let delay = policy.delay(beforeAttempt: self.reconnectAttempt)
        // Weakly: between connections only this timer would keep the session alive, so a
        // client its owner let go of (without close()) would retry a stopped server for ever.
        self.reconnectTimer = self.eventLoop.assumeIsolated().scheduleTask(in: delay) { [weak self] in
            guard let self else { return }
            self.reconnectTimer = nil
            guard !self.state.isClosed else { return }
            self.openConnection()
        }
    }

    // MARK: - Frames

    private func handle(_ frame: NativeFrame, on connection: ClientConnection) {
        switch (connection.phase, frame) {
        case (_, .error(let error)):
            self.serverError(error, on: connection)
        case (.awaitingWelcome, .welcome(let welcome)):
            self.welcomed(welcome, on: connection)
        case (.awaitingAuthenticated, .authenticated(let authenticated)):
            self.authenticated(authenticated, on: connection)
        case (.awaitingResumed, .resumed(let lastReceived)):
            self.resumed(serverLastReceived: lastReceived, on: connection)
        case (.active, .reliable(let sequence, let ack, let message)):
            guard self.acknowledged(through: ack) else { return }
            let isNew: Bool
            do {
                isNew = try self.inbox.accept(sequence)
            } catch {
                // A lost frame: this connection cannot be trusted; resuming resends from what we have.
                self.logger.warning("sequence gap from the server, reconnecting", metadata: ["error": "\(error)"])
                self.connection(connection, didCloseWith: MatchHostClientError.protocolViolation("\(error)"))
                return
            }
            if isNew { self.deliver(message, reliable: true) }
        case (.active, .unreliable(let message)):
            self.deliver(message, reliable: false)
        case (.active, .ack(let ack)):
            _ = self.acknowledged(through: ack)
        case (_, .ping(let value)):
            connection.write(.pong(value))
        case (_, .pong(let value)):
            let now = UInt64(NIODeadline.now().uptimeNanoseconds)
            if value > 0, value <= now {
                let roundTrip = TimeAmount.nanoseconds(Int64(now - value))
                self.roundTripTime = roundTrip
                self.pendingPings.removeValue(forKey: value)?.succeed(roundTrip)
            }
        default:
            self.violation("unexpected \(frame.kind) frame (connection phase \(connection.phase))")
        }
    }

    /// The largest frame body read from a server after its WELCOME, as PROTOCOL.md's "Frame
    /// sizes" says a client must: a relayed MATCH_DATA carries a little more than the server
    /// accepts (the sender's id, headers), and its own answers (a full MATCH_HISTORY, say) may
    /// be larger than its `maxFrameBytes`, up to 1 MiB.
    static func incomingFrameLimit(configured: Int, welcome: NativeWelcome) -> Int {
        max(configured, Int(welcome.maximumFrameBytes) + 64, 1 << 20)
    }

    private func welcomed(_ welcome: NativeWelcome, on connection: ClientConnection) {
        guard welcome.version == NativeFrame.protocolVersion else {
            self.violation("server speaks version \(welcome.version)")
            return
        }
        self.welcome = welcome
        let incomingLimit = Self.incomingFrameLimit(configured: self.configuration.maximumFrameBytes, welcome: welcome)
        if connection.accumulator.bufferedBytes == 0 {
            connection.accumulator = FrameAccumulator(maximumBodySize: incomingLimit)
        }
        self.startTimers(on: connection, idleTimeout: .milliseconds(Int64(welcome.idleTimeoutMilliseconds)))
        if let credentials = self.reauthentication?.credentials {
            connection.phase = .awaitingAuthenticated
            self.setState(.authenticating)
            connection.write(.authenticate(credentials))
        } else if let session = self.authenticated {
            connection.phase = .awaitingResumed
            connection.write(
                .resume(sessionID: session.sessionID, resumeToken: session.resumeToken, lastReceived: self.inbox.lastReceived))
            // RESUME tells the server what arrived; no ACK of it is owed.
            self.inbox.acknowledgedByPiggyback()
        } else {
            connection.phase = .awaitingAuthenticated
            self.setState(.authenticating)
            connection.write(.authenticate(self.configuration.credentials))
        }
        connection.flush()
    }

    private func authenticated(_ authenticated: NativeAuthenticated, on connection: ClientConnection) {
        if !authenticated.deviceSecret.isEmpty { self.issuedDeviceSecret = authenticated.deviceSecret }
        self.authenticated = authenticated
        self.resumedMatches = []
        let reauthentication = self.reauthentication
        self.reauthentication = nil
        self.logger[metadataKey: "player"] = "\(authenticated.playerID)"
        connection.phase = .active
        connection.handshakeTimer?.cancel()
        connection.handshakeTimer = nil
        self.reconnectAttempt = 0
        self.setState(.connected)
        let promise = self.pendingConnect
        self.pendingConnect = nil
        promise?.succeed(authenticated)
        if reauthentication != nil {
            self.matchesToSettle = (self.matchesToSettle ?? []).union(self.seatedMatches)
            self.seatedMatches = []
        }
        if let reauthentication {
            // Before anything the new session brings (MATCH_RESUMED comes right after AUTHENTICATED).
            self.logger.debug("new session after the old one was lost", metadata: ["session": "\(authenticated.sessionID)"])
            self.events.yield(
                .sessionRestarted(
                    MatchHostClient.SessionRestart(
                        cause: reauthentication.cause, lostSession: reauthentication.lostSession, newSession: authenticated,
                        unacknowledged: reauthentication.unacknowledged)))
            // What was sent while authenticating again belongs to the new session.
            self.writeUnwritten(on: connection, respectingWritability: true)
            self.settleLostMatches()
        }
    }

    /// What ``MatchHostClient/Event/matchEnded(matchID:reason:)`` says for a match of a lost
    /// session that the new one did not get back.
    static let lostMatchReason = "abandoned(session lost)"

    /// Reports the lost session's matches that did not come back as ended, once the server has
    /// answered a ping sent after them. A ping that got no answer in time is sent again on the
    /// same connection; one whose connection dropped, after the next resume or authentication.
    private func settleLostMatches() {
        guard let waiting = self.matchesToSettle, !waiting.isEmpty else {
            self.matchesToSettle = nil
            return
        }
        let connection = self.connection
        self.ping(timeout: self.configuration.requestTimeout).assumeIsolated().whenComplete { result in
            guard case .success = result else {
                if let connection, connection === self.connection, connection.phase == .active, !self.state.isClosed {
                    self.settleLostMatches()
                }
                return
            }
            guard let lost = self.matchesToSettle else { return }
            self.matchesToSettle = nil
            for matchID in lost.sorted() {
                self.logger.debug("match not kept by the new session", metadata: ["match": "\(matchID)"])
                guard self.reportedEnded.insert(matchID) else { continue }
                self.events.yield(.matchEnded(matchID: matchID, reason: Self.lostMatchReason))
            }
        }
    }

    private func resumed(serverLastReceived: UInt64, on connection: ClientConnection) {
        do {
            try self.outbox.acknowledge(through: serverLastReceived)
        } catch {
            self.violation("RESUMED: \(error)")
            return
        }
        // Everything the server has not received goes again, in order, with its original number.
        self.unwritten.removeAll(keepingCapacity: true)
        self.outbox.forEachUnacknowledged { sequence, message in self.unwritten.append((sequence, message)) }
        connection.phase = .active
        connection.handshakeTimer?.cancel()
        connection.handshakeTimer = nil
        self.logger.debug(
            "session resumed",
            metadata: ["resending": "\(self.unwritten.count)", "serverLastReceived": "\(serverLastReceived)"])
        self.reconnectAttempt = 0
        self.setState(.connected)
        self.writeUnwritten(on: connection, respectingWritability: true)
        if self.matchesToSettle != nil { self.settleLostMatches() }
    }

    /// Applies an acknowledgement from the server; false (and the client closed) if it is impossible.
    private func acknowledged(through ack: UInt64) -> Bool {
        do {
            try self.outbox.acknowledge(through: ack)
            return true
        } catch {
            self.violation("\(error)")
            return false
        }
    }

    private func deliver(_ message: ByteBuffer, reliable: Bool) {
        let decoded: NativeServerMessage
        do {
            decoded = try NativeServerMessage(message: message)
        } catch {
            self.violation("undecodable message: \(error)")
            return
        }
        switch decoded {
        case .response(let id, let response):
            switch response {
            case .matchJoined(let match): self.seated(in: match.matchID)
            case .matchLeft(let matchID): self.seatedMatches.remove(matchID)
            default: break
            }
            guard let pending = self.pendingRequests.removeValue(forKey: id) else {
                self.logger.debug("response to a request no longer waited for", metadata: ["request": "\(id)"])
                return
            }
            pending.timer.cancel()
            pending.promise.succeed(response)
        case .requestError(let id, let error):
            guard let pending = self.pendingRequests.removeValue(forKey: id) else {
                self.logger.debug("error for a request no longer waited for", metadata: ["request": "\(id)", "error": "\(error)"])
                return
            }
            pending.timer.cancel()
            pending.promise.fail(error)
        case .presence(let matchID, let playerID, let change, let reason):
            self.events.yield(.presence(matchID: matchID, playerID: playerID, change: change, reason: reason))
        case .matchData(let matchID, let sender, let payload):
            self.events.yield(.matchData(matchID: matchID, sender: sender, payload: payload, reliable: reliable))
        case .matchEnded(let matchID, let reason):
            self.seatedMatches.remove(matchID)
            self.matchesToSettle?.remove(matchID)
            guard self.reportedEnded.insert(matchID) else {
                self.logger.debug("MATCH_ENDED repeated for a match already reported ended", metadata: ["match": "\(matchID)"])
                return
            }
            self.events.yield(.matchEnded(matchID: matchID, reason: reason))
        case .matchEvent(let matchID, let event):
            self.events.yield(.matchEvent(matchID: matchID, event: event, reliable: reliable))
        case .lobbyUpdate(let mode, let changes):
            self.events.yield(.lobbyUpdate(mode: mode, changes: changes))
        case .matchmakerMatched(let ticketID, let match):
            self.seated(in: match.matchID)
            self.events.yield(.matched(ticketID: ticketID, match: match))
        case .partyUpdate(let party):
            self.events.yield(.partyUpdate(party))
        case .ticketCancelled(let ticketID, let reason):
            self.events.yield(.ticketCancelled(ticketID: ticketID, reason: reason))
        case .matchResumed(let match):
            self.seated(in: match.matchID)
            self.matchesToSettle?.remove(match.matchID)
            self.resumedMatches.append(match)
            self.events.yield(.matchResumed(match))
        }
    }

    private func serverError(_ error: NativeError, on connection: ClientConnection) {
        self.logger.debug("server error", metadata: ["error": "\(error)"])
        guard self.authenticated != nil else {
            // connect() throws it.
            self.connection(connection, didCloseWith: error)
            return
        }
        switch error.code {
        case .idleTimeout, .rateLimited, .slowConsumer, .handshakeTimeout, .serverFull:
            // The connection ended (or a reconnect found the server full); the session waits for a resume.
            self.connection(connection, didCloseWith: error)
        case .sessionNotFound where connection.phase == .awaitingResumed && self.configuration.reauthenticatesAfterSessionLoss,
            .sessionRevoked where self.configuration.reauthenticatesAfterSessionLoss:
            self.sessionLost(error, on: connection)
        case .shuttingDown where self.configuration.reconnectsAfterServerShutdown:
            self.serverShuttingDown(error, on: connection)
        case _ where self.reauthentication != nil && Reauthentication.isCredentialRefusal(error):
            guard self.reauthentication?.credentialsRefused() == true else {
                self.finish(.serverError(error))
                return
            }
            self.logger.debug("credentials refused, trying the next", metadata: ["error": "\(error)"])
            self.abandon(connection)
            self.setState(.connecting)
            self.openConnection()
        default:
            self.finish(.serverError(error))
        }
    }

    /// The server is stopping, most likely to come back (a deploy, a restart): the client keeps
    /// everything and reconnects with its backoff, like after a crash. The server has ended the
    /// session, so the resume that follows is refused with `SESSION_NOT_FOUND` and the client
    /// authenticates again; going through the resume anyway keeps one path for every restart.
    private func serverShuttingDown(_ error: NativeError, on connection: ClientConnection) {
        self.logger.debug("the server is shutting down, reconnecting", metadata: ["error": "\(error)"])
        self.events.yield(.serverShuttingDown(error))
        self.connection(connection, didCloseWith: error)
    }

    /// The server no longer has the session: ends it here too and authenticates again on a new
    /// connection (the server closes this one after its ERROR).
    ///
    /// The old session's unacknowledged messages are handed to the application, not resent:
    /// the server may have acted on some of them before it lost the session, and a move played
    /// twice is worse than one the player makes again after seeing the state.
    private func sessionLost(_ error: NativeError, on connection: ClientConnection) {
        guard let lostSession = self.authenticated else { return }
        var unacknowledged: [NativeClientMessage] = []
        self.outbox.forEachUnacknowledged { _, message in
            // Messages this client encoded itself: decoding cannot fail.
            if let decoded = try? NativeClientMessage(message: message) { unacknowledged.append(decoded) }
        }
        self.logger.debug(
            "the server lost the session, authenticating again",
            metadata: ["error": "\(error)", "unacknowledged": "\(unacknowledged.count)"])
        // The new session numbers both ways from 1 again.
        self.outbox = ReliableOutbox(maximumBytes: self.outbox.maximumBytes)
        self.unwritten.removeAll()
        self.inbox = ReliableInbox()
        self.acknowledgementTimer?.cancel()
        self.acknowledgementTimer = nil
        self.reauthentication = Reauthentication(
            cause: error, lostSession: lostSession, unacknowledged: unacknowledged,
            configured: self.configuration.credentials, issuedDeviceSecret: self.issuedDeviceSecret)
        self.abandon(connection)
        self.reconnectAttempt = 0
        let lost = MatchHostClientError.sessionLost(error)
        self.failPings(lost)
        let requests = self.pendingRequests
        self.pendingRequests.removeAll()
        for pending in requests.values {
            pending.timer.cancel()
            pending.promise.fail(lost)
        }
        // The server answered a moment ago: no backoff before the new connection.
        self.setState(.connecting)
        self.openConnection()
    }

    private func violation(_ detail: String) {
        self.logger.error("protocol violation by the server", metadata: ["detail": "\(detail)"])
        if self.authenticated == nil, let connection = self.connection {
            self.connection(connection, didCloseWith: MatchHostClientError.protocolViolation(detail))
        } else {
            self.finish(.protocolViolation(detail))
        }
    }

    // MARK: - Timers

    private func startTimers(on connection: ClientConnection, idleTimeout: TimeAmount) {
        connection.idleTimeout = idleTimeout
        connection.lastReadAt = .now()
        if idleTimeout > .zero {
            self.scheduleIdleCheck(on: connection, every: max(.milliseconds(10), .nanoseconds(idleTimeout.nanoseconds / 4)))
        }
        if let interval = self.configuration.heartbeatInterval, interval > .zero {
            self.scheduleHeartbeat(on: connection, every: interval)
        }
    }

    private func scheduleIdleCheck(on connection: ClientConnection, every interval: TimeAmount) {
        connection.idleTimer = self.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            guard connection === self.connection, let idleTimeout = connection.idleTimeout else { return }
            // Until AUTHENTICATED or RESUMED the server may be waiting on its database and sends
            // no PING (it does not count that wait either); the handshake timer bounds it.
            if connection.phase == .active, NIODeadline.now() - connection.lastReadAt >= idleTimeout {
                self.logger.debug("nothing received for the idle timeout, reconnecting")
                self.connection(connection, didCloseWith: MatchHostClientError.connectionFailed("idle timeout"))
            } else {
                self.scheduleIdleCheck(on: connection, every: interval)
            }
        }
    }

    private func scheduleHeartbeat(on connection: ClientConnection, every interval: TimeAmount) {
        connection.heartbeatTimer = self.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            guard connection === self.connection, connection.isOpen else { return }
            connection.write(.ping(UInt64(NIODeadline.now().uptimeNanoseconds)))
            connection.flush()
            self.scheduleHeartbeat(on: connection, every: interval)
        }
    }

    // MARK: - The end

    /// Ends the client for good: the connection closes, waiters fail, the streams finish.
    private func finish(_ reason: MatchHostClient.CloseReason) {
        guard !self.state.isClosed else { return }
        self.logger.debug("client closing", metadata: ["reason": "\(reason)"])
        self.reconnectTimer?.cancel()
        self.reconnectTimer = nil
        if let connection = self.connection {
            self.abandon(connection)
        }
        self.reauthentication = nil
        let error = MatchHostClientError.closed(reason)
        if reason != .closedByClient, self.outbox.unacknowledgedCount > 0 {
            self.logger.warning(
                "client closed with reliable messages the server never acknowledged",
                metadata: ["count": "\(self.outbox.unacknowledgedCount)", "reason": "\(reason)"])
        }
        self.outbox.removeAll()
        self.unwritten.removeAll()
        let connect = self.pendingConnect
        self.pendingConnect = nil
        let requests = self.pendingRequests
        self.pendingRequests.removeAll()
        self.setState(.closed(reason))
        self.failPings(error)
        connect?.fail(error)
        for pending in requests.values {
            pending.timer.cancel()
            pending.promise.fail(error)
        }
        if reason == .closedByClient {
            self.events.finish()
        } else {
            self.events.finish(throwing: error)
        }
    }
}
