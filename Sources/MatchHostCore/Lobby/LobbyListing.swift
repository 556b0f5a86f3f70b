/// What a lobby shows of one match: anything with the match's id.
public protocol LobbyEntry: Equatable {
    /// The listed match.
    var matchID: MatchID { get }
}

/// One game's lobby: the open matches as its subscribers last saw them, and which matches
/// changed since.
///
/// Changes are not pushed one by one: a match marked dirty is looked at again on the next
/// ``publish(current:)``, which compares it with what was published and reports it as added,
/// changed or removed, or not at all if it ended up as it was. So a burst of joins to one
/// match costs subscribers one update, whatever the burst's length, and a match opened and
/// closed between two publications costs nothing.
public struct LobbyListing<Entry: LobbyEntry> {
    /// What happened to an entry between two publications.
    public enum Change: Equatable {
        /// Newly listed.
        case added(Entry)
        /// Listed before, different now.
        case changed(Entry)
        /// No longer listed; the entry as it was last published.
        case removed(Entry)
    }

    private var published: [MatchID: Entry] = [:]
    /// Published ids in increasing order, for paging. Ids grow over time, so a new one is
    /// almost always appended.
    private var order: [MatchID] = []
    private var dirty: Set<MatchID> = []

    /// Creates an empty lobby.
    public init() {}

    /// How many matches are listed (as last published).
    public var count: Int { self.order.count }

    /// Whether some match changed since the last publication.
    public var hasChanges: Bool { !self.dirty.isEmpty }

    /// Notes that `matchID` may have changed (opened, a player came or went, it ended).
    public mutating func markDirty(_ matchID: MatchID) {
        self.dirty.insert(matchID)
    }

    /// Looks at every dirty match again and publishes what changed, in increasing match id.
    /// - Parameter current: the match's entry now, or nil if it should not be listed (ended,
    ///   private).
    public mutating func publish(current: (MatchID) -> Entry?) -> [Change] {
        guard !self.dirty.isEmpty else { return [] }
        var changes: [Change] = []
        changes.reserveCapacity(self.dirty.count)
        for id in self.dirty.sorted() {
            let before = self.published[id]
            switch (before, current(id)) {
            case (nil, nil):
                continue
            case (nil, let entry?):
                self.published[id] = entry
                self.insertOrdered(id)
                changes.append(.added(entry))
            case (let old?, nil):
                self.published[id] = nil
                self.removeOrdered(id)
                changes.append(.removed(old))
            case (let old?, let entry?):
                guard old != entry else { continue }
                self.published[id] = entry
                changes.append(.changed(entry))
            }
        }
        self.dirty.removeAll(keepingCapacity: true)
        return changes
    }

    /// Listed entries with ids after `after`, in increasing id, that pass `filter`; at most
    /// `limit` of them, and the cursor for the next page (0 when there is none).
    /// - Parameter examining: the most entries looked at. A filter that few entries pass would
    ///   otherwise look at the whole listing for one page; when it runs out, the page ends
    ///   early (with fewer than `limit` entries, maybe none) and its cursor is the last entry
    ///   looked at.
    public func page(
        after: MatchID, limit: Int, examining scanLimit: Int = .max, where filter: (Entry) -> Bool
    ) -> (entries: [Entry], next: MatchID) {
        precondition(scanLimit >= 1, "a page looks at one entry at least")
        var entries: [Entry] = []
        var index = self.firstIndex(after: after)
        var examined = 0
        while index < self.order.count {
            if examined == scanLimit { return (entries, self.order[index - 1]) }
            let entry = self.published[self.order[index]]!
            index += 1
            examined += 1
            guard filter(entry) else { continue }
            if entries.count == limit {
                return (entries, entries.last!.matchID)
            }
            entries.append(entry)
        }
        return (entries, 0)
    }

    /// Every listed entry, in increasing id.
    public var entries: [Entry] { self.order.map { self.published[$0]! } }

    /// The newest listed match's id, or nil if none is listed.
    public var lastID: MatchID? { self.order.last }

    /// At most `limit` listed entries with ids after `after` and up to `through`, in increasing id.
    /// Costs a binary search and the entries returned, however many are listed after `through`.
    public func entries(after: MatchID, through: MatchID, limit: Int) -> [Entry] {
        var entries: [Entry] = []
        var index = self.firstIndex(after: after)
        while index < self.order.count, entries.count < limit, self.order[index] <= through {
            entries.append(self.published[self.order[index]]!)
            index += 1
        }
        return entries
    }

    private func firstIndex(after id: MatchID) -> Int {
        var low = 0
        var high = self.order.count
        while low < high {
            let middle = (low + high) / 2
            if self.order[middle] <= id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func insertOrdered(_ id: MatchID) {
        if let last = self.order.last, last > id {
            self.order.insert(id, at: self.firstIndex(after: id))
        } else {
            self.order.append(id)
        }
    }

    private mutating func removeOrdered(_ id: MatchID) {
        let index = self.firstIndex(after: id) - 1
        if index >= 0, self.order[index] == id { self.order.remove(at: index) }
    }
}
