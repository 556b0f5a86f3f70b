/// Small integer ids for the strings tickets use (modes, property keys, string values), so
/// that comparing tickets compares integers.
///
/// Ids are not counted per use (that would cost a hash lookup per string on every removal);
/// instead the pool sweeps out the ids no waiting ticket uses once the table has grown well
/// past what is in use, so clients cannot grow it without bound.
struct MatchmakerInterner {
    private var ids: [String: UInt32] = [:]
    private var names: [String] = []
    private var freeIDs: [UInt32] = []
    /// Strings in use after the last sweep.
    private var countAfterSweep = 0

    /// How many strings have ids.
    var count: Int { self.ids.count }

    /// The id of `name`, creating one if needed.
    mutating func intern(_ name: String) -> UInt32 {
        if let id = self.ids[name] { return id }
        let id: UInt32
        if let reused = self.freeIDs.popLast() {
            id = reused
            self.names[Int(id)] = name
        } else {
            precondition(self.names.count < MatchmakerClauseWords.idLimit, "too many distinct matchmaker strings")
            id = UInt32(self.names.count)
            self.names.append(name)
        }
        self.ids[name] = id
        return id
    }

    /// Whether the table has grown enough since the last sweep to be worth sweeping.
    var needsSweep: Bool {
        self.ids.count > 2 * self.countAfterSweep + 1024
    }

    /// Frees every id for which `used` is false (indexed by id).
    mutating func sweep(keeping used: [Bool]) {
        for index in self.names.indices where !used[index] && !self.names[index].isEmpty {
            self.ids[self.names[index]] = nil
            self.names[index] = ""
            self.freeIDs.append(UInt32(index))
        }
        self.countAfterSweep = self.ids.count
    }

    /// One more than the largest id handed out: the size of a `used` table for ``sweep(keeping:)``.
    var idLimit: Int { self.names.count }
}
