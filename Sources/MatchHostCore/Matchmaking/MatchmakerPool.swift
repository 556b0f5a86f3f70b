/// The tickets of one mode that share a string property value (or every ticket of a mode):
/// where a ticket looks for partners. Kept in age order; removed tickets are skipped, and
/// swept out once they are a quarter (every skipped one still costs a memory read).
final class MatchmakerBucket {
    var references: [MatchmakerReference] = []
    var live = 0
    /// The matchmaker's change count when a ticket last arrived or relaxed here.
    var lastChange: UInt64 = 0

    /// The index of the first reference younger than `sequence`.
    func firstIndex(after sequence: UInt64) -> Int {
        var low = 0
        var high = self.references.count
        while low < high {
            let middle = (low + high) / 2
            if self.references[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Which bucket: a mode and one `key = value` (packed like the string properties), or the whole mode.
struct MatchmakerBucketKey: Hashable {
    var mode: UInt32
    var property: UInt64

    static func wholeMode(_ mode: UInt32) -> MatchmakerBucketKey {
        MatchmakerBucketKey(mode: mode, property: .max)
    }
}

/// The waiting tickets in compiled form: slots, the age order, the buckets, and the
/// interned strings. It knows nothing of ids or players; ``Matchmaker`` does.
struct MatchmakerPool {
    var tables = MatchmakerTables()
    var interner = MatchmakerInterner()
    /// Every waiting ticket, oldest first (removed ones are skipped until swept).
    private(set) var ageOrder: [MatchmakerReference] = []
    private(set) var buckets: [MatchmakerBucketKey: MatchmakerBucket] = [:]
    /// Counts arrivals and relaxations; a failed search remembers it (see ``MatchmakerEntry/failedAtChange``).
    private(set) var changeCount: UInt64 = 1
    private(set) var count = 0
    private var nextSequence: UInt64 = 1

    /// The sequence of the youngest ticket ever added.
    var lastSequence: UInt64 { self.nextSequence - 1 }
    private var freeSlots: [Int32] = []
    /// Array cells that belong to removed tickets.
    private var garbage = 0
    /// The youngest ticket whose relaxation has been announced to its buckets.
    private var relaxedThrough: UInt64 = 0

    /// Compiles and stores a validated ticket; returns its slot.
    mutating func insert(_ ticket: MatchmakerTicket, relaxAt: UInt64) -> Int32 {
        var entry = MatchmakerEntry()
        entry.sequence = self.nextSequence
        self.nextSequence += 1
        entry.relaxAt = relaxAt
        entry.mode = self.interner.intern(ticket.mode)
        entry.players = UInt8(ticket.players.count)
        entry.minPlayers = UInt8(ticket.minPlayers)
        entry.maxPlayers = UInt8(ticket.maxPlayers)

        entry.recordStart = Int32(self.tables.words.count)
        entry.stringCount = UInt8(ticket.stringProperties.count)
        entry.numberCount = UInt8(ticket.numberProperties.count)
        entry.clauseCount = UInt8(ticket.query.clauses.count)
        self.tables.appendHeader(of: entry)
        for (key, value) in ticket.stringProperties {
            let packed = UInt64(self.interner.intern(key)) << 32 | UInt64(self.interner.intern(value))
            self.tables.words.append(packed)
        }
        for (key, value) in ticket.numberProperties {
            self.tables.words.append(UInt64(self.interner.intern(key)))
            self.tables.words.append(value.bitPattern)
        }
        for clause in ticket.query.clauses {
            self.appendWords(of: clause)
        }

        let slot: Int32
        if let free = self.freeSlots.popLast() {
            slot = free
            self.tables.entries[Int(slot)] = entry
        } else {
            slot = Int32(self.tables.entries.count)
            self.tables.entries.append(entry)
        }
        let reference = MatchmakerReference(slot: slot, record: entry.recordStart, sequence: entry.sequence)
        self.ageOrder.append(reference)
        self.changeCount += 1
        for position in -1..<Int(entry.stringCount) {
            let key = self.bucketKey(of: entry, position: position)
            let bucket: MatchmakerBucket
            if let existing = self.buckets[key] {
                bucket = existing
            } else {
                bucket = MatchmakerBucket()
                self.buckets[key] = bucket
            }
            bucket.references.append(reference)
            bucket.live += 1
            bucket.lastChange = self.changeCount
        }
        self.count += 1
        return slot
    }

    private mutating func appendWords(of clause: MatchmakerClause) {
        switch clause.predicate {
        case .equals(let key, let value):
            self.tables.words.append(
                MatchmakerClauseWords.encode(
                    key: self.interner.intern(key), value: self.interner.intern(value), isRequired: clause.isRequired,
                    isRange: false))
            self.tables.words.append(0)
            self.tables.words.append(0)
        case .range(let key, let min, let max):
            self.tables.words.append(
                MatchmakerClauseWords.encode(
                    key: self.interner.intern(key), value: 0, isRequired: clause.isRequired, isRange: true))
            self.tables.words.append((min ?? -.infinity).bitPattern)
            self.tables.words.append((max ?? .infinity).bitPattern)
        }
    }

    /// Forgets the ticket in `slot`. Safe during a pass: nothing is moved that a pass walks by index.
    mutating func remove(slot: Int32) {
        let entry = self.tables.entries[Int(slot)]
        precondition(entry.sequence != 0, "removing a free matchmaker slot")
        self.tables.entries[Int(slot)].sequence = 0
        self.tables.words[Int(entry.recordStart)] = 0
        for position in -1..<Int(entry.stringCount) {
            let key = self.bucketKey(of: entry, position: position)
            guard let bucket = self.buckets[key] else { continue }
            bucket.live -= 1
            if bucket.live == 0 {
                self.buckets[key] = nil
            } else if bucket.references.count >= 32, bucket.live * 4 < bucket.references.count * 3 {
                let entries = self.tables.entries
                bucket.references.removeAll { entries[Int($0.slot)].sequence != $0.sequence }
            }
        }
        self.garbage += entry.recordLength
        self.freeSlots.append(slot)
        self.count -= 1
    }

    /// The buckets a ticket belongs to: position -1 is its whole mode, 0..<stringCount its
    /// mode with each string property.
    private func bucketKey(of entry: MatchmakerEntry, position: Int) -> MatchmakerBucketKey {
        guard position >= 0 else { return .wholeMode(entry.mode) }
        return MatchmakerBucketKey(mode: entry.mode, property: self.tables.words[entry.stringsStart + position])
    }

    /// The bucket a search from `entry` scans: the smallest bucket one of its required
    /// equalities names (every partner is in each of them), else its whole mode. Nil when a
    /// required equality names a bucket nobody is in, so no partner exists.
    func searchBucket(for entry: MatchmakerEntry) -> MatchmakerBucket? {
        var best: MatchmakerBucket?
        for index in stride(from: entry.clausesStart, to: entry.clausesStart + 3 * Int(entry.clauseCount), by: 3) {
            let header = self.tables.words[index]
            guard header & MatchmakerClauseWords.required != 0, header & MatchmakerClauseWords.range == 0 else { continue }
            let property = (header >> 32) << 32 | header & MatchmakerClauseWords.valueMask
            let key = MatchmakerBucketKey(mode: entry.mode, property: property)
            guard let bucket = self.buckets[key] else { return nil }
            if best.map({ bucket.live < $0.live }) ?? true { best = bucket }
        }
        return best ?? self.buckets[.wholeMode(entry.mode)]
    }

    /// Tells the buckets of every ticket that has relaxed by `now` that it did: a ticket
    /// that now needs fewer players may complete a group that failed before.
    mutating func announceRelaxations(now: UInt64) {
        var index = self.firstAgeIndex(after: self.relaxedThrough)
        var announced = false
        while index < self.ageOrder.count {
            let reference = self.ageOrder[index]
            let entry = self.tables.entries[Int(reference.slot)]
            if entry.sequence == reference.sequence {
                guard entry.relaxAt <= now else { break }
                if !announced {
                    self.changeCount += 1
                    announced = true
                }
                for position in -1..<Int(entry.stringCount) {
                    self.buckets[self.bucketKey(of: entry, position: position)]?.lastChange = self.changeCount
                }
            }
            self.relaxedThrough = reference.sequence
            index += 1
        }
    }

    private func firstAgeIndex(after sequence: UInt64) -> Int {
        var low = 0
        var high = self.ageOrder.count
        while low < high {
            let middle = (low + high) / 2
            if self.ageOrder[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The oldest waiting ticket's slot.
    var oldestSlot: Int32? {
        self.ageOrder.first { self.tables.isLive($0) }?.slot
    }

    /// Sweeps removed tickets out of the age order and the shared arrays once they are the
    /// majority, and unused strings out of the interner. Not during a pass: a pass walks the
    /// age order by index.
    mutating func compactIfNeeded() {
        if self.ageOrder.count >= 64, self.ageOrder.count > 2 * self.count {
            let entries = self.tables.entries
            self.ageOrder.removeAll { entries[Int($0.slot)].sequence != $0.sequence }
        }
        if self.interner.needsSweep { self.sweepInterner() }
        guard self.garbage > 4096, self.garbage * 2 > self.tables.words.count else { return }
        // Records are copied in age order, so that a scan keeps walking memory forward.
        var words: [UInt64] = []
        words.reserveCapacity(self.tables.words.count - self.garbage)
        for reference in self.ageOrder where self.tables.isLive(reference) {
            let entry = self.tables.entries[Int(reference.slot)]
            let start = Int(entry.recordStart)
            words.append(contentsOf: self.tables.words[start..<(start + entry.recordLength)])
            self.tables.entries[Int(reference.slot)].recordStart = Int32(words.count - entry.recordLength)
        }
        self.tables.words = words
        self.garbage = 0
        // Every reference learns its record's new place; references to removed tickets go.
        let entries = self.tables.entries
        func relocated(_ references: inout [MatchmakerReference]) {
            references.removeAll { entries[Int($0.slot)].sequence != $0.sequence }
            for index in references.indices {
                references[index].record = entries[Int(references[index].slot)].recordStart
            }
        }
        relocated(&self.ageOrder)
        for bucket in self.buckets.values { relocated(&bucket.references) }
    }

    /// Frees the interned strings no waiting ticket uses.
    private mutating func sweepInterner() {
        var used = [Bool](repeating: false, count: self.interner.idLimit)
        let words = self.tables.words
        for entry in self.tables.entries where entry.sequence != 0 {
            used[Int(entry.mode)] = true
            for index in entry.stringsStart..<entry.numbersStart {
                used[Int(words[index] >> 32)] = true
                used[Int(UInt32(truncatingIfNeeded: words[index]))] = true
            }
            for index in stride(from: entry.numbersStart, to: entry.clausesStart, by: 2) {
                used[Int(words[index])] = true
            }
            for index in stride(from: entry.clausesStart, to: entry.clausesStart + 3 * Int(entry.clauseCount), by: 3) {
                used[Int(words[index] >> 32)] = true
                if words[index] & MatchmakerClauseWords.range == 0 {
                    used[Int(words[index] & MatchmakerClauseWords.valueMask)] = true
                }
            }
        }
        self.interner.sweep(keeping: used)
    }
}
