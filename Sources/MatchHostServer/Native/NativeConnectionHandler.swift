import Logging
import MatchHostCore
import MatchHostWire
import NIOCore
import NIOSSL

/// One native-protocol connection: handshake, authentication or resume, then the session's
/// frames in and out.
///
/// Like the Cat Race handler it is the whole pipeline and runs on the world's event loop, so
/// frames reach sessions and matches with no hop. Everything written in one event-loop pass
/// is appended to one outbound buffer and written and flushed once (``FlushCoalescer``): a
/// player receiving many messages in a pass costs one buffer and one syscall. A fatal error
/// is sent as an `ERROR` frame before the connection closes; only this connection is affected.
final class NativeConnectionHandler: ChannelInboundHandler, SessionTransport, CoalescedFlushing, DelayedAcknowledging {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case awaitingHello
        case awaitingAuthentication
        /// AUTHENTICATE is with the store: frames that arrive meanwhile wait, unread, in
        /// `frames`, and socket reads are paused, until the answer.
        case authenticating
        case established(Session)
    }

    private let world: NativeWorld
    private var state = State.awaitingHello
    private var frames: FrameAccumulator
    private let flusher: FlushCoalescer
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var outbound: ByteBuffer?
    private var flushPending = false
    private var acknowledgementQueued = false
    private var isClosing = false
    /// `--max-message-rate` and `--max-inbound-rate`: over them, reading pauses.
    private var pacing: InboundPacing
    /// Set while reading pauses for ``pacing``: frames read already wait in `frames`.
    private var isPaced = false
    /// When the client last showed it is there: a whole frame, or another
    /// ``progressWorthBytes`` of one under way. Not every byte: a client trickling one frame a
    /// byte at a time is as idle as one that sends nothing, while one uploading a large frame
    /// slowly (its PONGs wait behind it) is not.
    private var lastReceivedAt = NIODeadline.now()
    /// Bytes received since ``lastReceivedAt`` was last moved by them.
    private var bytesSinceProgress = 0
    /// How much of a frame under way counts as a sign of life.
    private static let progressWorthBytes = 1024
    /// The handshake (HELLO, then AUTHENTICATE or RESUME) must be done within the idle timeout
    /// of this, whatever arrives meanwhile.
    private var connectedAt = NIODeadline.now()
    /// The network the connection comes from, as per-network budgets count it.
    private var network = ""
    private var heartbeat: RepeatedTask?
    private let slowConsumer: SlowConsumerWatch
    /// `--max-outbound`: unreliable data is written only while less than this waits.
    private let maxOutboundBytes: Int

    init(
        world: NativeWorld, maximumFrameBody: Int, limits: ConnectionLimits, flusher: FlushCoalescer,
        logger: Logger
    ) {
        self.world = world
        self.frames = FrameAccumulator(maximumBodySize: maximumFrameBody)
        self.flusher = flusher
        self.logger = logger
        self.slowConsumer = SlowConsumerWatch(grace: limits.slowConsumerGrace, hardLimit: limits.outboundHardLimit)
        self.maxOutboundBytes = limits.maxOutboundBytes
        self.pacing = InboundPacing(
            messagesPerSecond: limits.maxMessageRate, bytesPerSecond: limits.maxInboundBytesPerSecond,
            maxFrameBytes: limits.maxFrameBytes, now: .now())
    }

    private var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["peer": "\(self.context?.channel.remoteAddress?.description ?? "-")"]
        if case .established(let session) = self.state {
            metadata["player"] = "\(session.playerID)"
            metadata["session"] = "\(session.id)"
        }
        return metadata
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Added after a handshake of another protocol (a WebSocket upgrade): the connection
        // is active already, and channelActive will not come.
        if context.channel.isActive { self.begin(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.begin(context: context)
        context.fireChannelActive()
    }

    /// Starts the connection's clocks: the handshake's deadline and the heartbeat.
    private func begin(context: ChannelHandlerContext) {
        self.network = NetworkBudget.source(of: context.channel.remoteAddress)
        self.connectedAt = .now()
        self.lastReceivedAt = self.connectedAt
        let interval = TimeAmount.milliseconds(Int64(self.world.options.welcome.heartbeatMilliseconds))
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.heartbeat = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            handler.value.heartbeatDue()
        }
        self.logger.debug("connection opened", metadata: self.logMetadata)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isClosing = true
        self.heartbeat?.cancel()
        self.heartbeat = nil
        self.slowConsumer.stop()
        self.frames.reset()
        self.outbound = nil
        if case .established(let session) = self.state {
            self.world.sessions.detach(session, from: self)
        }
        self.logger.debug("connection closed", metadata: self.logMetadata)
        context.fireChannelInactive()
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.isClosing else { return }
        var incoming = Self.unwrapInboundIn(data)
        self.bytesSinceProgress += incoming.readableBytes
        if self.bytesSinceProgress >= Self.progressWorthBytes {
            self.bytesSinceProgress = 0
            self.lastReceivedAt = .now()
        }
        self.frames.append(&incoming)
        self.handleBufferedFrames()
    }

    private var isAuthenticating: Bool {
        if case .authenticating = self.state { return true }
        return false
    }

    /// Handles every whole frame received, up to one that starts an authentication or uses up
    /// an allowance of ``pacing``.
    private func handleBufferedFrames() {
        var received = false
        defer { if received { self.lastReceivedAt = .now() } }
        do {
            while !self.isClosing, !self.isAuthenticating, !self.isPaced, let body = try self.frames.nextFrame() {
                received = true
                let frame = try NativeFrame(frameBody: body)
                try self.handle(frame)
                if let wait = self.pacing.taken(isControl: frame.isControl, bodyBytes: body.readableBytes, now: .now()) {
                    self.pauseReading(for: wait)
                }
            }
        } catch {
            self.close(with: Self.nativeError(for: error))
        }
    }

    /// Stops taking in frames for `wait`, the time the client's allowance needs to refill.
    private func pauseReading(for wait: TimeAmount) {
        guard let loop = self.context?.eventLoop else { return }
        self.isPaced = true
        self.setReading(false)
        let handler = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: wait) { handler.value.resumeReading() }
    }

    private func resumeReading() {
        self.isPaced = false
        guard !self.isClosing else { return }
        // The client waited on the server, not the other way round.
        self.lastReceivedAt = .now()
        if !self.isAuthenticating { self.setReading(true) }
        self.handleBufferedFrames()
        self.queueAcknowledgementIfOwed()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.queueAcknowledgementIfOwed()
        context.fireChannelReadComplete()
    }

    private func queueAcknowledgementIfOwed() {
        if !self.acknowledgementQueued, !self.isClosing, case .established(let session) = self.state,
            session.transport === self, session.inbox.unacknowledgedCount > 0
        {
            self.acknowledgementQueued = true
            self.world.acknowledgements.enqueue(self)
        }
    }

    func acknowledgementDue() {
        self.acknowledgementQueued = false
        if !self.isClosing, case .established(let session) = self.state, session.transport === self,
            let ack = session.takeAcknowledgement()
        {
            self.writeControl(.ack(ack))
        }
    }

    private func handle(_ frame: NativeFrame) throws {
        switch self.state {
        case .awaitingHello:
            guard case .hello(let version, let gameID) = frame else {
                throw NativeError(.badMessage, "expected HELLO, got frame kind \(frame.kind.rawValue)")
            }
            guard version == NativeFrame.protocolVersion else {
                throw NativeError(.unsupportedVersion, "protocol version \(version) is not supported; this server speaks \(NativeFrame.protocolVersion)")
            }
            guard self.world.options.gameIDs.contains(gameID) else {
                throw NativeError(.unknownGame, "game id \"\(gameID)\" is not served here")
            }
            self.state = .awaitingAuthentication
            self.writeControl(.welcome(self.world.options.welcome))

        case .awaitingAuthentication:
            switch frame {
            case .authenticate(let credentials):
                self.state = .authenticating
                self.setReading(false)
                let (world, network) = (self.world, self.network)
                self.world.authenticator.authenticate(
                    credentials, storage: self.world.storage, logger: self.logger, rules: world.signInRules(from: network)
                ) { outcome in
                    self.authenticationAnswered(outcome)
                }
            case .resume(let sessionID, let resumeToken, let lastReceived):
                let session = try self.world.sessions.resume(
                    sessionID: sessionID, resumeToken: resumeToken, lastReceived: lastReceived, transport: self
                ).get()
                self.state = .established(session)
                // RESUME's last received acknowledges too.
                self.world.endsAcknowledged(by: session)
            default:
                throw NativeError(.notAuthenticated, "expected AUTHENTICATE or RESUME, got frame kind \(frame.kind.rawValue)")
            }

        case .authenticating:
            preconditionFailure("frames wait while AUTHENTICATE is answered")

        case .established(let session):
            // Replaced by a newer connection or ended: ignore what is still in flight.
            guard session.transport === self, !session.isEnded else { return }
            switch frame {
            case .reliable(let sequence, let ack, let message):
                let isNew = try session.receiveReliable(sequence: sequence, ack: ack)
                self.world.endsAcknowledged(by: session)
                guard isNew else { return }
                try self.world.handle(try NativeClientMessage(message: message), from: session, network: self.network, reliable: true)
            case .unreliable(let message):
                try self.world.handle(try NativeClientMessage(message: message), from: session, network: self.network, reliable: false)
            case .ack(let ack):
                try session.receiveAcknowledgement(ack)
                self.world.endsAcknowledged(by: session)
            case .ping(let value):
                self.writeControl(.pong(value))
            case .pong(let value):
                let sent = NIODeadline.uptimeNanoseconds(value)
                let now = NIODeadline.now()
                if sent <= now { self.world.roundTrips.recordNanoseconds((now - sent).nanoseconds) }
            case .goodbye:
                self.logger.info("goodbye", metadata: self.logMetadata)
                self.world.goodbye(session)
                self.closeQuietly()
            case .hello, .authenticate, .resume:
                throw NativeError(.badMessage, "frame kind \(frame.kind.rawValue) is only allowed before the session starts")
            case .welcome, .authenticated, .resumed, .error:
                throw NativeError(.badMessage, "frame kind \(frame.kind.rawValue) is sent by servers only")
            }
        }
    }

    /// The store has answered AUTHENTICATE: the session starts (AUTHENTICATED goes out, then
    /// the frames that waited are handled), or the connection closes with the refusal.
    private func authenticationAnswered(_ outcome: NativeAuthenticator.Outcome) {
        guard !self.isClosing, self.isAuthenticating else { return }
        let playerID: String
        let issuedSecret: String
        switch outcome {
        case .failure(let error):
            self.close(with: error)
            return
        case .success(let who):
            (playerID, issuedSecret) = who
        }
        // Sessions outlive connections: --max-connections alone does not bound them. A player
        // who has one replaces it, which adds none. A player created just now is let in even
        // so (the limit was checked before it was made, and only its AUTHENTICATED carries its
        // secret): at most one over for each registration under way.
        if issuedSecret.isEmpty, self.world.sessions.session(of: playerID) == nil, let refusal = self.world.sessionLimitRefusal() {
            self.close(with: refusal)
            return
        }
        // The client waited on the store, not the other way round: its idle time starts now.
        self.lastReceivedAt = .now()
        let session = self.world.sessions.open(player: playerID, transport: self)
        self.state = .established(session)
        let token = self.world.authenticator.issueToken(for: playerID)
        self.writeControl(
            .authenticated(
                NativeAuthenticated(
                    playerID: playerID, deviceSecret: issuedSecret, sessionToken: token.token,
                    tokenExpiresAt: token.expiresAt, sessionID: session.id,
                    resumeToken: self.world.sessions.resumeToken(of: session),
                    sessionGraceMilliseconds: UInt32(clamping: self.world.options.sessionGrace.nanoseconds / 1_000_000))))
        self.logger.info("authenticated", metadata: self.logMetadata)
        self.world.sessionStarted(session)
        if !self.isPaced { self.setReading(true) }
        self.handleBufferedFrames()
        self.queueAcknowledgementIfOwed()
    }

    /// Pauses or resumes socket reads (what was read already stays in `frames`).
    private func setReading(_ reading: Bool) {
        try? self.context?.channel.syncOptions?.setOption(.autoRead, value: reading)
    }

    private static func nativeError(for error: any Error) -> NativeError {
        switch error {
        case let error as NativeError: return error
        case WireError.frameTooLarge(let length, let maximum):
            return NativeError(.frameTooLarge, "frame body of \(length) bytes is over the maximum of \(maximum) (--max-frame)")
        case let error as ReliableStreamError:
            return NativeError(.sequenceError, "\(error)")
        default:
            return NativeError(.badMessage, "\(error)")
        }
    }

    private func heartbeatDue() {
        guard !self.isClosing else { return }
        let now = NIODeadline.now()
        let idleLimit = TimeAmount.milliseconds(Int64(self.world.options.welcome.idleTimeoutMilliseconds))
        if case .established = self.state {
            // A paced connection is waiting on us to read, not idle.
            if !self.isPaced, now - self.lastReceivedAt >= idleLimit {
                return self.close(
                    with: NativeError(
                        .idleTimeout, "nothing received for \(idleLimit.nanoseconds / 1_000_000) ms (a whole frame, or a KiB of one)"))
            }
        } else if now - self.connectedAt >= idleLimit, !self.isAuthenticating {
            // While AUTHENTICATE waits for the store, the client is waiting on the server (its
            // idle clock starts when the answer comes).
            return self.close(
                with: NativeError(.handshakeTimeout, "handshake not finished within \(idleLimit.nanoseconds / 1_000_000) ms of connecting"))
        }
        if case .established = self.state {
            self.writeControl(.ping(now.uptimeNanoseconds))
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        self.slowConsumer.writabilityChanged(of: context.channel) { [weak self] in
            self?.close(with: NativeError(.slowConsumer, "\(ConnectionLimitError.outboundBuffer)"))
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Bad input found in front of this handler (by the WebSocket bridge) is answered as
        // bad input found here.
        if let error = error as? NativeError { return self.close(with: error) }
        // TLS failing (a scanner, a client that does not trust the certificate) or a phone
        // gone without TLS's goodbye: as common as a dropped TCP connection, and as quiet.
        if error is NIOSSLError || error is BoringSSLError {
            self.logger.debug("closing connection", metadata: self.logMetadata.merging(["reason": "\(error)"]) { $1 })
            return self.closeQuietly()
        }
        self.closeQuietly(reason: "\(error)")
    }

    // MARK: - Outbound (SessionTransport)

    private func appendOutbound(_ write: (inout ByteBuffer) -> Void) {
        guard !self.isClosing, let context = self.context else { return }
        if self.outbound == nil {
            self.outbound = context.channel.allocator.buffer(capacity: 256)
        }
        write(&self.outbound!)
        if !self.flushPending {
            self.flushPending = true
            self.flusher.enqueue(self)
        }
    }

    func writeReliable(sequence: UInt64, ack: UInt64, message: ByteBuffer) {
        self.appendOutbound { $0.writeReliableFrame(sequence: sequence, ack: ack, message: message) }
    }

    func writeUnreliable(message: ByteBuffer) {
        // Unreliable data is the first thing to give up when the client falls behind. What
        // this pass has gathered counts too, as the channel has not seen it yet: else one pass
        // (a burst relayed from many senders) could queue any amount while the channel still
        // says writable, and take a client that reads past the hard limit. So at most twice
        // --max-outbound of it waits: under the channel's mark, and one pass's worth.
        guard self.context?.channel.isWritable ?? false else { return }
        let gathered = self.outbound?.readableBytes ?? 0
        guard gathered + NativeFrame.unreliableHeaderSize + message.readableBytes <= self.maxOutboundBytes else { return }
        self.appendOutbound { $0.writeUnreliableFrame(message: message) }
    }

    func writeControl(_ frame: NativeFrame) {
        self.appendOutbound { frame.encodeFrame(into: &$0) }
    }

    func flushDeferred() {
        self.flushPending = false
    }

    func flushCoalesced() {
        self.flushPending = false
        guard let context = self.context, let outbound = self.outbound else { return }
        self.outbound = nil
        if !self.isClosing,
            self.slowConsumer.passesHardLimit(of: context.channel, writing: outbound.readableBytes, allowance: self.unacknowledgedFrameHeaders)
        {
            // Not written: the session keeps its unacknowledged data for a resume.
            let limit = self.slowConsumer.hardLimit + self.unacknowledgedFrameHeaders
            return self.close(with: NativeError(.slowConsumer, "\(ConnectionLimitError.outboundHardLimit(limit))"))
        }
        context.writeAndFlush(Self.wrapOutboundOut(outbound), promise: nil)
    }

    /// `--max-backlog` counts messages, not the RELIABLE frames around them: a reading client
    /// may have that many frames' headers waiting too (many small messages after a resume).
    private var unacknowledgedFrameHeaders: Int {
        guard case .established(let session) = self.state else { return 0 }
        return session.outbox.unacknowledgedCount * NativeFrame.reliableHeaderSize
    }

    func close(with error: NativeError) {
        guard !self.isClosing else { return }
        self.writeControl(.error(error))
        var metadata = self.logMetadata
        metadata["reason"] = "\(error)"
        self.logger.log(level: Self.logLevel(closingWith: error), "closing connection", metadata: metadata)
        // Closing first: the farewell is written whatever waits before it.
        self.isClosing = true
        self.flushCoalesced()
        self.context?.close(promise: nil)
    }

    /// How loud a close is. The server's own stop closes every connection, and a player signing
    /// in again, a phone gone quiet, or a RESUME after a restart (whose session is gone, as the
    /// protocol expects) is everyday business: a warning for each would bury the closes worth a
    /// look (bad input, a wrong resume token, a client too slow to read, a limit).
    static func logLevel(closingWith error: NativeError) -> Logger.Level {
        switch error.code {
        case .shuttingDown: .debug
        case .sessionReplaced, .sessionNotFound, .sessionRevoked, .tokenExpired, .idleTimeout, .handshakeTimeout: .info
        default: .warning
        }
    }

    private func closeQuietly(reason: String? = nil) {
        guard !self.isClosing else { return }
        if let reason {
            var metadata = self.logMetadata
            metadata["reason"] = "\(reason)"
            self.logger.info("closing connection", metadata: metadata)
        }
        self.isClosing = true
        self.flushCoalesced()
        self.context?.close(promise: nil)
    }
}
