import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

/// Limits applied to each connection.
struct ConnectionLimits {
    var maxMessageRate: Double
    /// `--max-inbound-rate`, bytes per second; see ``ByteRateLimiter``.
    var maxInboundBytesPerSecond: Int
    /// `--max-frame`: the byte allowance's burst is at least one such frame.
    var maxFrameBytes: Int
    /// See ``SlowConsumerWatch``.
    var slowConsumerGrace: TimeAmount
    /// `--max-outbound`, the mark the channel turns unwritable at.
    var maxOutboundBytes: Int
    /// The most bytes that may wait in a connection's channel: past them it is closed at once,
    /// whatever its grace. Set where no client that reads could reach it, so that it bounds
    /// only what a client that does not read costs in the grace.
    var outboundHardLimit: Int
}

/// A connection's message-rate allowance: a bucket of one second's worth of messages,
/// refilled continuously at the limit.
struct MessageRateLimiter {
    private var bucket: RateBucket

    init(rate: Double) {
        self.bucket = .frames(perSecond: rate, now: .now())
    }

    /// Takes one message from the bucket.
    /// - Throws: ``ConnectionLimitError/messageRate(limit:)`` when the bucket is empty.
    mutating func spend() throws(ConnectionLimitError) {
        guard self.bucket.take(1, now: .now()) else { throw .messageRate(limit: self.bucket.rate) }
    }
}

/// A connection's allowance of bytes received (`--max-inbound-rate`): one second's worth, or
/// one largest frame if that is more, refilled continuously at the limit. With the message
/// rate alone a client could send 100 frames of 64 KiB a second, and in a relayed match each
/// goes to every other player, past their `--max-backlog` before they could acknowledge.
struct ByteRateLimiter {
    private var bucket: RateBucket

    init(bytesPerSecond: Int, maxFrameBytes: Int) {
        self.bucket = .bytes(perSecond: bytesPerSecond, maxFrameBytes: maxFrameBytes, now: .now())
    }

    /// Takes a frame of `bodyBytes` (and its 4-byte length prefix) from the bucket.
    /// - Throws: ``ConnectionLimitError/byteRate(limit:)`` when the bucket holds less.
    mutating func spend(frameBody bodyBytes: Int) throws(ConnectionLimitError) {
        guard self.bucket.take(Double(RateBucket.bytes(ofFrameBody: bodyBytes)), now: .now()) else { throw .byteRate(limit: Int(self.bucket.rate)) }
    }
}

/// One Cat Race connection: frames in, messages to the world, frames out.
///
/// The handler is the whole pipeline (no separate decoder handler), so an idle connection
/// costs one object and no buffer: its ``FrameAccumulator`` drops the buffer once it is empty.
/// It runs on the world's event loop, so calls into the world and writes from matches need
/// no hop. Any bad input closes this connection only, with a log line saying why.
///
/// With a store, the first PLAYER_CONNECTED of a player the world does not hold waits for its
/// stored identity: socket reads are paused, and frames already read wait in `frames` until
/// the store has answered, then are handled in order. A store failure closes this connection.
final class CatRaceConnectionHandler: ChannelInboundHandler, CatRaceLink, CoalescedFlushing {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let encoding = WireEncoding.catRace
    var catRacePlayer: CatRacePlayer?

    private let world: CatRaceWorld
    private var frames: FrameAccumulator
    private let flusher: FlushCoalescer
    /// Shared by every connection; per-connection metadata is added only when a line is
    /// logged, so that an idle connection carries no metadata dictionary of its own.
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var flushPending = false
    private var isClosing = false
    /// Set while a PLAYER_CONNECTED waits for the store; no later frame is handled meanwhile.
    private var isAwaitingIdentity = false
    private var messageRate: MessageRateLimiter
    private var byteRate: ByteRateLimiter
    private let slowConsumer: SlowConsumerWatch
    /// `--idle-timeout`: the tutorial client never pings, so a silent connection is no sign of a
    /// dead one once it has said who it is; but its first PLAYER_CONNECTED must come within this
    /// of the connect, and a frame it has begun must be whole within this, so that a client
    /// sending nothing, or a byte at a time, holds no connection (nor a frame's buffer) for ever.
    private let frameTimeout: TimeAmount
    private var hasSentPlayerConnected = false
    /// Frames handled so far: a check finding none handled since it was set finds a stalled frame.
    private var framesHandled = 0
    private var stallCheck: Scheduled<Void>?
    /// The network the connection comes from, as per-network budgets count it.
    private var network = ""

    init(
        world: CatRaceWorld, maximumFrameBody: Int, frameTimeout: TimeAmount, limits: ConnectionLimits,
        flusher: FlushCoalescer, logger: Logger
    ) {
        self.world = world
        self.frameTimeout = frameTimeout
        self.frames = FrameAccumulator(maximumBodySize: maximumFrameBody)
        self.flusher = flusher
        self.logger = logger
        self.messageRate = MessageRateLimiter(rate: limits.maxMessageRate)
        self.byteRate = ByteRateLimiter(bytesPerSecond: limits.maxInboundBytesPerSecond, maxFrameBytes: limits.maxFrameBytes)
        self.slowConsumer = SlowConsumerWatch(grace: limits.slowConsumerGrace, hardLimit: limits.outboundHardLimit)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    private var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["peer": "\(self.context?.channel.remoteAddress?.description ?? "-")"]
        if let player = self.catRacePlayer { metadata["player"] = "\(player.id)" }
        return metadata
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.network = NetworkBudget.source(of: context.channel.remoteAddress)
        self.logger.debug("connection opened", metadata: self.logMetadata)
        self.scheduleStallCheck(on: context.eventLoop)
        context.fireChannelActive()
    }

    /// One check at a time, at most one per `frameTimeout` for a connection with a frame
    /// under way (a tutorial client's frames come whole, so it rarely has one).
    private func scheduleStallCheck(on eventLoop: any EventLoop) {
        guard self.stallCheck == nil else { return }
        let handledBefore = self.framesHandled
        let handler = NIOLoopBound(self, eventLoop: eventLoop)
        self.stallCheck = eventLoop.scheduleTask(in: self.frameTimeout) {
            handler.value.checkStall(handledBefore: handledBefore)
        }
    }

    private func checkStall(handledBefore: Int) {
        self.stallCheck = nil
        guard !self.isClosing, let context = self.context else { return }
        let limit = "\(self.frameTimeout.nanoseconds / 1_000_000) ms (--idle-timeout)"
        if !self.hasSentPlayerConnected {
            return self.close(reason: "no PLAYER_CONNECTED within \(limit) of connecting", level: .info)
        }
        guard self.frames.bufferedBytes > 0 else { return }
        // Frames waiting behind a PLAYER_CONNECTED the store is answering are no stall, but
        // what follows them is checked again.
        if self.framesHandled == handledBefore, !self.isAwaitingIdentity {
            return self.close(reason: "a frame begun more than \(limit) ago is not whole yet")
        }
        self.scheduleStallCheck(on: context.eventLoop)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isClosing = true
        self.frames.reset()
        self.slowConsumer.stop()
        self.stallCheck?.cancel()
        self.stallCheck = nil
        self.logger.debug("connection closed", metadata: self.logMetadata)
        self.world.connectionClosed(self)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.isClosing else { return }
        var incoming = Self.unwrapInboundIn(data)
        self.frames.append(&incoming)
        self.handleBufferedFrames()
        if self.frames.bufferedBytes > 0, !self.isClosing { self.scheduleStallCheck(on: context.eventLoop) }
    }

    /// Handles every whole frame received, up to a PLAYER_CONNECTED that waits for the store.
    private func handleBufferedFrames() {
        do {
            while !self.isClosing, !self.isAwaitingIdentity, let body = try self.frames.nextFrame() {
                self.framesHandled += 1
                try self.handle(frameBody: body)
            }
        } catch {
            self.close(reason: "\(error)")
        }
    }

    private func handle(frameBody: ByteBuffer) throws {
        try self.messageRate.spend()
        try self.byteRate.spend(frameBody: frameBody.readableBytes)
        switch try CatRaceClientMessage(frameBody: frameBody) {
        case .playerConnected(let message):
            self.hasSentPlayerConnected = true
            guard let storage = self.world.storage, self.world.waitsForStore(message) else {
                return self.world.playerConnected(message, on: self)
            }
            self.isAwaitingIdentity = true
            self.setReading(false)
            storage.identify(message.playerID, alias: message.alias, from: self.network) { result in
                self.identityAnswered(result, for: message)
            }
        case .startMatch(let message):
            self.world.startMatch(message, on: self, from: self.network)
        case .movedSelf(let message): self.world.movedSelf(message, on: self)
        case .restartMatch: self.world.restartMatch(on: self)
        case .notifyReady(let message): self.world.notifyReady(message, on: self)
        }
    }

    /// The store has answered a PLAYER_CONNECTED: the player is admitted and the frames that
    /// waited are handled, or the connection closes (the protocol has no error message).
    private func identityAnswered(_ result: Result<CatRaceStoredIdentity, any Error>, for message: PlayerConnected) {
        guard !self.isClosing, self.isAwaitingIdentity else { return }
        switch result {
        case .failure(let error as CatRaceRegistrationRefused):
            // At debug: a flood of invented ids is what the limit is for, and it is counted.
            self.close(reason: "the player \(message.playerID) was not created: \(error)", level: .debug)
        case .failure(let error):
            if let known = self.world.storedIdentity(of: message.playerID) {
                // A known player's new alias could not be stored: it plays on under the stored
                // one rather than being shut out while the database fails.
                self.logger.log(
                    level: GameStoreError.logLevel(for: error), "new alias not stored; the player keeps its stored alias",
                    metadata: self.logMetadata.merging(["player": "\(message.playerID)", "error": "\(error)"]) { $1 })
                return self.identityAnswered(.success(known), for: message)
            }
            // At debug when the database failed: a full disk would refuse every newcomer, and
            // the outage report says that once for all.
            self.close(
                reason: "the player \(message.playerID) could not be looked up or created in the database: \(error)",
                level: GameStoreError.logLevel(for: error))
        case .success(let identity):
            self.isAwaitingIdentity = false
            self.world.playerConnected(message, identity: identity, on: self)
            self.setReading(true)
            self.handleBufferedFrames()
        }
    }

    /// Pauses or resumes socket reads (what was read already stays in `frames`).
    private func setReading(_ reading: Bool) {
        try? self.context?.channel.syncOptions?.setOption(.autoRead, value: reading)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        self.slowConsumer.writabilityChanged(of: context.channel) { [weak self] in
            self?.close(reason: "\(ConnectionLimitError.outboundBuffer)")
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.close(reason: "\(error)")
    }

    private func close(reason: String, level: Logger.Level = .warning) {
        guard !self.isClosing else { return }
        self.isClosing = true
        var metadata = self.logMetadata
        metadata["reason"] = "\(reason)"
        self.logger.log(level: level, "closing connection", metadata: metadata)
        self.context?.close(promise: nil)
    }

    // MARK: PlayerLink

    func deliver(_ frame: ByteBuffer) {
        guard !self.isClosing, let context = self.context else { return }
        if self.slowConsumer.passesHardLimit(of: context.channel, writing: frame.readableBytes) {
            return self.close(reason: "\(ConnectionLimitError.outboundHardLimit(self.slowConsumer.hardLimit))")
        }
        context.write(Self.wrapOutboundOut(frame), promise: nil)
        if !self.flushPending {
            self.flushPending = true
            self.flusher.enqueue(self)
        }
    }

    func flushCoalesced() {
        self.flushPending = false
        self.context?.flush()
    }

    func flushDeferred() {
        self.flushPending = false
    }
}

/// A connection broke one of the server's limits.
enum ConnectionLimitError: Error, CustomStringConvertible {
    case messageRate(limit: Double)
    case byteRate(limit: Int)
    case outboundBuffer
    /// Past ``ConnectionLimits/outboundHardLimit``, with its value.
    case outboundHardLimit(Int)

    var description: String {
        switch self {
        case .messageRate(let limit): return "sent more than \(limit) messages per second (--max-message-rate)"
        case .byteRate(let limit): return "sent more than \(limit) bytes per second (--max-inbound-rate)"
        case .outboundBuffer: return "not reading: outbound buffer over its limit (--max-outbound) for longer than --slow-consumer-grace"
        case .outboundHardLimit(let limit):
            return "not reading: more than \(limit) bytes waiting to be sent, the most a connection may hold at once (natively --max-backlog + 2 x --max-outbound, on the Cat Race port 2 x --max-outbound)"
        }
    }
}
