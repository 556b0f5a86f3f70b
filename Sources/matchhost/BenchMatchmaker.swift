import ArgumentParser
import Foundation
import MatchHostCore
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `matchhost bench matchmaker`: the matchmaker in process, no network. Keeps a pool of
/// waiting tickets with mixed properties topped up, runs passes on a manual clock, and
/// reports tickets matched per second of processing, pass times, and how long tickets wait.
struct BenchMatchmakerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matchmaker",
        abstract: "Measure the matchmaker in process: tickets matched per second of processing, pass times, waiting ages.")

    @Option(help: "Tickets waiting: the pool is topped up to this many after every pass.")
    var tickets = 10_000

    @Option(help: "Matchmaker time measured, in seconds, after the warmup (the manual clock moves --interval per pass).")
    var seconds: Double = 60

    @Option(help: "Matchmaker time before the measured window, in seconds.")
    var warmup: Double = 30

    @Option(name: .customLong("relax-after"), help: "Seconds a ticket waits for its maximum before it accepts its minimum.")
    var relaxAfter: Double = 10

    @Option(help: "Seconds between passes.")
    var interval: Double = 1

    @Option(
        name: .customLong("give-up"),
        help: "Seconds after which a waiting player gives up (its ticket is cancelled), so that tickets nobody can match do not pile up.")
    var giveUp: Double = 60

    @Option(name: .customLong("skill-sigma"), help: "Standard deviation of the players' skill (mean 1500).")
    var skillSigma: Double = 300

    @Option(name: .customLong("skill-window"), help: "Each ticket requires partners within this much of its own skill.")
    var skillWindow: Double = 200

    @Option(
        help: "Run each pass in slices of at most this many milliseconds, as the server does (--matchmaker-slice), and report the slices' times; without it each pass runs whole.")
    var slice: Double?

    @Option(help: "Seed of the ticket mix.")
    var seed: UInt64 = 1

    @Flag(name: .customLong("no-check"), help: "Skip checking old waiting tickets for a compatible group (saves time).")
    var noCheck = false

    @Flag(help: "Also print one JSON line with all numbers.")
    var json = false

    func validate() throws {
        guard (1...100_000).contains(self.tickets) else { throw ValidationError("--tickets must be 1-100000") }
        guard self.seconds > 0, self.seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard self.relaxAfter >= 0, self.relaxAfter.isFinite else { throw ValidationError("--relax-after must not be negative") }
        guard self.interval > 0, self.interval.isFinite else { throw ValidationError("--interval must be positive") }
        guard self.giveUp > 0, self.giveUp.isFinite else { throw ValidationError("--give-up must be positive") }
        guard self.skillSigma >= 0, self.skillSigma.isFinite else { throw ValidationError("--skill-sigma must not be negative") }
        guard self.skillWindow >= 0, self.skillWindow.isFinite else { throw ValidationError("--skill-window must not be negative") }
        if let slice = self.slice, !(0...1000).contains(slice) { throw ValidationError("--slice must be 0-1000 milliseconds") }
    }

    func run() throws {
        benchPrint(
            "matchmaker: tickets=\(self.tickets) warmup=\(benchFormatCompact(self.warmup))s "
                + "seconds=\(benchFormatCompact(self.seconds))s interval=\(benchFormatCompact(self.interval))s "
                + "relax-after=\(benchFormatCompact(self.relaxAfter))s give-up=\(benchFormatCompact(self.giveUp))s "
                + "skill-sigma=\(benchFormatCompact(self.skillSigma)) skill-window=\(benchFormatCompact(self.skillWindow)) seed=\(self.seed)"
                + (self.slice.map { " slice=\(benchFormatCompact($0))ms" } ?? ""))
        var run = MatchmakerBenchRun(command: self)
        try run.run()
        run.report.print(command: self)
    }
}

private func nanoseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }

/// CPU time of the calling thread in nanoseconds: what a pass cost even when other
/// processes share the cores (wall time then includes waiting for a core).
private func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// What one run measured, over the passes of the measured window.
private struct MatchmakerBenchReport {
    var passes = 0
    var passTimes = BenchLatencyHistogram()
    /// With --slice: each slice's wall time (how long the pass held its thread at once), and
    /// the slices per pass.
    var sliceTimes = BenchLatencyHistogram()
    var slicesPerPass = BenchLatencyHistogram()
    var processingNanoseconds: UInt64 = 0
    var processingCPUNanoseconds: UInt64 = 0
    var ticketsMatched = 0
    var playersMatched = 0
    var groups = 0
    var searches = 0
    var skipped = 0
    var exhausted = 0
    var adds = 0
    var addNanoseconds: UInt64 = 0
    var addCPUNanoseconds: UInt64 = 0
    /// The oldest waiting ticket's age after each pass, in nanoseconds.
    var oldestAges = BenchLatencyHistogram()
    /// Tickets older than relax-after + interval after a pass: summed over passes, and the most in one pass.
    var overdue = 0
    var overdueMost = 0
    /// Overdue tickets for which the check found a valid group among the waiting tickets.
    var overdueWithGroup = 0
    var checked = false
    var gaveUp = 0

    var ticketsPerProcessingSecond: Double {
        Double(self.ticketsMatched) / (Double(self.processingNanoseconds) / 1e9)
    }

    var ticketsPerProcessingCPUSecond: Double {
        Double(self.ticketsMatched) / (Double(self.processingCPUNanoseconds) / 1e9)
    }

    func print(command: BenchMatchmakerCommand) {
        let processingSeconds = Double(self.processingNanoseconds) / 1e9
        let passes = Double(max(1, self.passes))
        benchPrint(
            "matched: \(self.ticketsMatched) tickets (\(self.playersMatched) players, \(self.groups) groups) in "
                + "\(benchFormat(processingSeconds, 3)) s of processing (\(benchFormat(Double(self.processingCPUNanoseconds) / 1e9, 3)) s CPU) "
                + "over \(self.passes) passes => \(benchFormat(self.ticketsPerProcessingSecond, 0)) tickets matched per second of "
                + "processing (\(benchFormat(self.ticketsPerProcessingCPUSecond, 0)) per CPU second)")
        benchPrint(
            "pass ms: \(self.passTimes.summary); per pass: \(benchFormat(Double(self.searches) / passes, 0)) searched, "
                + "\(benchFormat(Double(self.skipped) / passes, 0)) skipped (nothing new for them), "
                + "\(self.exhausted) searches out of budget in all")
        if command.slice != nil {
            benchPrint(
                "slices ms: \(self.sliceTimes.summary); slices per pass: p50=\(self.slicesPerPass.quantile(0.5) ?? 0) "
                    + "max=\(self.slicesPerPass.maxValue)")
        }
        benchPrint(
            "adds: \(self.adds) tickets in \(benchFormat(Double(self.addNanoseconds) / 1e9, 3)) s => "
                + "\(benchFormat(Double(self.addNanoseconds) / 1e3 / Double(max(1, self.adds)), 2)) µs per ticket "
                + "(\(benchFormat(Double(self.addCPUNanoseconds) / 1e3 / Double(max(1, self.adds)), 2)) µs CPU)")
        let window = command.relaxAfter + command.interval
        let check =
            self.checked
            ? "\(self.overdueWithGroup) of them had a compatible group (greedy check against every waiting ticket)"
            : "not checked for compatible groups (--no-check)"
        benchPrint(
            "waiting: oldest ticket after a pass p50=\(benchFormat(Double(self.oldestAges.quantile(0.5) ?? 0) / 1e9, 1))s "
                + "max=\(benchFormat(Double(self.oldestAges.maxValue) / 1e9, 1))s; older than relax-after + interval "
                + "(\(benchFormatCompact(window)) s): \(benchFormat(Double(self.overdue) / passes, 1)) per pass on average, "
                + "at most \(self.overdueMost); \(check)")
        benchPrint("gave up: \(self.gaveUp) tickets cancelled after waiting \(benchFormatCompact(command.giveUp)) s")
        if self.ticketsPerProcessingSecond < 5000 { benchPrint("warning: fewer than 5000 tickets matched per second of processing") }
        if self.overdueWithGroup > 0 { benchPrint("warning: \(self.overdueWithGroup) overdue tickets had a compatible group (must be 0)") }

        guard command.json else { return }
        var out = BenchJSON()
        out.add("bench", "matchmaker")
        out.add("tickets", command.tickets)
        out.add("seconds", command.seconds)
        out.add("warmup", command.warmup)
        out.add("interval", command.interval)
        out.add("relax_after", command.relaxAfter)
        out.add("give_up", command.giveUp)
        out.add("seed", UInt64(command.seed))
        out.add("passes", self.passes)
        out.add("tickets_matched", self.ticketsMatched)
        out.add("players_matched", self.playersMatched)
        out.add("groups", self.groups)
        out.add("processing_s", processingSeconds)
        out.add("processing_cpu_s", Double(self.processingCPUNanoseconds) / 1e9)
        out.add("tickets_per_processing_s", self.ticketsPerProcessingSecond)
        out.add("tickets_per_processing_cpu_s", self.ticketsPerProcessingCPUSecond)
        out.add("pass_ms", object: self.passTimes.json)
        if let slice = command.slice {
            out.add("slice_ms", slice)
            out.add("slice_time_ms", object: self.sliceTimes.json)
            out.add("slices_per_pass_max", Int(self.slicesPerPass.maxValue))
        }
        out.add("searches", self.searches)
        out.add("skipped", self.skipped)
        out.add("exhausted", self.exhausted)
        out.add("add_us", Double(self.addNanoseconds) / 1e3 / Double(max(1, self.adds)))
        out.add("add_cpu_us", Double(self.addCPUNanoseconds) / 1e3 / Double(max(1, self.adds)))
        out.add("oldest_age_s_p50", Double(self.oldestAges.quantile(0.5) ?? 0) / 1e9)
        out.add("oldest_age_s_max", Double(self.oldestAges.maxValue) / 1e9)
        out.add("overdue_per_pass", Double(self.overdue) / passes)
        out.add("overdue_most", self.overdueMost)
        out.add("overdue_with_group", self.checked ? Double(self.overdueWithGroup) : nil)
        out.add("gave_up", self.gaveUp)
        benchPrint(out.line)
    }
}

/// One run: the matchmaker, its clock, the ticket mix and the measurements.
private struct MatchmakerBenchRun {
    let command: BenchMatchmakerCommand
    let clock = ManualClock()
    let matchmaker: Matchmaker
    var mix: MatchmakerBenchTicketMix
    var report = MatchmakerBenchReport()
    /// Tickets in the order they were added, for giving up; matched ones are skipped.
    private var arrivals: [(id: String, enqueuedAt: NIODeadline)] = []
    private var arrivalsHead = 0

    init(command: BenchMatchmakerCommand) {
        self.command = command
        self.matchmaker = Matchmaker(
            configuration: MatchmakerConfiguration(
                interval: .nanoseconds(nanoseconds(command.interval)), relaxAfter: .nanoseconds(nanoseconds(command.relaxAfter)),
                capacity: max(100_000, command.tickets),
                sliceDuration: .nanoseconds(nanoseconds((command.slice ?? 0) / 1000))),
            clock: self.clock)
        self.mix = MatchmakerBenchTicketMix(seed: command.seed, skillSigma: command.skillSigma, skillWindow: command.skillWindow)
        self.report.checked = !command.noCheck
    }

    mutating func run() throws {
        let warmupPasses = Int((self.command.warmup / self.command.interval).rounded())
        let measuredPasses = max(1, Int((self.command.seconds / self.command.interval).rounded()))
        let interval = TimeAmount.nanoseconds(nanoseconds(self.command.interval))
        let window = TimeAmount.nanoseconds(nanoseconds(self.command.relaxAfter + self.command.interval))
        let giveUp = TimeAmount.nanoseconds(nanoseconds(self.command.giveUp))
        try self.topUp(measured: false)
        for pass in 0..<(warmupPasses + measuredPasses) {
            let measured = pass >= warmupPasses
            self.clock.advance(by: interval)
            self.cancelGivenUp(olderThan: giveUp, measured: measured)

            let start = benchNow()
            let startCPU = threadCPUNanoseconds()
            var groups: [MatchmakerGroup] = []
            if self.command.slice == nil {
                groups = self.matchmaker.process()
            } else {
                var slices: UInt64 = 0
                while true {
                    let sliceStart = benchNow()
                    let (formed, finished) = self.matchmaker.processSlice()
                    if measured { self.report.sliceTimes.record(benchNow() - sliceStart) }
                    slices += 1
                    groups += formed
                    if finished { break }
                }
                if measured { self.report.slicesPerPass.record(slices) }
            }
            let elapsedCPU = threadCPUNanoseconds() - startCPU
            let elapsed = benchNow() - start

            if measured {
                let last = self.matchmaker.lastPass
                self.report.passes += 1
                self.report.passTimes.record(elapsed)
                self.report.processingNanoseconds += elapsed
                self.report.processingCPUNanoseconds += elapsedCPU
                self.report.groups += groups.count
                self.report.ticketsMatched += last.ticketsMatched
                self.report.playersMatched += last.playersMatched
                self.report.searches += last.searches
                self.report.skipped += last.skipped
                self.report.exhausted += last.exhaustedSearches
                self.inspectWaiting(window: window)
            }
            try self.topUp(measured: measured)
        }
    }

    /// Adds tickets until `--tickets` wait.
    private mutating func topUp(measured: Bool) throws {
        let missing = self.command.tickets - self.matchmaker.count
        guard missing > 0 else { return }
        var requests: [MatchmakerBenchTicketMix.Request] = []
        requests.reserveCapacity(missing)
        for _ in 0..<missing { requests.append(self.mix.next()) }
        let start = benchNow()
        let startCPU = threadCPUNanoseconds()
        for request in requests {
            let ticket = try self.matchmaker.add(
                players: request.players, mode: request.mode, minPlayers: request.minPlayers, maxPlayers: request.maxPlayers,
                stringProperties: request.strings, numberProperties: request.numbers, query: request.query)
            self.arrivals.append((ticket.id, ticket.enqueuedAt))
        }
        if measured {
            self.report.addCPUNanoseconds += threadCPUNanoseconds() - startCPU
            self.report.addNanoseconds += benchNow() - start
            self.report.adds += missing
        }
    }

    private mutating func cancelGivenUp(olderThan giveUp: TimeAmount, measured: Bool) {
        let now = self.clock.now
        while self.arrivalsHead < self.arrivals.count, self.arrivals[self.arrivalsHead].enqueuedAt + giveUp < now {
            if self.matchmaker.cancel(self.arrivals[self.arrivalsHead].id), measured { self.report.gaveUp += 1 }
            self.arrivalsHead += 1
        }
        if self.arrivalsHead > 65_536 {
            self.arrivals.removeFirst(self.arrivalsHead)
            self.arrivalsHead = 0
        }
    }

    /// The oldest age, the tickets past relax-after + interval, and whether any of those
    /// could be in a valid group with the tickets still waiting.
    private mutating func inspectWaiting(window: TimeAmount) {
        let now = self.clock.now
        if let oldest = self.matchmaker.oldestEnqueuedAt {
            self.report.oldestAges.record(UInt64((now - oldest).nanoseconds))
        }
        let waiting = self.matchmaker.waitingTickets
        let overdue = waiting.prefix { now - $0.enqueuedAt > window }
        self.report.overdue += overdue.count
        self.report.overdueMost = max(self.report.overdueMost, overdue.count)
        guard self.report.checked, !overdue.isEmpty else { return }
        // Every ticket of the mix requires its own region, so partners share mode and region.
        var byPlace: [String: [MatchmakerTicket]] = [:]
        for ticket in waiting { byPlace[Self.place(of: ticket), default: []].append(ticket) }
        let relaxAfter = TimeAmount.nanoseconds(nanoseconds(self.command.relaxAfter))
        for ticket in overdue
        where Self.greedyGroupExists(with: ticket, among: byPlace[Self.place(of: ticket)] ?? [], now: now, relaxAfter: relaxAfter) {
            self.report.overdueWithGroup += 1
        }
    }

    private static func place(of ticket: MatchmakerTicket) -> String {
        ticket.mode + "/" + (ticket.stringProperties["region"] ?? "")
    }

    /// An independent check from the public ticket fields: partners oldest first, each taken
    /// if it accepts and is accepted by the group so far and does not raise the size the group
    /// needs (unless the group is then complete). True when that reaches a valid group.
    private static func greedyGroupExists(
        with ticket: MatchmakerTicket, among candidates: [MatchmakerTicket], now: NIODeadline, relaxAfter: TimeAmount
    ) -> Bool {
        var group = [ticket]
        var players = ticket.players.count
        var cap = ticket.maxPlayers
        var need = ticket.requiredPlayers(at: now, relaxAfter: relaxAfter)
        for candidate in candidates where candidate.id != ticket.id {
            let nextCap = min(cap, candidate.maxPlayers)
            let nextPlayers = players + candidate.players.count
            let nextNeed = max(need, candidate.requiredPlayers(at: now, relaxAfter: relaxAfter))
            guard nextPlayers <= nextCap, nextNeed <= nextCap, nextNeed == need || nextPlayers >= nextNeed,
                group.allSatisfy({ $0.isCompatible(with: candidate) })
            else { continue }
            group.append(candidate)
            (players, cap, need) = (nextPlayers, nextCap, nextNeed)
            if players >= need { return true }
        }
        return false
    }
}

/// The mix of tickets: two modes (one in five a duel), five regions (every ticket requires
/// its own), skill around 1500 (σ 300 by default) with a query for ±200 of one's own, a
/// platform (one ticket in five excludes mobile), parties of 1-3 (70/20/10 %), and sizes in
/// 2...8.
private struct MatchmakerBenchTicketMix {
    struct Request {
        var players: [PlayerID]
        var mode: String
        var minPlayers: Int
        var maxPlayers: Int
        var strings: [String: String]
        var numbers: [String: Double]
        var query: MatchmakerQuery
    }

    private static let regions = ["eu", "us-east", "us-west", "asia", "sa"]
    private var random: MatchmakerBenchRandom
    private var nextPlayer = 0
    private let skillSigma: Double
    private let skillWindow: Double

    init(seed: UInt64, skillSigma: Double, skillWindow: Double) {
        self.random = MatchmakerBenchRandom(seed: seed)
        self.skillSigma = skillSigma
        self.skillWindow = skillWindow
    }

    mutating func next() -> Request {
        let duel = Int.random(in: 0..<5, using: &self.random) == 0
        let maxPlayers = duel ? 2 : Int.random(in: 2...8, using: &self.random)
        let minPlayers = duel ? 2 : Int.random(in: 2...maxPlayers, using: &self.random)
        let roll = Int.random(in: 0..<10, using: &self.random)
        let partySize = min(maxPlayers - 1, roll < 7 ? 1 : roll < 9 ? 2 : 3)
        var players: [PlayerID] = []
        for _ in 0..<partySize {
            players.append("b\(self.nextPlayer)")
            self.nextPlayer += 1
        }
        let region = Self.regions.randomElement(using: &self.random)!
        let skill = (1500 + self.skillSigma * self.normal()).rounded()
        let platformRoll = Int.random(in: 0..<10, using: &self.random)
        let platform = platformRoll < 5 ? "pc" : platformRoll < 8 ? "console" : "mobile"
        var clauses: [MatchmakerClause] = [
            .require(.equals("region", region)), .require(.range("skill", min: skill - self.skillWindow, max: skill + self.skillWindow)),
        ]
        if Int.random(in: 0..<5, using: &self.random) == 0 { clauses.append(.exclude(.equals("platform", "mobile"))) }
        return Request(
            players: players, mode: duel ? "duel" : "arena", minPlayers: minPlayers, maxPlayers: maxPlayers,
            strings: ["region": region, "platform": platform], numbers: ["skill": skill], query: MatchmakerQuery(clauses))
    }

    /// A standard normal value (Box-Muller).
    private mutating func normal() -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &self.random)
        let v = Double.random(in: 0..<1, using: &self.random)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}

/// SplitMix64, so a run can be repeated exactly.
private struct MatchmakerBenchRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var value = self.state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
