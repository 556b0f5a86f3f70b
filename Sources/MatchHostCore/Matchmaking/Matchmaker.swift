import NIOCore

/// Puts waiting tickets together into groups of compatible players, oldest first.
///
/// A ticket (one player, or a party kept together) names a mode, the fewest and most players
/// it accepts, its properties, and a query over other tickets' properties. Each pass
/// (``process()``, or every ``MatchmakerConfiguration/interval`` after ``start(onGroups:)``)
/// takes the waiting tickets oldest first and forms groups in which every two tickets accept
/// each other, the players are at most every ticket's maximum, and at least every ticket's
/// required size: its maximum until it has waited ``MatchmakerConfiguration/relaxAfter``,
/// then its minimum (as Nakama does: wait for a full match, then settle). A group has at
/// least two tickets. Parties are never split.
///
/// The search for a ticket's group is complete within ``MatchmakerConfiguration/searchBudget``,
/// so after a pass no group could be formed from the tickets still waiting: nobody waits while
/// a compatible group exists. A ticket whose search failed is not searched again until a
/// possible partner arrives or relaxes, or it relaxes itself.
///
/// Pure and confined like ``Match``: every call on one event loop (or a ``ManualClock``'s
/// thread), no sockets. The server cancels a player's tickets with ``cancelAll(for:)`` when
/// the player's session ends (a disconnect past the grace period).
public final class Matchmaker {
    /// Limits and timings.
    public let configuration: MatchmakerConfiguration
    /// Time for ticket ages and the pass timer.
    public let clock: any MatchClock
    /// What the last pass did.
    public private(set) var lastPass = MatchmakerPassReport()

    private var pool = MatchmakerPool()
    private var search = MatchmakerGroupSearch()
    /// The public form of each waiting ticket, by slot.
    private var tickets: [MatchmakerTicket?] = []
    /// What each waiting ticket's last search learnt of its partners, by slot.
    private var partners: [MatchmakerPartners?] = []
    private var slotsByID: [String: Int32] = [:]
    private var slotsByPlayer: [PlayerID: MatchmakerPlayerSlots] = [:]
    /// Older tickets whose search ran out of budget in the current pass: the only older
    /// tickets that may still be in a group (every other one was shown to be in none).
    private var exhaustedThisPass: [MatchmakerReference] = []
    private var random = SystemRandomNumberGenerator()
    private var timer: MatchTimer?
    private var timerGeneration = 0
    /// The pass under way, between two slices.
    private var pass: MatchmakerPassProgress?

    /// Creates an empty matchmaker.
    public init(configuration: MatchmakerConfiguration = MatchmakerConfiguration(), clock: any MatchClock) {
        self.configuration = configuration
        self.clock = clock
    }

    /// How many tickets are waiting.
    public var count: Int { self.pool.count }

    /// The waiting ticket `id`, if it is still waiting.
    public func ticket(_ id: String) -> MatchmakerTicket? {
        self.slotsByID[id].flatMap { self.tickets[Int($0)] }
    }

    /// The waiting tickets that include `player`.
    public func tickets(of player: PlayerID) -> [MatchmakerTicket] {
        (self.slotsByPlayer[player]?.all ?? []).compactMap { self.tickets[Int($0)] }
    }

    /// Whether `player` is in any waiting ticket.
    public func hasTickets(of player: PlayerID) -> Bool {
        self.slotsByPlayer[player] != nil
    }

    /// Every waiting ticket, oldest first: a copy, for inspection and tests.
    public var waitingTickets: [MatchmakerTicket] {
        self.pool.ageOrder.compactMap { self.pool.tables.isLive($0) ? self.tickets[Int($0.slot)] : nil }
    }

    /// When the oldest waiting ticket was added.
    public var oldestEnqueuedAt: NIODeadline? {
        self.pool.oldestSlot.flatMap { self.tickets[Int($0)]?.enqueuedAt }
    }

    // MARK: - Adding and cancelling

    /// Adds a ticket that waits from now.
    /// - Parameters:
    ///   - players: one player, or a party (all placed in the same group); fewer than `maxPlayers`.
    ///   - mode: the game; only tickets of the same mode are grouped.
    ///   - minPlayers: the smallest match accepted after relaxation, 2...16.
    ///   - maxPlayers: the largest match accepted (and the one waited for until relaxation), minPlayers...16.
    ///   - stringProperties: what other tickets' equality clauses test.
    ///   - numberProperties: what other tickets' range clauses test.
    ///   - query: what this ticket asks of every other ticket in its group.
    /// - Returns: the ticket with its id.
    @discardableResult
    public func add(
        players: [PlayerID], mode: String, minPlayers: Int, maxPlayers: Int,
        stringProperties: [String: String] = [:], numberProperties: [String: Double] = [:],
        query: MatchmakerQuery = .any
    ) throws(MatchmakerError) -> MatchmakerTicket {
        try self.validate(
            players: players, mode: mode, minPlayers: minPlayers, maxPlayers: maxPlayers,
            stringProperties: stringProperties, numberProperties: numberProperties, query: query)
        var id = self.makeID()
        while self.slotsByID[id] != nil { id = self.makeID() }
        let now = self.clock.now
        let ticket = MatchmakerTicket(
            id: id, players: players, mode: mode, minPlayers: minPlayers, maxPlayers: maxPlayers,
            stringProperties: stringProperties, numberProperties: numberProperties, query: query, enqueuedAt: now)
        let slot = self.pool.insert(ticket, relaxAt: (now + self.configuration.relaxAfter).uptimeNanoseconds)
        if Int(slot) == self.tickets.count {
            self.tickets.append(ticket)
            self.partners.append(nil)
        } else {
            self.tickets[Int(slot)] = ticket
            self.partners[Int(slot)] = nil
        }
        self.slotsByID[id] = slot
        for player in players { self.slotsByPlayer[player, default: MatchmakerPlayerSlots()].append(slot) }
        return ticket
    }

    /// 16 random hexadecimal digits (one system random draw: one system call, not eight).
    private func makeID() -> String {
        let text = String(self.random.next(), radix: 16)
        return text.count == 16 ? text : String(repeating: "0", count: 16 - text.count) + text
    }

    private func validate(
        players: [PlayerID], mode: String, minPlayers: Int, maxPlayers: Int, stringProperties: [String: String],
        numberProperties: [String: Double], query: MatchmakerQuery
    ) throws(MatchmakerError) {
        guard !players.isEmpty else { throw .noPlayers }
        guard !mode.isEmpty else { throw .emptyMode }
        guard (2...16).contains(minPlayers), (2...16).contains(maxPlayers), minPlayers <= maxPlayers else {
            throw .invalidPlayerCounts(min: minPlayers, max: maxPlayers)
        }
        guard players.count < maxPlayers else { throw .partyTooLarge(players: players.count, maxPlayers: maxPlayers) }
        var seen = Set<PlayerID>()
        for player in players where !seen.insert(player).inserted { throw .duplicatePlayer(player) }
        guard stringProperties.count + numberProperties.count <= self.configuration.maxProperties else {
            throw .invalidProperties("more than \(self.configuration.maxProperties) properties")
        }
        guard query.clauses.count <= self.configuration.maxQueryClauses else {
            throw .invalidProperties("more than \(self.configuration.maxQueryClauses) query clauses")
        }
        if let key = numberProperties.first(where: { $0.value.isNaN })?.key {
            throw .invalidProperties("number property \(key) is NaN")
        }
        for clause in query.clauses {
            guard case .range(let key, let min, let max) = clause.predicate else { continue }
            guard min?.isNaN != true, max?.isNaN != true, (min ?? -.infinity) <= (max ?? .infinity) else {
                throw .invalidProperties("range on \(key) is empty or NaN")
            }
        }
        for player in players {
            guard let existing = self.slotsByPlayer[player]?.all else { continue }
            if existing.contains(where: { self.tickets[Int($0)]?.mode == mode }) {
                throw .alreadyQueued(player: player, mode: mode)
            }
            guard existing.count < self.configuration.maxTicketsPerPlayer else {
                throw .tooManyTickets(player: player, limit: self.configuration.maxTicketsPerPlayer)
            }
        }
        guard self.pool.count < self.configuration.capacity else { throw .full(capacity: self.configuration.capacity) }
    }

    /// Withdraws ticket `id`. Returns false if it is not waiting (matched, cancelled, unknown).
    /// The server checks that whoever asks is one of the ticket's players.
    @discardableResult
    public func cancel(_ id: String) -> Bool {
        guard let slot = self.slotsByID[id] else { return false }
        self.remove(slot: slot)
        self.compactUnlessPassing()
        return true
    }

    /// Withdraws every ticket that includes `player` (parties too: a party without one of its
    /// players cannot be matched as it stood). For a player whose session has ended.
    /// - Returns: the ids of the withdrawn tickets.
    @discardableResult
    public func cancelAll(for player: PlayerID) -> [String] {
        let ids = self.removeAll(for: player)
        self.compactUnlessPassing()
        return ids
    }

    /// Compaction moves the age order a pass walks by position: it waits for the pass's end.
    private func compactUnlessPassing() {
        if self.pass == nil { self.pool.compactIfNeeded() }
    }

    private func removeAll(for player: PlayerID) -> [String] {
        guard let slots = self.slotsByPlayer[player]?.all else { return [] }
        var ids: [String] = []
        for slot in slots {
            let (ticket, _) = self.remove(slot: slot)
            ids.append(ticket.id)
        }
        return ids
    }

    /// Takes the ticket in `slot` out of every table.
    /// - Returns: the ticket, and whether any of its players is still in another ticket.
    @discardableResult
    private func remove(slot: Int32) -> (MatchmakerTicket, playersHaveOtherTickets: Bool) {
        let ticket = self.tickets[Int(slot)].take()!
        self.partners[Int(slot)] = nil
        self.slotsByID[ticket.id] = nil
        var others = false
        for player in ticket.players {
            guard let index = self.slotsByPlayer.index(forKey: player) else { continue }
            if self.slotsByPlayer.values[index].remove(slot) {
                self.slotsByPlayer.remove(at: index)
            } else {
                others = true
            }
        }
        self.pool.remove(slot: slot)
        return (ticket, others)
    }

    // MARK: - Passes

    /// Runs passes every ``MatchmakerConfiguration/interval`` from now, at fixed deadlines,
    /// and hands each pass's groups (when there are any) to `onGroups`. The server creates a
    /// match for each group and tells its players.
    public func start(onGroups: @escaping ([MatchmakerGroup]) -> Void) {
        self.stop()
        self.schedulePass(at: self.clock.now + self.configuration.interval, generation: self.timerGeneration, onGroups)
    }

    /// Stops the passes started by ``start(onGroups:)``.
    public func stop() {
        // A pass cut short stays under way: the next slice or whole pass finishes it.
        self.timer?.cancel()
        self.timer = nil
        self.timerGeneration += 1
    }

    private func schedulePass(
        at deadline: NIODeadline, generation: Int, _ onGroups: @escaping ([MatchmakerGroup]) -> Void
    ) {
        // A cancelled timer may still run once if the loop had already dequeued it.
        self.timer = self.clock.schedule(at: deadline) { [weak self] in
            guard let self, self.timerGeneration == generation else { return }
            self.runSlice(passDeadline: deadline, generation: generation, onGroups)
        }
    }

    /// Runs one slice of the pass due at `passDeadline`; then the next slice on the loop's
    /// next turn, or, once the pass is done, the next pass.
    private func runSlice(
        passDeadline: NIODeadline, generation: Int, _ onGroups: @escaping ([MatchmakerGroup]) -> Void
    ) {
        let (groups, finished) = self.processSlice()
        if finished {
            // Skip passes already overdue rather than running a burst of them.
            var next = passDeadline + self.configuration.interval
            let now = self.clock.now
            while next <= now { next = next + self.configuration.interval }
            self.schedulePass(at: next, generation: generation, onGroups)
        } else {
            // Due now, so it runs after the loop has read its sockets and run what was due
            // before it: the other matches on the loop wait one slice at most.
            self.timer = self.clock.schedule(at: self.clock.now) { [weak self] in
                guard let self, self.timerGeneration == generation else { return }
                self.runSlice(passDeadline: passDeadline, generation: generation, onGroups)
            }
        }
        if !groups.isEmpty { onGroups(groups) }
    }

    /// One whole pass: forms every group it can, oldest tickets first, and removes their
    /// tickets (and their players' other tickets). If a sliced pass (``processSlice()``) is
    /// under way, finishes that one instead. For tests (after advancing a ``ManualClock``) and
    /// the benchmark; ``start(onGroups:)`` runs passes in slices.
    public func process() -> [MatchmakerGroup] {
        var groups: [MatchmakerGroup] = []
        while true {
            let (formed, finished) = self.processSlice(budget: nil)
            groups += formed
            if finished { return groups }
        }
    }

    /// Runs the current pass (starting one if none is under way) for at most
    /// ``MatchmakerConfiguration/sliceDuration`` of real time, then stops after the search in
    /// hand. Returns the groups formed in this slice, and whether the pass is finished.
    ///
    /// A pass covers the tickets waiting when it began, searched with the time it began as
    /// now (for relaxation): tickets added meanwhile wait for the next pass, as partners too
    /// (so a sliced pass places tickets as a whole pass begun at the same time would, and an
    /// older ticket is never passed over for a newcomer). Tickets cancelled meanwhile are
    /// skipped.
    public func processSlice() -> (groups: [MatchmakerGroup], finished: Bool) {
        self.processSlice(budget: self.configuration.sliceDuration)
    }

    private func processSlice(budget: TimeAmount?) -> (groups: [MatchmakerGroup], finished: Bool) {
        if self.pass == nil {
            let now = self.clock.now.uptimeNanoseconds
            self.pool.announceRelaxations(now: now)
            self.exhaustedThisPass.removeAll(keepingCapacity: true)
            self.pass = MatchmakerPassProgress(
                now: now, position: 0, end: self.pool.ageOrder.count, through: self.pool.lastSequence,
                changeAtStart: self.pool.changeCount)
        }
        // Real time, whatever the matchmaker's clock: the budget is the loop's, not the game's.
        let sliceEnd = budget.map { NIODeadline.now() + $0 }
        var progress = self.pass!
        var groups: [MatchmakerGroup] = []
        let now = progress.now
        // Tickets are only removed during the pass, and removal leaves the age order in place
        // (compaction waits for the pass to end).
        while progress.position < progress.end {
            let reference = self.pool.ageOrder[progress.position]
            progress.position += 1
            let entry = self.pool.tables.entries[Int(reference.slot)]
            guard entry.sequence == reference.sequence else { continue }
            let relaxed = entry.relaxAt <= now
            guard let bucket = self.pool.searchBucket(for: entry) else {
                progress.report.skipped += 1
                continue
            }
            if entry.failedAtChange != 0, entry.failedRelaxed == relaxed, bucket.lastChange <= entry.failedAtChange {
                progress.report.skipped += 1
                continue
            }
            progress.report.searches += 1
            let outcome = self.search.run(
                seed: reference.slot, tables: self.pool.tables, bucket: bucket, older: self.exhaustedThisPass,
                known: self.partners[Int(reference.slot)], budget: self.configuration.searchBudget, now: now,
                through: progress.through)
            switch outcome {
            case .found:
                let group = self.formGroup(self.search.group)
                progress.report.groups += 1
                progress.report.ticketsMatched += group.tickets.count
                progress.report.playersMatched += group.playerCount
                groups.append(group)
            case .nothing:
                // The pass's change count, not the current one: arrivals since the pass began
                // were not looked at, and must bring the ticket a search in the next pass.
                self.pool.tables.entries[Int(reference.slot)].failedAtChange = progress.changeAtStart
                self.pool.tables.entries[Int(reference.slot)].failedRelaxed = relaxed
                self.rememberPartners(of: reference.slot, through: progress.through)
            case .exhausted:
                progress.report.exhaustedSearches += 1
                self.pool.tables.entries[Int(reference.slot)].failedAtChange = 0
                self.exhaustedThisPass.append(reference)
                self.rememberPartners(of: reference.slot, through: progress.through)
            }
            // Tickets this search took need no slice of their own.
            while progress.position < progress.end, !self.pool.tables.isLive(self.pool.ageOrder[progress.position]) {
                progress.position += 1
            }
            if let sliceEnd, progress.position < progress.end, NIODeadline.now() >= sliceEnd {
                progress.report.slices += 1
                self.pass = progress
                return (groups, false)
            }
        }
        self.pass = nil
        self.pool.compactIfNeeded()
        progress.report.slices += 1
        progress.report.waiting = self.pool.count
        self.lastPass = progress.report
        return (groups, true)
    }

    /// Keeps the partners the search of the ticket in `slot` found (it scanned to the end), so
    /// that its next search reads them and the tickets that arrive later, not its whole bucket.
    private func rememberPartners(of slot: Int32, through: UInt64) {
        self.partners[Int(slot)] =
            self.search.partnersOverflowed
            ? nil : MatchmakerPartners(through: through, references: self.search.partners)
    }

    /// Takes a group's tickets (and their players' other tickets) out of the pool.
    private func formGroup(_ slots: [Int32]) -> MatchmakerGroup {
        let ordered = slots.sorted { self.pool.tables.entries[Int($0)].sequence < self.pool.tables.entries[Int($1)].sequence }
        var members: [MatchmakerTicket] = []
        members.reserveCapacity(ordered.count)
        var withdrawing = false
        for slot in ordered {
            let (ticket, others) = self.remove(slot: slot)
            members.append(ticket)
            withdrawing = withdrawing || others
        }
        var withdrawn: [String] = []
        if withdrawing {
            for ticket in members {
                for player in ticket.players { withdrawn += self.removeAll(for: player) }
            }
        }
        return MatchmakerGroup(mode: members[0].mode, tickets: members, withdrawnTicketIDs: withdrawn)
    }
}

/// Where a sliced pass stands between two slices.
struct MatchmakerPassProgress {
    /// The pass's now (uptime nanoseconds), for relaxation.
    var now: UInt64
    /// The next index of the age order to search from.
    var position: Int
    /// The age order's length when the pass began: later tickets wait for the next pass.
    var end: Int
    /// The youngest ticket's sequence when the pass began: no search looks past it.
    var through: UInt64
    /// The pool's change count when the pass began (after announcing relaxations).
    var changeAtStart: UInt64
    var report = MatchmakerPassReport()
}
