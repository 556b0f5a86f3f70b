import NIOCore

/// Why bytes from the network could not be turned into a message.
///
/// Every case names what was wrong precisely enough to go in a log line or an
/// error reply, so that a client developer can find the bug in their encoder.
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A frame announced a body longer than the configured maximum. Raised as soon
    /// as the 4-byte length is read, before any of the body is buffered.
    case frameTooLarge(length: UInt32, maximum: Int)
    /// A frame with a zero-length body: there is not even a message type byte.
    case emptyFrame
    /// A field ended past the end of the frame body.
    case truncated(field: String, needed: Int, available: Int)
    /// A string longer than the protocol allows (the trailing NUL not counted).
    case stringTooLong(field: String, length: Int, maximum: Int)
    /// A string whose bytes are not valid UTF-8.
    case invalidUTF8(field: String)
    /// A string holding a control character (U+0000-U+001F, U+007F-U+009F): no name, label or
    /// id needs one, and in a log line or on a terminal one could forge lines or run escapes.
    case controlCharacter(field: String)
    /// A message type byte this protocol does not define.
    case unknownMessageType(UInt8)
    /// A message type that only the other side may send (for example a client sending a server message).
    case wrongDirection(messageType: UInt8)

    /// A one-line explanation suitable for a log line or an error reply.
    public var description: String {
        switch self {
        case .frameTooLarge(let length, let maximum):
            return "frame body of \(length) bytes exceeds the maximum of \(maximum) bytes"
        case .emptyFrame:
            return "empty frame: a body must hold at least the message type byte"
        case .truncated(let field, let needed, let available):
            return "truncated \(field): needs \(needed) bytes, frame has \(available) left"
        case .stringTooLong(let field, let length, let maximum):
            return "\(field) is \(length) bytes long, the maximum is \(maximum)"
        case .invalidUTF8(let field):
            return "\(field) is not valid UTF-8"
        case .controlCharacter(let field):
            return "\(field) holds a control character (U+0000-U+001F or U+007F-U+009F)"
        case .unknownMessageType(let type):
            return "unknown message type \(type)"
        case .wrongDirection(let type):
            return "message type \(type) is only sent in the other direction"
        }
    }
}
