import NIOCore

/// Why a reliable stream cannot go on.
public enum ReliableStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The unacknowledged backlog would pass its bound.
    case backlogExceeded(bytes: Int, limit: Int)
    /// A message arrived whose sequence number skips ahead: one was lost, which over an
    /// ordered stream means the peer is broken.
    case sequenceGap(expected: UInt64, received: UInt64)
    /// The peer acknowledged a message that was never sent.
    case acknowledgedUnsent(ack: UInt64, lastSent: UInt64)

    /// A one-line explanation for logs and error replies.
    public var description: String {
        switch self {
        case .backlogExceeded(let bytes, let limit):
            return "unacknowledged backlog of \(bytes) bytes would pass its limit of \(limit)"
        case .sequenceGap(let expected, let received):
            return "sequence gap: expected \(expected), received \(received)"
        case .acknowledgedUnsent(let ack, let lastSent):
            return "acknowledgement \(ack) is past the last message sent (\(lastSent))"
        }
    }
}

/// The sending half of a reliable stream: numbers messages from 1 and keeps each until the
/// peer acknowledges it, so that after a reconnect exactly the unacknowledged ones are resent.
///
/// A pure value: no I/O, no clock. The server's sessions and the client library both use it.
/// Messages are kept as the caller's buffers (a broadcast's one shared buffer, say), so keeping
/// them costs a reference each, not a copy.
public struct ReliableOutbox: Sendable {
    /// The bound on the unacknowledged messages' bytes plus ``chargePerMessage`` for each.
    public let maximumBytes: Int
    /// What each kept message counts on top of its bytes: keeping one costs memory of its own
    /// (its buffer's storage, a slot in the queue), so that many tiny messages cannot hold
    /// many times ``maximumBytes``.
    public let chargePerMessage: Int
    /// The sequence number of the next message appended.
    public private(set) var nextSequence: UInt64 = 1
    /// The sum of the sizes of the messages not yet acknowledged.
    public private(set) var unacknowledgedBytes = 0
    /// The highest sequence number the peer has acknowledged (0: none); kept when
    /// ``removeAll()`` forgets the messages, so what was read can still be told after.
    public private(set) var lastAcknowledged: UInt64 = 0
    private var pending = CircularBuffer<ByteBuffer>(initialCapacity: 16)

    /// Creates an outbox whose unacknowledged messages may total at most `maximumBytes`,
    /// each counting `chargePerMessage` more than its size.
    public init(maximumBytes: Int, chargePerMessage: Int = 0) {
        self.maximumBytes = maximumBytes
        self.chargePerMessage = max(0, chargePerMessage)
    }

    /// What the unacknowledged messages count against ``maximumBytes``: their bytes, and
    /// ``chargePerMessage`` for each.
    public var chargedBytes: Int { self.unacknowledgedBytes + self.pending.count * self.chargePerMessage }

    /// The last sequence number handed out (0 before the first message).
    public var lastSent: UInt64 { self.nextSequence - 1 }
    /// The sequence number of the oldest unacknowledged message.
    public var firstUnacknowledged: UInt64 { self.nextSequence - UInt64(self.pending.count) }
    /// How many messages wait for an acknowledgement.
    public var unacknowledgedCount: Int { self.pending.count }

    /// Keeps `message` until it is acknowledged and returns its sequence number.
    /// - Throws: ``ReliableStreamError/backlogExceeded(bytes:limit:)``, and keeps nothing, if the
    ///   backlog (bytes and per-message charges) would pass ``maximumBytes``.
    public mutating func append(_ message: ByteBuffer) throws(ReliableStreamError) -> UInt64 {
        let total = self.unacknowledgedBytes + message.readableBytes
        let charged = self.chargedBytes + message.readableBytes + self.chargePerMessage
        guard charged <= self.maximumBytes else {
            throw .backlogExceeded(bytes: charged, limit: self.maximumBytes)
        }
        self.pending.append(message)
        self.unacknowledgedBytes = total
        let sequence = self.nextSequence
        self.nextSequence += 1
        return sequence
    }

    /// Drops every message up to and including `sequence`. Old acknowledgements are ignored.
    /// - Throws: ``ReliableStreamError/acknowledgedUnsent(ack:lastSent:)`` if `sequence` was never sent.
    public mutating func acknowledge(through sequence: UInt64) throws(ReliableStreamError) {
        guard sequence <= self.lastSent else {
            throw .acknowledgedUnsent(ack: sequence, lastSent: self.lastSent)
        }
        while self.firstUnacknowledged <= sequence, let dropped = self.pending.popFirst() {
            self.unacknowledgedBytes -= dropped.readableBytes
        }
        self.lastAcknowledged = max(self.lastAcknowledged, sequence)
    }

    /// Calls `body` with each unacknowledged message and its sequence number, oldest first:
    /// what to resend after a reconnect.
    public func forEachUnacknowledged(_ body: (UInt64, ByteBuffer) throws -> Void) rethrows {
        var sequence = self.firstUnacknowledged
        for message in self.pending {
            try body(sequence, message)
            sequence += 1
        }
    }

    /// Forgets every message (the session ended).
    public mutating func removeAll() {
        self.pending.removeAll()
        self.unacknowledgedBytes = 0
    }
}

/// The receiving half of a reliable stream: accepts each sequence number once and in order,
/// and tracks what still needs acknowledging.
public struct ReliableInbox: Sendable {
    /// The highest sequence number received so far; everything up to it has arrived.
    public private(set) var lastReceived: UInt64 = 0
    /// The highest sequence number acknowledged to the peer so far.
    public private(set) var lastAcknowledged: UInt64 = 0

    /// Creates an empty inbox.
    public init() {}

    /// Whether the message numbered `sequence` is new (deliver it) or a duplicate (drop it).
    /// - Throws: ``ReliableStreamError/sequenceGap(expected:received:)`` if it skips ahead.
    public mutating func accept(_ sequence: UInt64) throws(ReliableStreamError) -> Bool {
        if sequence <= self.lastReceived { return false }
        guard sequence == self.lastReceived + 1 else {
            throw .sequenceGap(expected: self.lastReceived + 1, received: sequence)
        }
        self.lastReceived = sequence
        return true
    }

    /// The acknowledgement to send, if anything arrived since the last one; marks it sent.
    public mutating func takeAcknowledgement() -> UInt64? {
        guard self.lastReceived > self.lastAcknowledged else { return nil }
        self.lastAcknowledged = self.lastReceived
        return self.lastReceived
    }

    /// Records that an acknowledgement of ``lastReceived`` went out piggybacked on a message.
    public mutating func acknowledgedByPiggyback() {
        self.lastAcknowledged = self.lastReceived
    }

    /// How many received messages are not yet acknowledged.
    public var unacknowledgedCount: UInt64 { self.lastReceived - self.lastAcknowledged }
}
