import MatchHostCore
import NIOCore
import Testing

/// Random pools, checked after every pass against a plain brute-force reading of the rules:
/// every group formed is valid, no player is placed twice, nobody is lost, and no group
/// could still be formed from the tickets left waiting. So no ticket waits while compatible
/// players for it exist.
@Suite struct MatchmakerFairnessTests {
    private static let relaxAfter = TimeAmount.seconds(5)

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func nothingWaitsWhileACompatibleGroupExists(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let fixture = MatchmakerFixture(relaxAfter: Self.relaxAfter)
        var added: [String: MatchmakerTicket] = [:]
        var matched: Set<String> = []
        var playerNumber = 0
        var groupsFormed = 0

        for step in 0..<80 {
            // Arrivals for the first 60 passes, then passes until everyone has relaxed.
            let arrivals = step < 60 ? Int.random(in: 0...6, using: &random) : 0
            for _ in 0..<arrivals {
                let ticket = try Self.addRandomTicket(to: fixture, playerNumber: &playerNumber, using: &random)
                added[ticket.id] = ticket
            }
            fixture.clock.advance(by: .milliseconds(Int64.random(in: 200...1500, using: &random)))
            let groups = fixture.matchmaker.process()
            let now = fixture.clock.now
            #expect(fixture.matchmaker.lastPass.exhaustedSearches == 0)

            var playersThisPass = Set<PlayerID>()
            for group in groups {
                groupsFormed += 1
                let violation = MatchmakerRules.violation(of: group.tickets, now: now, relaxAfter: Self.relaxAfter)
                #expect(violation == nil, "seed \(seed) step \(step): \(violation ?? "")")
                #expect(group.tickets.map(\.enqueuedAt) == group.tickets.map(\.enqueuedAt).sorted())
                for ticket in group.tickets {
                    #expect(added[ticket.id] == ticket)
                    #expect(matched.insert(ticket.id).inserted)
                }
                for player in group.players { #expect(playersThisPass.insert(player).inserted) }
                #expect(group.withdrawnTicketIDs.isEmpty)  // one ticket per player here
            }

            let waiting = fixture.matchmaker.waitingTickets
            #expect(waiting.count + matched.count == added.count)
            #expect(Set(waiting.map(\.id)).isDisjoint(with: matched))
            let missed = MatchmakerRules.anyGroup(in: waiting, now: now, relaxAfter: Self.relaxAfter)?.map(\.id)
            #expect(missed == nil, "seed \(seed) step \(step): a valid group was left waiting")
        }
        // The pools must be rich enough that the checks above mean something.
        #expect(groupsFormed >= 20)
        #expect(fixture.matchmaker.count >= 1)
    }

    /// Thousands of tickets through a small pool, with cancels, so that every table is swept
    /// and compacted many times (records, age order, buckets, interned strings) while the
    /// same checks run after every pass.
    @Test func churnKeepsEveryTableConsistent() throws {
        var random = SeededGenerator(seed: 42)
        let fixture = MatchmakerFixture(relaxAfter: Self.relaxAfter)
        var playerNumber = 0
        var added = 0
        var matched = 0
        var cancelled = 0
        for step in 0..<1000 {
            while fixture.matchmaker.count < 30 {
                let ticket = try Self.addRandomTicket(to: fixture, playerNumber: &playerNumber, using: &random)
                #expect(fixture.matchmaker.ticket(ticket.id) == ticket)
                added += 1
            }
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                let waiting = fixture.matchmaker.waitingTickets
                let victim = waiting[Int.random(in: 0..<waiting.count, using: &random)]
                #expect(fixture.matchmaker.cancel(victim.id))
                cancelled += 1
            }
            fixture.clock.advance(by: .milliseconds(Int64.random(in: 200...1500, using: &random)))
            let groups = fixture.matchmaker.process()
            let now = fixture.clock.now
            for group in groups {
                #expect(MatchmakerRules.violation(of: group.tickets, now: now, relaxAfter: Self.relaxAfter) == nil)
                matched += group.tickets.count
            }
            let waiting = fixture.matchmaker.waitingTickets
            #expect(waiting.count == fixture.matchmaker.count)
            #expect(added == waiting.count + matched + cancelled)
            let missed = MatchmakerRules.anyGroup(in: waiting, now: now, relaxAfter: Self.relaxAfter)?.map(\.id)
            #expect(missed == nil, "step \(step): a valid group was left waiting")
        }
        #expect(added > 2000)
        #expect(matched > 1000)
    }

    /// A ticket with a random mix of what tickets can say: two modes, regions some require,
    /// a skill some want within a window, a platform some exclude, parties of 1-3, and
    /// minimum/maximum sizes in 2...6.
    private static func addRandomTicket(
        to fixture: MatchmakerFixture, playerNumber: inout Int, using random: inout SeededGenerator
    ) throws -> MatchmakerTicket {
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
        return try fixture.matchmaker.add(
            players: players, mode: Int.random(in: 0..<4, using: &random) == 0 ? "squad" : "duel",
            minPlayers: minPlayers, maxPlayers: maxPlayers, stringProperties: strings, numberProperties: numbers,
            query: MatchmakerQuery(clauses))
    }
}
