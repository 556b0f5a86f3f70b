import MatchHostWire
import NIOCore

/// How fast a native connection's frames are taken in: `--max-message-rate` frames a second
/// (ACK, PING and PONG against an allowance of their own, so that a client acknowledging a
/// busy match does not use up what it may send itself) and `--max-inbound-rate` bytes a
/// second, each with a burst of one second's worth (the bytes' at least one largest frame).
///
/// A client over an allowance is not closed: the server stops reading from it until the
/// allowance has refilled, so it is slowed to the rate, as TCP slows any sender whose reader
/// is behind. A well-behaved client can exceed the rate for a moment, such as a resume that
/// sends again everything the server missed, or a burst of saves, and a client that floods
/// costs the server no more than the rate.
struct InboundPacing {
    private var messages: RateBucket
    private var controls: RateBucket
    private var bytes: RateBucket

    init(messagesPerSecond: Double, bytesPerSecond: Int, maxFrameBytes: Int, now: NIODeadline) {
        self.messages = .frames(perSecond: messagesPerSecond, now: now)
        self.controls = .frames(perSecond: messagesPerSecond, now: now)
        self.bytes = .bytes(perSecond: bytesPerSecond, maxFrameBytes: maxFrameBytes, now: now)
    }

    /// Counts a frame taken in: `isControl` for ACK, PING and PONG, `bodyBytes` its body
    /// (its 4-byte length prefix is counted too).
    /// - Returns: how long to stop reading before the next frame (nil: read on).
    mutating func taken(isControl: Bool, bodyBytes: Int, now: NIODeadline) -> TimeAmount? {
        let frameWait = isControl ? self.controls.charge(1, now: now) : self.messages.charge(1, now: now)
        let byteWait = self.bytes.charge(Double(RateBucket.bytes(ofFrameBody: bodyBytes)), now: now)
        switch (frameWait, byteWait) {
        case (nil, nil): return nil
        case (let wait?, nil), (nil, let wait?): return wait
        case (let a?, let b?): return max(a, b)
        }
    }
}

extension NativeFrame {
    /// ACK, PING or PONG: frames counted against their own allowance (``InboundPacing``).
    var isControl: Bool {
        switch self {
        case .ack, .ping, .pong: return true
        default: return false
        }
    }
}
