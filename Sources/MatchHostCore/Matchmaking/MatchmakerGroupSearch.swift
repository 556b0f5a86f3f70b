/// The search for a group around one ticket (the seed): partners oldest first, greedily,
/// which settles almost every seed during the scan; when the greedy group falls short, a
/// depth-first search over the same partners (include before skip, so still oldest first)
/// with a bound on the players left, which finds a group whenever one exists within the
/// budget. Its buffers are reused from seed to seed, so a search allocates nothing.
///
/// Whether two tickets accept each other never changes, so a seed that waits keeps the
/// list of its younger partners (when it is short, see ``MatchmakerPartners``) and its next
/// search reads that list and the tickets that arrived since, instead of its whole bucket.
struct MatchmakerGroupSearch {
    /// What a search found.
    enum Outcome {
        /// A valid group is in ``group``.
        case found
        /// No group with this seed exists among the waiting tickets.
        case nothing
        /// The budget ran out before the search was complete.
        case exhausted
    }

    /// The group found: the seed, then its partners in the order they were chosen.
    private(set) var group: [Int32] = []
    /// Extensions tried by the last depth-first search.
    private(set) var nodes = 0
    /// Every younger ticket that accepts, and is accepted by, the seed, oldest first (whether
    /// or not its size fits now), up to ``MatchmakerPartners/limit``; valid after a search
    /// that scanned to the end (not `.found`).
    private(set) var partners: [MatchmakerReference] = []
    /// More partners than ``MatchmakerPartners/limit``: `partners` is incomplete.
    private(set) var partnersOverflowed = false
    private var candidates: [Int32] = []
    /// Players of `candidates[i...]`: the most a group can still gain from index i on.
    private var playersFrom: [Int32] = []
    private var budget = 0
    private var exhausted = false
    private var now: UInt64 = 0

    /// Looks for a group around `seed` among `older` (older tickets of the seed's mode that
    /// may still be in a group), then its younger partners: `known` (its partners among the
    /// tickets up to sequence `knownThrough`), and the live tickets of `bucket` after that,
    /// up to sequence `through` (the youngest ticket the pass may see); with no `known`, every
    /// live ticket of `bucket` younger than the seed, up to `through`.
    mutating func run(
        seed: Int32, tables: MatchmakerTables, bucket: MatchmakerBucket, older: [MatchmakerReference],
        known: MatchmakerPartners?, budget: Int, now: UInt64, through: UInt64
    ) -> Outcome {
        self.now = now
        self.budget = budget
        self.nodes = 0
        self.exhausted = false
        self.candidates.removeAll(keepingCapacity: true)
        self.group.removeAll(keepingCapacity: true)
        self.partners.removeAll(keepingCapacity: true)
        self.partnersOverflowed = false
        let seedEntry = tables.entries[Int(seed)]
        self.group.append(seed)
        var greedy = GroupShape(seedEntry, now: now)

        for reference in older where reference.slot != seed {
            guard let entry = tables.liveEntry(reference), entry.mode == seedEntry.mode,
                tables.accepts(seedEntry, entry), tables.accepts(entry, seedEntry)
            else { continue }
            if self.offer(reference.slot, entry, seed: seedEntry, greedy: &greedy, tables: tables) { return .found }
        }
        var scanFrom = seedEntry.sequence
        if let known {
            scanFrom = known.through
            for reference in known.references {
                // Through the slot, not the record offset: records may have moved since.
                let entry = tables.entries[Int(reference.slot)]
                guard entry.sequence == reference.sequence else { continue }
                self.keepPartner(reference)
                if self.offer(reference.slot, entry, seed: seedEntry, greedy: &greedy, tables: tables) { return .found }
            }
        }
        let references = bucket.references
        var index = bucket.firstIndex(after: scanFrom)
        while index < references.count {
            let reference = references[index]
            // A bucket is in age order: what follows arrived after the pass began.
            guard reference.sequence <= through else { break }
            index += 1
            guard let entry = tables.liveEntry(reference), tables.accepts(seedEntry, entry), tables.accepts(entry, seedEntry)
            else { continue }
            self.keepPartner(reference)
            if self.offer(reference.slot, entry, seed: seedEntry, greedy: &greedy, tables: tables) { return .found }
        }
        if greedy.isValid(members: self.group.count) { return .found }
        guard !self.candidates.isEmpty else { return .nothing }

        // The greedy group fell short (a partner raised the size it needs, or parties did not
        // fit): search every combination, oldest first.
        self.playersFrom = [Int32](repeating: 0, count: self.candidates.count + 1)
        for position in self.candidates.indices.reversed() {
            self.playersFrom[position] =
                self.playersFrom[position + 1] + Int32(tables.entries[Int(self.candidates[position])].players)
        }
        self.group.removeAll(keepingCapacity: true)
        self.group.append(seed)
        guard self.extend(from: 0, shape: GroupShape(seedEntry, now: now), tables: tables) else {
            return self.exhausted ? .exhausted : .nothing
        }
        self.fill(tables: tables)
        return .found
    }

    @inline(__always)
    private mutating func keepPartner(_ reference: MatchmakerReference) {
        if self.partners.count < MatchmakerPartners.limit {
            self.partners.append(reference)
        } else {
            self.partnersOverflowed = true
        }
    }

    /// Keeps a partner of the seed as a candidate if its size fits with the seed now, and adds
    /// it to the greedy group if it fits there too. Returns true when the greedy group is full.
    private mutating func offer(
        _ slot: Int32, _ entry: MatchmakerEntry, seed: MatchmakerEntry, greedy: inout GroupShape, tables: MatchmakerTables
    ) -> Bool {
        let pairCap = Int32(min(seed.maxPlayers, entry.maxPlayers))
        guard Int32(seed.players) + Int32(entry.players) <= pairCap,
            max(seed.required(at: self.now), entry.required(at: self.now)) <= pairCap
        else { return false }
        self.candidates.append(slot)
        if let next = greedy.adding(entry, now: self.now), self.fitsGroup(slot, tables: tables) {
            greedy = next
            self.group.append(slot)
            return greedy.players == greedy.cap
        }
        return false
    }

    /// Depth first from `candidates[start...]`: stops at the first valid group.
    private mutating func extend(from start: Int, shape: GroupShape, tables: MatchmakerTables) -> Bool {
        if shape.isValid(members: self.group.count) { return true }
        if shape.players + self.playersFrom[start] < shape.need { return false }
        var index = start
        while index < self.candidates.count {
            let slot = self.candidates[index]
            if let next = shape.adding(tables.entries[Int(slot)], now: self.now), self.fitsGroup(slot, tables: tables) {
                self.nodes += 1
                if self.nodes > self.budget {
                    self.exhausted = true
                    return false
                }
                self.group.append(slot)
                if self.extend(from: index + 1, shape: next, tables: tables) { return true }
                if self.exhausted { return false }
                self.group.removeLast()
            }
            index += 1
        }
        return false
    }

    /// Grows a valid group with the oldest candidates that keep it valid, up to its cap.
    private mutating func fill(tables: MatchmakerTables) {
        var shape = GroupShape(tables.entries[Int(self.group[0])], now: self.now)
        for slot in self.group.dropFirst() {
            shape = shape.adding(tables.entries[Int(slot)], now: self.now)!
        }
        for slot in self.candidates where shape.players < shape.cap && !self.group.contains(slot) {
            if let next = shape.adding(tables.entries[Int(slot)], now: self.now), next.players >= next.need,
                self.fitsGroup(slot, tables: tables)
            {
                shape = next
                self.group.append(slot)
            }
        }
    }

    /// Whether `slot` accepts, and is accepted by, every partner so far (the seed was checked).
    private func fitsGroup(_ slot: Int32, tables: MatchmakerTables) -> Bool {
        var index = 1
        while index < self.group.count {
            if !tables.compatible(self.group[index], slot) { return false }
            index += 1
        }
        return true
    }
}

/// The sizes a group under construction must respect.
struct GroupShape {
    /// Players so far.
    var players: Int32
    /// The smallest maximum among its tickets.
    var cap: Int32
    /// The largest size its tickets need now.
    var need: Int32

    init(_ seed: MatchmakerEntry, now: UInt64) {
        self.players = Int32(seed.players)
        self.cap = Int32(seed.maxPlayers)
        self.need = seed.required(at: now)
    }

    private init(players: Int32, cap: Int32, need: Int32) {
        self.players = players
        self.cap = cap
        self.need = need
    }

    /// The shape with `entry` added, or nil if it would no longer fit or could never be met.
    @inline(__always)
    func adding(_ entry: MatchmakerEntry, now: UInt64) -> GroupShape? {
        let cap = min(self.cap, Int32(entry.maxPlayers))
        let players = self.players + Int32(entry.players)
        let need = max(self.need, entry.required(at: now))
        guard players <= cap, need <= cap else { return nil }
        return GroupShape(players: players, cap: cap, need: need)
    }

    /// A group is valid with two tickets or more and enough players for every one of them.
    @inline(__always)
    func isValid(members: Int) -> Bool {
        members >= 2 && self.players >= self.need
    }
}

/// A waiting ticket's younger partners (tickets it accepts and that accept it) among the
/// tickets up to sequence `through`, kept between searches while they are few.
struct MatchmakerPartners {
    /// The most partners kept per ticket: a ticket with more is searched by scanning its
    /// bucket, which then usually succeeds anyway.
    static let limit = 32

    var through: UInt64
    var references: [MatchmakerReference]
}
