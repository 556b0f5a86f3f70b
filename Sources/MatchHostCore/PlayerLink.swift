import NIOCore

/// A wire format a player's connection speaks. A match encodes each event once per
/// format in use among its recipients, then writes that one buffer to all of them.
public struct WireEncoding: Hashable, Sendable {
    /// The index of this format in a match's encoder table.
    public let rawValue: Int

    /// Creates an encoding with a given table index.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The tutorial's Cat Race protocol on port 1955.
    public static let catRace = WireEncoding(rawValue: 0)
    /// MatchHost's own protocol.
    public static let native = WireEncoding(rawValue: 1)
    /// How many encodings exist; the size of an encoder table.
    public static let count = 2
}

/// Where a match delivers frames for one player: in the server, the player's connection.
///
/// A link is used on the match's event loop. An implementation whose connection lives on
/// another loop must hop itself; one on the same loop should write without flushing and
/// flush once per event-loop pass, so that many events to one player cost one syscall.
public protocol PlayerLink: AnyObject {
    /// The wire format this link speaks.
    var encoding: WireEncoding { get }
    /// Whether the link still takes events while its player is away: a session link keeps
    /// them for the player's return, a bare connection cannot.
    var keepsDeliveringWhileAway: Bool { get }
    /// Queues one encoded frame for the player, to be delivered for sure (resent after a
    /// reconnect where the link can). The buffer is shared with other recipients.
    func deliver(_ frame: ByteBuffer)
    /// Queues one encoded frame that may be dropped if the player cannot take it now.
    func deliverUnreliably(_ frame: ByteBuffer)
}

extension PlayerLink {
    /// A connection's link goes with its connection.
    public var keepsDeliveringWhileAway: Bool { false }
    /// A link with no unreliable path delivers everything the one way it has.
    public func deliverUnreliably(_ frame: ByteBuffer) { self.deliver(frame) }
}

/// Turns a game's events into one wire format's frames.
public struct EventEncoder<Event> {
    /// The format this encoder writes.
    public let encoding: WireEncoding
    /// Writes `event` into the buffer: a whole frame for Cat Race, one message (type byte
    /// first, no frame header) for the native protocol, whose sessions add the header.
    public let encode: (Event, inout ByteBuffer) -> Void

    /// Creates an encoder.
    public init(encoding: WireEncoding, encode: @escaping (Event, inout ByteBuffer) -> Void) {
        self.encoding = encoding
        self.encode = encode
    }
}
