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
                let ticket = try fixture.addRandomTicket(playerNumber: &playerNumber, using: &random)
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
                let ticket = try fixture.addRandomTicket(playerNumber: &playerNumber, using: &random)
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
}
