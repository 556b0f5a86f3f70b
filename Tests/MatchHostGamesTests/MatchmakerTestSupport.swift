import MatchHostCore
import NIOCore

/// A matchmaker on a manual clock, with short names for the tests.
final class MatchmakerFixture {
    let clock = ManualClock()
    let matchmaker: Matchmaker

    init(relaxAfter: TimeAmount = .seconds(10), configure: (inout MatchmakerConfiguration) -> Void = { _ in }) {
        var configuration = MatchmakerConfiguration(interval: .seconds(1), relaxAfter: relaxAfter)
        configure(&configuration)
        self.matchmaker = Matchmaker(configuration: configuration, clock: self.clock)
    }

    /// Adds a ticket (a solo player unless `party` is given), failing the test on a refusal.
    @discardableResult
    func add(
        _ player: PlayerID, party: [PlayerID] = [], mode: String = "duel", min: Int = 2, max: Int = 2,
        strings: [String: String] = [:], numbers: [String: Double] = [:], query: [MatchmakerClause] = []
    ) throws -> MatchmakerTicket {
        try self.matchmaker.add(
            players: [player] + party, mode: mode, minPlayers: min, maxPlayers: max, stringProperties: strings,
            numberProperties: numbers, query: MatchmakerQuery(query))
    }

    /// Moves time on, then runs one pass.
    func pass(after time: TimeAmount = .seconds(1)) -> [MatchmakerGroup] {
        self.clock.advance(by: time)
        return self.matchmaker.process()
    }
}

extension MatchmakerFixture {
    /// A ticket with a random mix of what tickets can say: two modes, regions some require,
    /// a skill some want within a window, a platform some exclude, parties of 1-3, and
    /// minimum/maximum sizes in 2...6.
    @discardableResult
    func addRandomTicket(playerNumber: inout Int, using random: inout SeededGenerator) throws -> MatchmakerTicket {
        let maxPlayers = Int.random(in: 2...6, using: &random)
        let minPlayers = Int.random(in: 2...maxPlayers, using: &random)
        let partySize = Int.random(in: 1...min(3, maxPlayers - 1), using: &random)
        var players: [PlayerID] = []
        for _ in 0..<partySize {
            players.append("p\(playerNumber)")
            playerNumber += 1
        }
        var strings: [String: String] = [:]
        var numbers: [String: Double] = [:]
        var clauses: [MatchmakerClause] = []
        let region = ["eu", "us", "asia"].randomElement(using: &random)!
        if Int.random(in: 0..<10, using: &random) < 8 { strings["region"] = region }
        if Int.random(in: 0..<10, using: &random) < 5 { clauses.append(.require(.equals("region", region))) }
        let skill = Double(Int.random(in: 0...1000, using: &random))
        if Int.random(in: 0..<10, using: &random) < 8 { numbers["skill"] = skill }
        if Int.random(in: 0..<10, using: &random) < 4 {
            let window = Double(Int.random(in: 100...400, using: &random))
            clauses.append(.require(.range("skill", min: skill - window, max: skill + window)))
        }
        strings["platform"] = ["pc", "console", "mobile"].randomElement(using: &random)!
        strings["tag"] = "t\(playerNumber)"  // a string no other ticket has: the interner must forget it
        if Int.random(in: 0..<10, using: &random) < 2 { clauses.append(.exclude(.equals("platform", "mobile"))) }
        return try self.matchmaker.add(
            players: players, mode: Int.random(in: 0..<4, using: &random) == 0 ? "squad" : "duel",
            minPlayers: minPlayers, maxPlayers: maxPlayers, stringProperties: strings, numberProperties: numbers,
            query: MatchmakerQuery(clauses))
    }
}

extension MatchmakerGroup {
    /// The first player of each ticket, oldest ticket first: how the tests name tickets.
    var leads: [PlayerID] { self.tickets.map { $0.players[0] } }
}

/// SplitMix64: a seeded generator, so a failing property test can be replayed.
struct SeededGenerator: RandomNumberGenerator {
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

/// An independent, deliberately plain check of the matchmaker's rules (no indexes, no
/// budget), written from the public ticket fields only.
enum MatchmakerRules {
    /// Why `tickets` are not a valid group at `now`, or nil if they are.
    static func violation(of tickets: [MatchmakerTicket], now: NIODeadline, relaxAfter: TimeAmount) -> String? {
        guard tickets.count >= 2 else { return "fewer than two tickets" }
        let players = tickets.reduce(0) { $0 + $1.players.count }
        for (index, ticket) in tickets.enumerated() {
            if players > ticket.maxPlayers { return "\(players) players exceed the maximum of \(ticket.id)" }
            if players < ticket.requiredPlayers(at: now, relaxAfter: relaxAfter) {
                return "\(players) players are fewer than \(ticket.id) needs"
            }
            for other in tickets[(index + 1)...] where !ticket.isCompatible(with: other) {
                return "\(ticket.id) and \(other.id) are not compatible"
            }
        }
        return nil
    }

    /// Some valid group among `tickets` at `now`, by trying every combination (the pools of
    /// the tests are small).
    static func anyGroup(in tickets: [MatchmakerTicket], now: NIODeadline, relaxAfter: TimeAmount) -> [MatchmakerTicket]? {
        var chosen: [MatchmakerTicket] = []
        func extend(from start: Int) -> Bool {
            if chosen.count >= 2, self.violation(of: chosen, now: now, relaxAfter: relaxAfter) == nil { return true }
            let players = chosen.reduce(0) { $0 + $1.players.count }
            let cap = chosen.map(\.maxPlayers).min() ?? 16
            for index in start..<tickets.count {
                let ticket = tickets[index]
                guard players + ticket.players.count <= min(cap, ticket.maxPlayers),
                    chosen.allSatisfy({ $0.isCompatible(with: ticket) })
                else { continue }
                chosen.append(ticket)
                if extend(from: index + 1) { return true }
                chosen.removeLast()
            }
            return false
        }
        return extend(from: 0) ? chosen : nil
    }
}
