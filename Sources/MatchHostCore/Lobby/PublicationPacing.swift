import NIOCore

/// When the next publication of coalesced changes is due: at once after a quiet spell, else
/// one interval after the previous publication.
///
/// A change that comes alone goes out on the loop's next turn rather than waiting a whole
/// interval; changes that come faster than one per interval are gathered into one
/// publication per interval. So subscribers see a change within one interval plus the
/// fan-out at worst, and the number of publications per second stays bounded.
public struct PublicationPacing: Sendable {
    /// The least time between two publications.
    public let interval: TimeAmount
    private var lastPublication: NIODeadline?

    /// Creates a pacing with `interval` between publications.
    public init(interval: TimeAmount) {
        self.interval = interval
    }

    /// When a publication of a change made at `now` is due.
    public func due(now: NIODeadline) -> NIODeadline {
        guard let last = self.lastPublication else { return now }
        return max(now, last + self.interval)
    }

    /// Records a publication at `now`.
    public mutating func published(at now: NIODeadline) {
        self.lastPublication = now
    }
}
