import MatchHostWire
import NIOCore

/// The connection a session is attached to, as the session sees it. Implemented by the
/// server's native connection handler; every call is made on the session's event loop.
public protocol SessionTransport: AnyObject {
    /// Appends a `RELIABLE` frame to what goes out at the end of this event-loop pass.
    func writeReliable(sequence: UInt64, ack: UInt64, message: ByteBuffer)
    /// Appends an `UNRELIABLE` frame, or drops it if the connection is backed up.
    func writeUnreliable(message: ByteBuffer)
    /// Appends a control frame (`RESUMED`, `ACK`, ...).
    func writeControl(_ frame: NativeFrame)
    /// Sends `ERROR` with `error`, then closes the connection.
    func close(with error: NativeError)
}

/// A player's presence on the server, outliving any one connection.
///
/// Reliable messages for the player go through the session's ``ReliableOutbox``, numbered and
/// kept until acknowledged, whether or not a connection is attached; messages from the player
/// go through its ``ReliableInbox``, so each is handled exactly once even when a client
/// resends after a reconnect. Confined to the ``SessionRegistry``'s event loop.
public final class Session {
    /// The session's public id (it may appear in logs; it is not enough to resume the session).
    public let id: String
    /// The authenticated player.
    public let playerID: PlayerID
    /// The secret that resumes this session. Never logged.
    let resumeToken: String
    /// What the player has not yet acknowledged.
    public internal(set) var outbox: ReliableOutbox
    /// What the player has sent.
    public private(set) var inbox = ReliableInbox()
    /// The connection, while one is attached.
    public internal(set) var transport: (any SessionTransport)?
    /// Whether the session has ended; an ended session ignores every call.
    public internal(set) var isEnded = false
    /// Set when the session is to end at the next turn of the loop (its backlog passed its
    /// bound): from then on it takes nothing more, so the rest of a broadcast neither fills
    /// its outbox again nor schedules more ends.
    var isEnding = false
    var graceTimer: MatchTimer?
    var graceGeneration = 0
    weak var registry: SessionRegistry?

    /// What each unacknowledged message counts against `--max-backlog` on top of its bytes:
    /// about what keeping it costs (a buffer's storage header, a queue slot). A client that
    /// reads but never acknowledges cheap replies holds at most about twice the bound.
    public static let backlogChargePerMessage = 64

    init(id: String, playerID: PlayerID, resumeToken: String, maximumBacklogBytes: Int) {
        self.id = id
        self.playerID = playerID
        self.resumeToken = resumeToken
        self.outbox = ReliableOutbox(maximumBytes: maximumBacklogBytes, chargePerMessage: Self.backlogChargePerMessage)
    }

    /// Whether a connection is attached.
    public var isConnected: Bool { self.transport != nil }

    /// Whether the session still takes messages: neither ended nor about to end.
    public var isTakingMessages: Bool { !self.isEnded && !self.isEnding }

    /// Sends `message` (type byte first) reliably: numbered, kept until acknowledged, written
    /// now if a connection is attached and resent after a resume otherwise. Past the backlog
    /// bound the session ends with `BACKLOG_EXCEEDED`.
    public func sendReliable(_ message: ByteBuffer) {
        guard self.isTakingMessages else { return }
        let sequence: UInt64
        do {
            sequence = try self.outbox.append(message)
        } catch {
            self.registry?.endSoon(self, error: NativeError(.backlogExceeded, "\(error) (--max-backlog)"))
            return
        }
        guard let transport = self.transport else { return }
        transport.writeReliable(sequence: sequence, ack: self.inbox.lastReceived, message: message)
        self.inbox.acknowledgedByPiggyback()
    }

    /// Sends `message` unreliably: written now if a connection is attached, dropped otherwise.
    public func sendUnreliable(_ message: ByteBuffer) {
        guard self.isTakingMessages, let transport = self.transport else { return }
        transport.writeUnreliable(message: message)
    }

    /// Takes in the header of a `RELIABLE` frame from the player.
    /// - Returns: whether the message is new and must be handled (false for a duplicate).
    /// - Throws: ``ReliableStreamError`` for a sequence gap or an acknowledgement of something never sent.
    public func receiveReliable(sequence: UInt64, ack: UInt64) throws(ReliableStreamError) -> Bool {
        try self.outbox.acknowledge(through: ack)
        return try self.inbox.accept(sequence)
    }

    /// Takes in an `ACK` from the player.
    public func receiveAcknowledgement(_ ack: UInt64) throws(ReliableStreamError) {
        try self.outbox.acknowledge(through: ack)
    }

    /// The `ACK` to send after a batch of reads, if anything arrived that no outgoing frame
    /// has acknowledged yet.
    public func takeAcknowledgement() -> UInt64? {
        self.inbox.takeAcknowledgement()
    }

    /// Writes every unacknowledged message again, in order, with its original number.
    func resendUnacknowledged() {
        guard let transport = self.transport else { return }
        let ack = self.inbox.lastReceived
        self.outbox.forEachUnacknowledged { sequence, message in
            transport.writeReliable(sequence: sequence, ack: ack, message: message)
        }
        self.inbox.acknowledgedByPiggyback()
    }

    func endState() {
        self.isEnded = true
        self.outbox.removeAll()
        self.graceGeneration += 1
        self.graceTimer?.cancel()
        self.graceTimer = nil
    }
}
