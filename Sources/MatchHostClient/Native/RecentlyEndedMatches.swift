import MatchHostWire
import NIOCore

/// The last matches a client reported ended, so that none is reported twice: the server tells
/// a MATCH_ENDED once more if it crashes between the client's acknowledgement and dropping its
/// stored copy, and one the client reported lost (its new session did not have it) may still
/// come from the server. Match ids do not repeat (but after a restore from a backup: a match
/// the session is seated in again is removed).
///
/// Bounded: the oldest is forgotten once `capacity` are held, as a repeat only comes soon after
/// the first (at the next sign-in).
struct RecentlyEndedMatches {
    /// How many it holds at most.
    let capacity: Int
    private var order = CircularBuffer<MatchIdentifier>()
    private var members: Set<MatchIdentifier> = []

    /// Holds at most `capacity` matches.
    init(capacity: Int) {
        precondition(capacity > 0, "a capacity of at least one")
        self.capacity = capacity
    }

    /// Records `match` as reported ended.
    /// - Returns: false if it already was (a repeat, not to report again).
    mutating func insert(_ match: MatchIdentifier) -> Bool {
        guard self.members.insert(match).inserted else { return false }
        self.order.append(match)
        if self.order.count > self.capacity {
            self.members.remove(self.order.removeFirst())
        }
        return true
    }

    /// Forgets `match`: a match under that id is being played (after a restore from a backup,
    /// an id can come again), and its end is new.
    mutating func remove(_ match: MatchIdentifier) {
        guard self.members.remove(match) != nil else { return }
        self.order.removeAll { $0 == match }
    }

    /// Whether `match` was reported ended (and is still remembered).
    func contains(_ match: MatchIdentifier) -> Bool { self.members.contains(match) }
}
