/// A waiting ticket in the form the search reads: small integers, with its properties and
/// query clauses in one contiguous record of ``MatchmakerTables/words``.
///
/// The record starts with a copy of the entry's fields (``MatchmakerTables/headerWords``
/// words), and bucket references carry the record's offset, so that scanning a bucket reads
/// only the references and the candidates' records. Records are appended in age order and
/// compacted in age order, so a scan (oldest first) walks memory forward. Comparing two
/// tickets allocates nothing and counts no references.
struct MatchmakerEntry {
    /// Age order (1, 2, ...); 0 marks a free slot.
    var sequence: UInt64 = 0
    /// When the ticket accepts its minimum (uptime nanoseconds).
    var relaxAt: UInt64 = 0
    /// The matchmaker's change count when a complete search from this ticket last found
    /// nothing; 0 when it must be searched.
    var failedAtChange: UInt64 = 0
    /// Where the ticket's record starts in ``MatchmakerTables/words``.
    var recordStart: Int32 = 0
    var mode: UInt32 = 0
    var players: UInt8 = 0
    var minPlayers: UInt8 = 0
    var maxPlayers: UInt8 = 0
    var stringCount: UInt8 = 0
    var numberCount: UInt8 = 0
    var clauseCount: UInt8 = 0
    /// Whether the ticket was relaxed at the search recorded in `failedAtChange`.
    var failedRelaxed = false

    /// The group size this ticket needs at `now`.
    @inline(__always)
    func required(at now: UInt64) -> Int32 {
        Int32(self.relaxAt <= now ? self.minPlayers : self.maxPlayers)
    }

    /// Where its string properties start: one word each, `key << 32 | value`.
    var stringsStart: Int { Int(self.recordStart) + MatchmakerTables.headerWords }
    /// Where its number properties start: two words each, the key and the value's bits.
    var numbersStart: Int { self.stringsStart + Int(self.stringCount) }
    /// Where its query clauses start: three words each (see ``MatchmakerClauseWords``).
    var clausesStart: Int { self.numbersStart + 2 * Int(self.numberCount) }
    /// The length of its record.
    var recordLength: Int {
        MatchmakerTables.headerWords + Int(self.stringCount) + 2 * Int(self.numberCount) + 3 * Int(self.clauseCount)
    }
}

/// How a query clause is laid out in three words: `key << 32 | flags | value` (the value of
/// an equality; flag bits 31 and 30 say required and range), then a range's lower and upper
/// bounds as `Double` bits (open bounds are infinities).
enum MatchmakerClauseWords {
    static let required: UInt64 = 1 << 31
    static let range: UInt64 = 1 << 30
    static let valueMask: UInt64 = (1 << 30) - 1
    /// Interned ids must fit beside the flags.
    static let idLimit = 1 << 30

    static func encode(key: UInt32, value: UInt32, isRequired: Bool, isRange: Bool) -> UInt64 {
        UInt64(key) << 32 | (isRequired ? required : 0) | (isRange ? range : 0) | UInt64(value)
    }
}

/// A reference to a ticket that is still valid only while its slot holds the same ticket.
struct MatchmakerReference {
    var slot: Int32
    /// Where the ticket's record starts (updated when records are compacted).
    var record: Int32
    var sequence: UInt64
}

/// The entries and the records they point into.
struct MatchmakerTables {
    /// Header words of a record: sequence (0 once removed), relaxAt,
    /// `mode << 32 | players << 16 | min << 8 | max`, `strings << 16 | numbers << 8 | clauses`.
    static let headerWords = 4

    var entries: [MatchmakerEntry] = []
    /// Every ticket's record: header, string properties, number properties, query clauses.
    var words: [UInt64] = []

    /// Appends the header of `entry`'s record (its properties and clauses follow).
    mutating func appendHeader(of entry: MatchmakerEntry) {
        self.words.append(entry.sequence)
        self.words.append(entry.relaxAt)
        self.words.append(
            UInt64(entry.mode) << 32 | UInt64(entry.players) << 16 | UInt64(entry.minPlayers) << 8
                | UInt64(entry.maxPlayers))
        self.words.append(UInt64(entry.stringCount) << 16 | UInt64(entry.numberCount) << 8 | UInt64(entry.clauseCount))
    }

    /// The entry a reference names, read from its record alone; nil if the ticket is gone.
    /// (The search bookkeeping fields are not in the record and read as zero.)
    @inline(__always)
    func liveEntry(_ reference: MatchmakerReference) -> MatchmakerEntry? {
        let base = Int(reference.record)
        guard self.words[base] == reference.sequence else { return nil }
        var entry = MatchmakerEntry()
        entry.sequence = reference.sequence
        entry.relaxAt = self.words[base + 1]
        let sizes = self.words[base + 2]
        entry.mode = UInt32(truncatingIfNeeded: sizes >> 32)
        entry.players = UInt8(truncatingIfNeeded: sizes >> 16)
        entry.minPlayers = UInt8(truncatingIfNeeded: sizes >> 8)
        entry.maxPlayers = UInt8(truncatingIfNeeded: sizes)
        let counts = self.words[base + 3]
        entry.stringCount = UInt8(truncatingIfNeeded: counts >> 16)
        entry.numberCount = UInt8(truncatingIfNeeded: counts >> 8)
        entry.clauseCount = UInt8(truncatingIfNeeded: counts)
        entry.recordStart = reference.record
        return entry
    }

    /// Whether `reference` still names a waiting ticket.
    @inline(__always)
    func isLive(_ reference: MatchmakerReference) -> Bool {
        self.entries[Int(reference.slot)].sequence == reference.sequence
    }

    /// Whether the tickets in slots `a` and `b` accept each other (same mode is the caller's check).
    @inline(__always)
    func compatible(_ a: Int32, _ b: Int32) -> Bool {
        let first = self.entries[Int(a)]
        let second = self.entries[Int(b)]
        return self.accepts(first, second) && self.accepts(second, first)
    }

    /// Whether `asker`'s query accepts `other`'s properties.
    @inline(__always)
    func accepts(_ asker: MatchmakerEntry, _ other: MatchmakerEntry) -> Bool {
        var index = asker.clausesStart
        let end = index + 3 * Int(asker.clauseCount)
        while index < end {
            let header = self.words[index]
            let key = header >> 32
            let holds: Bool
            if header & MatchmakerClauseWords.range != 0 {
                holds = self.numberInRange(
                    other, key: key, lower: Double(bitPattern: self.words[index + 1]),
                    upper: Double(bitPattern: self.words[index + 2]))
            } else {
                holds = self.hasString(other, wanted: key << 32 | header & MatchmakerClauseWords.valueMask)
            }
            if holds != (header & MatchmakerClauseWords.required != 0) { return false }
            index += 3
        }
        return true
    }

    @inline(__always)
    private func numberInRange(_ entry: MatchmakerEntry, key: UInt64, lower: Double, upper: Double) -> Bool {
        var index = entry.numbersStart
        let end = index + 2 * Int(entry.numberCount)
        while index < end {
            if self.words[index] == key {
                let value = Double(bitPattern: self.words[index + 1])
                return value >= lower && value <= upper
            }
            index += 2
        }
        return false
    }

    @inline(__always)
    private func hasString(_ entry: MatchmakerEntry, wanted: UInt64) -> Bool {
        var index = entry.stringsStart
        let end = index + Int(entry.stringCount)
        while index < end {
            let property = self.words[index]
            if property >> 32 == wanted >> 32 { return property == wanted }
            index += 1
        }
        return false
    }
}
