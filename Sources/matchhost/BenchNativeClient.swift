import MatchHostWire
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The native-protocol client of `matchhost bench native` and `bench resume`: a lean,
// hand-rolled one (no Task per message), but a correct client of PROTOCOL.md: HELLO,
// AUTHENTICATE with a fresh device id, requests in RELIABLE frames, its own RELIABLE frames
// numbered and kept until acknowledged, received RELIABLE frames acknowledged (one ACK per
// read batch, or piggybacked on its own frames), PING answered with PONG, and RESUME after a
// lost connection, resending what the server did not get.

/// The payload of a bench SEND_DATA: `u64` send time (`benchNow()`), `u32` the sender's message
/// number (from 1), `u8` the sender's bench seat, then zero padding to the payload size.
enum NativeBenchPayload {
    static let minimumSize = 13
}

/// One MATCH_DATA from a bench player, as its receiver read it.
struct NativeBenchDelivery {
    /// How the message number compares with the last one from the same sender.
    enum Order {
        /// One more than the last: in order, nothing missing.
        case next
        /// Skipped ahead by this many numbers: messages missing.
        case gap(UInt32)
        /// Not more than the last: a duplicate, or out of order.
        case old
    }

    var fromSeat: Int
    var counter: UInt32
    var sentAt: UInt64
    /// The RELIABLE frame's sequence number; 0 for an UNRELIABLE frame.
    var sequence: UInt64
    var order: Order
    /// The first MATCH_DATA since the peer resumed its session.
    var firstAfterResume: Bool
}

/// What a bench that owns peers hears from them. Every call is made on the peers' event loop.
protocol NativeBenchOwner: AnyObject {
    /// The peer's session is open (AUTHENTICATED).
    func peerAuthenticated(_ peer: NativeBenchPeer)
    /// A request of the peer was answered.
    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>)
    /// A bench player's MATCH_DATA reached the peer.
    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64)
    /// The peer closed its connection on purpose (``NativeBenchPeer/cutOnNextData``) and
    /// needs a new one, on which it will resume.
    func peerCut(_ peer: NativeBenchPeer)
    /// RESUMED arrived on the peer's new connection.
    func peerResumed(_ peer: NativeBenchPeer, now: UInt64)
    /// The peer's connection closed without the bench asking (or before AUTHENTICATED).
    func peerLost(_ peer: NativeBenchPeer)
    /// A LOBBY_UPDATE, MATCH_EVENT or MATCH_ENDED reached the peer at `now`; `reliable` says
    /// whether it came in a RELIABLE frame. Ignored unless the owner implements it.
    func peer(_ peer: NativeBenchPeer, received message: NativeServerMessage, reliable: Bool, now: UInt64)
}

extension NativeBenchOwner {
    func peer(_ peer: NativeBenchPeer, received message: NativeServerMessage, reliable: Bool, now: UInt64) {}
}

/// A peer's protocol counters; merged over peers for the report.
struct NativeBenchClientCounters: Sendable {
    /// ACK frames sent, and received from the server.
    var acksSent: UInt64 = 0
    var acksReceived: UInt64 = 0
    /// RELIABLE frames from the server that carried a message (each acknowledged once).
    var reliableReceived: UInt64 = 0
    /// RELIABLE frames sent (first sends, then resends after a resume).
    var reliableSent: UInt64 = 0
    var reliableResent: UInt64 = 0
    /// Server PINGs answered.
    var pingsAnswered: UInt64 = 0
    /// RELIABLE frames from the server with a number already received (dropped, as the protocol says).
    var duplicateFramesDropped: UInt64 = 0
    var presenceReceived: UInt64 = 0
    var matchesEnded: UInt64 = 0
    /// Connections that closed without the bench asking.
    var connectionsLost: UInt64 = 0
    /// ERROR frames, protocol violations and I/O errors, by kind.
    var errors: [String: UInt64] = [:]

    mutating func add(_ other: NativeBenchClientCounters) {
        self.acksSent += other.acksSent
        self.acksReceived += other.acksReceived
        self.reliableReceived += other.reliableReceived
        self.reliableSent += other.reliableSent
        self.reliableResent += other.reliableResent
        self.pingsAnswered += other.pingsAnswered
        self.duplicateFramesDropped += other.duplicateFramesDropped
        self.presenceReceived += other.presenceReceived
        self.matchesEnded += other.matchesEnded
        self.connectionsLost += other.connectionsLost
        self.errors.merge(other.errors, uniquingKeysWith: +)
    }
}

/// One bench player: its session (ids, reliable streams, message numbers), which outlives
/// any one connection. Loop-confined; ``NativeBenchConnection`` feeds it.
final class NativeBenchPeer: BenchPeriodicSender {
    enum Phase {
        case connecting
        case awaitingWelcome
        case authenticating
        case resuming
        case established
        /// Between a cut and the new connection's RESUMED.
        case disconnected
        /// GOODBYE sent or the bench is over: closes are expected.
        case finished
    }

    /// The bench's seat number of this player in its match (0 creates the match).
    let seat: Int
    let deviceID: String
    let gameID: String
    let reliable: Bool
    let payloadSize: Int
    unowned let owner: any NativeBenchOwner
    private(set) var phase = Phase.connecting
    /// The bench is about to kill the server (`--kill-server`): the close that follows, and
    /// errors on the way, are expected, while what arrives before it still counts.
    private(set) var closureExpected = false
    private(set) var playerID = ""
    private var sessionID = ""
    private var resumeToken = ""
    /// The match the player is in; 0 until MATCH_JOINED.
    var matchID: UInt64 = 0
    /// Succeeded on AUTHENTICATED, failed if the first connection closes before.
    var authenticated: EventLoopPromise<Void>?
    private(set) var counters = NativeBenchClientCounters()
    /// SEND_DATA messages made (the last message number).
    private(set) var sentCount: UInt32 = 0
    /// Whether scheduled sends go out.
    var sending = true
    /// The last message number received from each seat.
    private(set) var lastCounter: [UInt32]
    /// When the next scheduled send is due; owned by the schedule.
    var nextDue: UInt64 = 0

    /// Set to lose the next RELIABLE MATCH_DATA (neither handled nor acknowledged, as on a
    /// link that just died) and close the connection abruptly at once.
    var cutOnNextData = false
    /// Whether a cut resets the connection (RST) rather than closing it in order (FIN).
    var cutsAbruptly = true
    /// When the last cut closed the connection, and the number of the frame it lost.
    private(set) var cutAt: UInt64 = 0
    private(set) var lostSequence: UInt64 = 0
    private var awaitingFirstAfterResume = false

    private let acknowledgeEveryRead: Bool
    private var inbox = ReliableInbox()
    /// When the oldest RELIABLE frame not yet acknowledged arrived; 0 when none.
    private var unacknowledgedSince: UInt64 = 0
    private var outbox: ReliableOutbox
    private var connection: NativeBenchConnection?
    private var needsFlush = false
    private var nextRequestID: UInt32 = 1
    private let allocator = ByteBufferAllocator()

    /// - Parameters:
    ///   - seats: players in the match, for the per-sender order check.
    ///   - acknowledgeEveryRead: one ACK per read batch; otherwise only piggybacked and
    ///     ``acknowledgePending(receivedBefore:)`` (which the owner calls periodically).
    init(
        seat: Int, seats: Int, deviceID: String, gameID: String, reliable: Bool, payloadSize: Int,
        acknowledgeEveryRead: Bool, owner: any NativeBenchOwner
    ) {
        self.seat = seat
        self.deviceID = deviceID
        self.gameID = gameID
        self.reliable = reliable
        self.payloadSize = max(NativeBenchPayload.minimumSize, payloadSize)
        self.acknowledgeEveryRead = acknowledgeEveryRead
        self.owner = owner
        self.lastCounter = Array(repeating: 0, count: seats)
        self.outbox = ReliableOutbox(maximumBytes: 16 << 20)
    }

    /// The current connection's channel, if any.
    var channel: (any Channel)? { self.connection?.context?.channel }

    // MARK: - Connection events

    func attach(_ connection: NativeBenchConnection) {
        guard self.phase != .finished else {
            connection.abandon(abruptly: false)
            return
        }
        self.connection = connection
        self.phase = .awaitingWelcome
        self.writeControl(.hello(version: NativeFrame.protocolVersion, gameID: self.gameID))
        self.flush()
    }

    /// See ``closureExpected``.
    func expectClosure() {
        self.closureExpected = true
    }

    func connectionClosed(_ connection: NativeBenchConnection) {
        guard connection === self.connection else { return }
        self.connection = nil
        self.needsFlush = false
        if self.phase == .finished || self.closureExpected { return }
        self.phase = .disconnected
        self.counters.connectionsLost += 1
        self.authenticated?.fail(BenchError("connection closed before AUTHENTICATED"))
        self.authenticated = nil
        self.owner.peerLost(self)
    }

    func count(error kind: String) {
        self.counters.errors[kind, default: 0] += 1
    }

    /// Handles one frame body from the server.
    func receive(_ body: ByteBuffer, now: UInt64) throws {
        let start = body.readerIndex
        guard let kind = body.getInteger(at: start, as: UInt8.self) else { throw BenchError("empty frame") }
        switch kind {
        case NativeFrameKind.reliable.rawValue:
            guard body.readableBytes > 17,
                let sequence = body.getInteger(at: start + 1, endianness: .big, as: UInt64.self),
                let ack = body.getInteger(at: start + 9, endianness: .big, as: UInt64.self),
                let message = body.getSlice(at: start + 17, length: body.readableBytes - 17)
            else { throw BenchError("truncated RELIABLE frame") }
            if self.cutOnNextData, message.getInteger(at: message.readerIndex, as: UInt8.self) == NativeMessageType.matchData.rawValue {
                self.cut(losing: sequence)
                return
            }
            try self.outbox.acknowledge(through: ack)
            guard try self.inbox.accept(sequence) else {
                self.counters.duplicateFramesDropped += 1
                return
            }
            self.counters.reliableReceived += 1
            if self.unacknowledgedSince == 0 { self.unacknowledgedSince = now }
            try self.handle(message: message, sequence: sequence, now: now)
        case NativeFrameKind.unreliable.rawValue:
            guard let message = body.getSlice(at: start + 1, length: body.readableBytes - 1), message.readableBytes > 0 else {
                throw BenchError("empty UNRELIABLE frame")
            }
            try self.handle(message: message, sequence: 0, now: now)
        case NativeFrameKind.ack.rawValue:
            guard let ack = body.getInteger(at: start + 1, endianness: .big, as: UInt64.self) else {
                throw BenchError("truncated ACK frame")
            }
            self.counters.acksReceived += 1
            try self.outbox.acknowledge(through: ack)
        case NativeFrameKind.ping.rawValue:
            guard let value = body.getInteger(at: start + 1, endianness: .big, as: UInt64.self) else {
                throw BenchError("truncated PING frame")
            }
            self.counters.pingsAnswered += 1
            self.writeControl(.pong(value))
        default:
            try self.handleControl(NativeFrame(frameBody: body), now: now)
        }
    }

    /// The connection's read batch is over: acknowledge (if every read) and flush.
    func readComplete() {
        if self.acknowledgeEveryRead { self.writeAcknowledgement() }
        self.flush()
    }

    /// Sends an ACK if something that arrived before `deadline` is not acknowledged yet (by an
    /// ACK, or piggybacked on a frame of ours).
    func acknowledgePending(receivedBefore deadline: UInt64) {
        guard self.unacknowledgedSince != 0, self.unacknowledgedSince <= deadline else { return }
        self.writeAcknowledgement()
        self.flush()
    }

    private func writeAcknowledgement() {
        guard self.phase == .established, let ack = self.inbox.takeAcknowledgement() else { return }
        self.unacknowledgedSince = 0
        self.counters.acksSent += 1
        self.writeControl(.ack(ack))
    }

    /// Everything received is acknowledged by what is going out (a RELIABLE frame's `ack`, RESUME).
    private func markAcknowledged() {
        self.inbox.acknowledgedByPiggyback()
        self.unacknowledgedSince = 0
    }

    private func handleControl(_ frame: NativeFrame, now: UInt64) throws {
        switch frame {
        case .welcome:
            guard self.phase == .awaitingWelcome else { throw BenchError("unexpected WELCOME") }
            if self.sessionID.isEmpty {
                self.phase = .authenticating
                self.writeControl(.authenticate(.device(id: self.deviceID, secret: "")))
            } else {
                self.phase = .resuming
                self.writeControl(
                    .resume(sessionID: self.sessionID, resumeToken: self.resumeToken, lastReceived: self.inbox.lastReceived))
                // RESUME tells the server what arrived: it acknowledges.
                self.markAcknowledged()
            }
        case .authenticated(let value):
            guard self.phase == .authenticating else { throw BenchError("unexpected AUTHENTICATED") }
            self.playerID = value.playerID
            self.sessionID = value.sessionID
            self.resumeToken = value.resumeToken
            self.phase = .established
            self.authenticated?.succeed()
            self.authenticated = nil
            self.owner.peerAuthenticated(self)
        case .resumed(let lastReceived):
            guard self.phase == .resuming else { throw BenchError("unexpected RESUMED") }
            try self.outbox.acknowledge(through: lastReceived)
            self.phase = .established
            self.resendUnacknowledged()
            self.owner.peerResumed(self, now: now)
        case .error(let error):
            self.count(error: "ERROR \(error.code) from the server: \(error.message)")
            if error.code == .rateLimited, let authenticated = self.authenticated {
                // Every bench player is a new device from this machine: the server's default
                // registration limit is far below what a load needs.
                self.authenticated = nil
                authenticated.fail(
                    BenchError("the server refused new players (\(error.message)): start it with --max-new-players-per-minute 1000000 to bench"))
            } else if error.code == .serverFull, let authenticated = self.authenticated {
                // All the load comes from one address: the per-network limit is far below it.
                self.authenticated = nil
                authenticated.fail(
                    BenchError("the server refused a connection (\(error.message)): start it with --max-connections-per-address 100000 to bench"))
            }
        case .pong:
            break
        default:
            throw BenchError("unexpected frame kind \(frame.kind.rawValue)")
        }
    }

    private func handle(message: ByteBuffer, sequence: UInt64, now: UInt64) throws {
        let start = message.readerIndex
        guard message.getInteger(at: start, as: UInt8.self) == NativeMessageType.matchData.rawValue else {
            return try self.handle(NativeServerMessage(message: message), reliable: sequence != 0, now: now)
        }
        // MATCH_DATA, read in place: u64 match id, str sender, bytes payload.
        guard let senderLength = message.getInteger(at: start + 9, endianness: .big, as: UInt16.self) else {
            throw BenchError("truncated MATCH_DATA")
        }
        let payloadAt = start + 11 + Int(senderLength) + 4
        guard let payloadLength = message.getInteger(at: payloadAt - 4, endianness: .big, as: UInt32.self),
            Int(payloadLength) >= NativeBenchPayload.minimumSize,
            message.writerIndex - payloadAt >= Int(payloadLength),
            let sentAt = message.getInteger(at: payloadAt, endianness: .big, as: UInt64.self),
            let counter = message.getInteger(at: payloadAt + 8, endianness: .big, as: UInt32.self),
            let rawSeat = message.getInteger(at: payloadAt + 12, as: UInt8.self),
            Int(rawSeat) < self.lastCounter.count
        else {
            self.count(error: "MATCH_DATA that is not a bench payload")
            return
        }
        let from = Int(rawSeat)
        let last = self.lastCounter[from]
        let order: NativeBenchDelivery.Order
        if counter == last &+ 1 {
            order = .next
            self.lastCounter[from] = counter
        } else if counter > last {
            order = .gap(counter - last - 1)
            self.lastCounter[from] = counter
        } else {
            order = .old
        }
        let first = self.awaitingFirstAfterResume
        self.awaitingFirstAfterResume = false
        self.owner.peer(
            self,
            delivered: NativeBenchDelivery(
                fromSeat: from, counter: counter, sentAt: sentAt, sequence: sequence, order: order, firstAfterResume: first),
            now: now)
    }

    private func handle(_ message: NativeServerMessage, reliable: Bool, now: UInt64) {
        switch message {
        case .response(let id, let response):
            self.owner.peer(self, answered: id, with: .success(response))
        case .requestError(let id, let error):
            self.owner.peer(self, answered: id, with: .failure(error))
        case .presence:
            self.counters.presenceReceived += 1
        case .matchEnded:
            self.counters.matchesEnded += 1
            self.owner.peer(self, received: message, reliable: reliable, now: now)
        case .matchEvent, .lobbyUpdate:
            self.owner.peer(self, received: message, reliable: reliable, now: now)
        case .matchData, .matchmakerMatched, .partyUpdate, .ticketCancelled, .matchResumed:
            break  // MATCH_DATA is read in place above; the benches use none of the others
        }
    }

    // MARK: - Sending

    /// Sends a request in a RELIABLE frame; returns its id.
    @discardableResult
    func request(_ request: NativeRequest) -> UInt32 {
        let id = self.nextRequestID
        self.nextRequestID += 1
        self.sendReliable(NativeClientMessage.request(id: id, request).encoded(allocator: self.allocator))
        return id
    }

    /// Sends a message (MATCH_INPUT, say) in a RELIABLE frame.
    func send(_ message: NativeClientMessage) {
        self.sendReliable(message.encoded(allocator: self.allocator))
    }

    private func sendReliable(_ message: ByteBuffer) {
        let sequence: UInt64
        do {
            sequence = try self.outbox.append(message)
        } catch {
            self.count(error: "client backlog: \(error)")
            return
        }
        guard self.phase == .established, let context = self.connection?.context else { return }
        var frame = self.allocator.buffer(capacity: NativeFrame.reliableHeaderSize + message.readableBytes)
        frame.writeReliableFrame(sequence: sequence, ack: self.inbox.lastReceived, message: message)
        self.markAcknowledged()
        self.counters.reliableSent += 1
        context.writeAndFlush(NIOAny(frame), promise: nil)
    }

    /// A scheduled send: one SEND_DATA to every other player, RELIABLE (kept until acknowledged,
    /// queued while disconnected) or UNRELIABLE (dropped while disconnected).
    func fire(now: UInt64) -> Bool {
        guard self.sending, self.matchID != 0, self.phase != .finished else { return false }
        let established = self.phase == .established
        guard self.reliable || established else { return false }
        self.sentCount &+= 1
        // One buffer holds the frame; the outbox keeps a slice of it (the message).
        let messageSize = 1 + 8 + 1 + 4 + self.payloadSize
        var frame = self.allocator.buffer(capacity: NativeFrame.reliableHeaderSize + messageSize)
        if self.reliable {
            frame.writeInteger(UInt32(1 + 8 + 8 + messageSize), endianness: .big)
            frame.writeInteger(NativeFrameKind.reliable.rawValue)
            frame.writeInteger(self.outbox.nextSequence, endianness: .big)
            frame.writeInteger(self.inbox.lastReceived, endianness: .big)
        } else {
            frame.writeInteger(UInt32(1 + messageSize), endianness: .big)
            frame.writeInteger(NativeFrameKind.unreliable.rawValue)
        }
        let messageAt = frame.writerIndex
        frame.writeInteger(NativeMessageType.sendData.rawValue)
        frame.writeInteger(self.matchID, endianness: .big)
        frame.writeInteger(UInt8(0))  // no targets: every other player
        frame.writeInteger(UInt32(self.payloadSize), endianness: .big)
        frame.writeInteger(now, endianness: .big)
        frame.writeInteger(self.sentCount, endianness: .big)
        frame.writeInteger(UInt8(truncatingIfNeeded: self.seat))
        frame.writeRepeatingByte(0, count: self.payloadSize - NativeBenchPayload.minimumSize)
        if self.reliable {
            do {
                _ = try self.outbox.append(frame.getSlice(at: messageAt, length: messageSize)!)
            } catch {
                self.count(error: "client backlog: \(error)")
                return false
            }
        }
        guard established, let context = self.connection?.context else { return true }
        if self.reliable {
            self.markAcknowledged()
            self.counters.reliableSent += 1
        }
        context.writeAndFlush(NIOAny(frame), promise: nil)
        self.needsFlush = false
        return true
    }

    /// After RESUMED: every RELIABLE frame the server did not get, in order, with its number.
    private func resendUnacknowledged() {
        guard let context = self.connection?.context, self.outbox.unacknowledgedCount > 0 else { return }
        var frames = self.allocator.buffer(capacity: self.outbox.unacknowledgedBytes + self.outbox.unacknowledgedCount * NativeFrame.reliableHeaderSize)
        let ack = self.inbox.lastReceived
        var count: UInt64 = 0
        self.outbox.forEachUnacknowledged { sequence, message in
            frames.writeReliableFrame(sequence: sequence, ack: ack, message: message)
            count += 1
        }
        self.markAcknowledged()
        self.counters.reliableResent += count
        context.write(NIOAny(frames), promise: nil)
        self.needsFlush = true
    }

    private func writeControl(_ frame: NativeFrame) {
        guard let context = self.connection?.context else { return }
        var buffer = self.allocator.buffer(capacity: 32)
        frame.encodeFrame(into: &buffer)
        context.write(NIOAny(buffer), promise: nil)
        self.needsFlush = true
    }

    private func flush() {
        guard self.needsFlush else { return }
        self.needsFlush = false
        self.connection?.context?.flush()
    }

    // MARK: - Cut, resume, goodbye

    /// Loses the frame numbered `sequence` and everything after it on this connection, closes
    /// the connection abruptly (RST), and asks the owner for a new one.
    private func cut(losing sequence: UInt64) {
        self.cutOnNextData = false
        self.lostSequence = sequence
        self.awaitingFirstAfterResume = true
        let connection = self.connection
        self.connection = nil
        self.needsFlush = false
        self.phase = .disconnected
        self.cutAt = benchNow()
        connection?.abandon(abruptly: self.cutsAbruptly)
        // The link died both ways: a message of ours that was on its way is lost too, and
        // must be resent after RESUMED.
        _ = self.fire(now: self.cutAt)
        self.owner.peerCut(self)
    }

    /// Ends the session (GOODBYE); the server closes the connection.
    func goodbye() {
        let wasEstablished = self.phase == .established
        self.phase = .finished
        self.sending = false
        guard wasEstablished else {
            self.connection?.abandon(abruptly: false)
            return
        }
        self.writeControl(.goodbye)
        self.flush()
    }

    /// Stops for good (the bench is over): later closes are expected.
    func finish() {
        self.phase = .finished
        self.sending = false
        self.authenticated?.fail(BenchError("bench stopped"))
        self.authenticated = nil
    }
}

/// One TCP connection of a ``NativeBenchPeer``: frames in, the peer's writes out.
final class NativeBenchConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let peer: NativeBenchPeer
    private(set) var context: ChannelHandlerContext?
    private var frames = FrameAccumulator()
    /// The peer moved on (cut, or finished): nothing more is read.
    private var abandoned = false

    init(peer: NativeBenchPeer) {
        self.peer = peer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Added after a WebSocket upgrade: the connection is active already.
        if context.channel.isActive { self.peer.attach(self) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.peer.attach(self)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !self.abandoned { self.peer.connectionClosed(self) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !self.abandoned, self.peer.phase != .finished, !self.peer.closureExpected { self.peer.count(error: benchErrorKind(error)) }
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.abandoned else { return }
        let now = benchNow()
        var incoming = Self.unwrapInboundIn(data)
        self.frames.append(&incoming)
        do {
            while !self.abandoned, let body = try self.frames.nextFrame() {
                try self.peer.receive(body, now: now)
            }
        } catch {
            let kind = error is ReliableStreamError ? "sequence error" : "bad frame from server"
            self.peer.count(error: "\(kind): \(error)")
            self.frames.reset()
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !self.abandoned { self.peer.readComplete() }
        context.fireChannelReadComplete()
    }

    /// Stops reading and closes: abruptly (RST, as when a client gives up on a dead link) or
    /// in order.
    func abandon(abruptly: Bool) {
        self.abandoned = true
        self.frames.reset()
        guard let context = self.context else { return }
        if abruptly, let options = context.channel as? any SocketOptionProvider {
            _ = options.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        }
        context.close(promise: nil)
    }
}

/// The TLS handler of a bench connection to `host`: a host name is checked as the
/// certificate's name, an address against the certificate's addresses (no SNI for those).
func benchTLSHandler(context: NIOSSLContext, host: String) throws -> NIOSSLClientHandler {
    let name = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    return try NIOSSLClientHandler(context: context, serverHostname: name)
}

/// A bootstrap for bench connections to the native port.
func nativeBenchBootstrap(loop: any EventLoop) -> ClientBootstrap {
    ClientBootstrap(group: loop)
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .connectTimeout(.seconds(10))
}

/// Opens the first connection of `peer` (which must live on `loop`) and waits up to 20 s for
/// its AUTHENTICATED; `name` names the peer in errors.
func nativeBenchConnectAuthenticated(
    _ peer: NIOLoopBound<NativeBenchPeer>, loop: any EventLoop, to address: SocketAddress, host: String, port: Int,
    name: @autoclosure () -> String
) async throws -> any Channel {
    let authenticated = loop.makePromise(of: Void.self)
    let connect = nativeBenchBootstrap(loop: loop)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                peer.value.authenticated = authenticated
                try channel.pipeline.syncOperations.addHandler(NativeBenchConnection(peer: peer.value))
            }
        }
        .connect(to: address)
    return try await benchAwaitReady(
        connect, ready: authenticated, readyMessage: "AUTHENTICATED", host: host, port: port, player: name())
}

/// Opens a new connection for `peer` (which must live on `loop`).
func nativeBenchConnect(_ peer: NIOLoopBound<NativeBenchPeer>, loop: any EventLoop, to address: SocketAddress) -> EventLoopFuture<any Channel> {
    nativeBenchBootstrap(loop: loop)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NativeBenchConnection(peer: peer.value))
            }
        }
        .connect(to: address)
}
