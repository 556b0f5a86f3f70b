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
    /// Queues one encoded frame for the player. The buffer is shared with other recipients.
    func deliver(_ frame: ByteBuffer)
}

/// Turns a game's events into one wire format's frames.
public struct EventEncoder<Event> {
    /// The format this encoder writes.
    public let encoding: WireEncoding
    /// Writes one whole frame for `event` into the buffer.
    public let encode: (Event, inout ByteBuffer) -> Void

    /// Creates an encoder.
    public init(encoding: WireEncoding, encode: @escaping (Event, inout ByteBuffer) -> Void) {
        self.encoding = encoding
        self.encode = encode
    }
}
