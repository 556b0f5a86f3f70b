import MatchHostWire

/// What a ``FourInARowClient`` receives for its match.
public enum FourInARowEvent: Sendable, Hashable {
    /// A Four in a Row server message (the body of a MATCH_EVENT): STATE, MOVED,
    /// MOVE_REFUSED or GAME_OVER.
    case message(FourInARowServerMessage)
    /// PRESENCE: a player of the match joined, lost its connection, came back or left.
    case presence(playerID: String, change: NativePresenceChange, reason: NativeLeaveReason)
    /// MATCH_ENDED: the match is over, for this reason; nothing more comes for it.
    case matchEnded(reason: String)
}

/// What a ``FourInARowClient`` throws besides the errors of its ``MatchHostClient``.
public enum FourInARowClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// ``FourInARowClient/nextEvent(timeout:)`` got nothing in time; the client stays usable.
    case timedOut
    /// A MATCH_EVENT of the match was not a Four in a Row server message (the client is closed).
    case badMessage(String)

    /// A one-line description for logs.
    public var description: String {
        switch self {
        case .timedOut: return "no event in time"
        case .badMessage(let detail): return "undecodable Four in a Row message: \(detail)"
        }
    }
}
