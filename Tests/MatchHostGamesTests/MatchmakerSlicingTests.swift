import MatchHostCore
import NIOCore
import Testing

/// A pass cut into slices (``MatchmakerConfiguration/sliceDuration``, so that a pass over many
/// tickets never holds the event loop long) forms what a whole pass forms, and survives the
/// tickets that arrive and leave between its slices. A slice duration of zero makes every
/// slice exactly one search, so these run on the manual clock without depending on speed.
@Suite struct MatchmakerSlicingTests {
    private static let relaxAfter = TimeAmount.seconds(5)

    private static func slicedFixture() -> MatchmakerFixture {
        MatchmakerFixture(relaxAfter: Self.relaxAfter) { $0.sliceDuration = .zero }
    }

    /// Runs the pass under way to its end one slice at a time; returns its groups and slices.
    private static func slicedPass(_ matchmaker: Matchmaker) -> (groups: [MatchmakerGroup], slices: Int) {
        var groups: [MatchmakerGroup] = []
        var slices = 0
        while true {
            let (formed, finished) = matchmaker.processSlice()
            slices += 1
            groups += formed
            if finished { return (groups, slices) }
        }
    }

    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func aSlicedPassFormsWhatAWholePassForms(seed: UInt64) throws {
        // The same tickets, in the same order, on the same times, into two matchmakers.
        var randomWhole = SeededGenerator(seed: seed)
        var randomSliced = SeededGenerator(seed: seed)
        let whole = MatchmakerFixture(relaxAfter: Self.relaxAfter)
        let sliced = Self.slicedFixture()
        var wholeNumber = 0
        var slicedNumber = 0
        var slicesAboveOne = 0
        var groupsFormed = 0
        for step in 0..<40 {
            let arrivals = step < 30 ? Int.random(in: 0...8, using: &randomWhole) : 0
            _ = Int.random(in: 0...8, using: &randomSliced)
            for _ in 0..<arrivals {
                try whole.addRandomTicket(playerNumber: &wholeNumber, using: &randomWhole)
                try sliced.addRandomTicket(playerNumber: &slicedNumber, using: &randomSliced)
            }
            whole.clock.advance(by: .milliseconds(700))
            sliced.clock.advance(by: .milliseconds(700))
            let expected = whole.matchmaker.process()
            let (groups, slices) = Self.slicedPass(sliced.matchmaker)
            #expect(groups.map(\.players) == expected.map(\.players), "seed \(seed) step \(step)")
            #expect(sliced.matchmaker.lastPass.slices == slices)
            #expect(sliced.matchmaker.lastPass.searches == whole.matchmaker.lastPass.searches)
            // One search per slice: a pass with n searches runs in n slices (one at least), or
            // n + 1 when tickets that need no search follow the last search.
            let searches = sliced.matchmaker.lastPass.searches
            #expect((max(1, searches)...(searches + 1)).contains(slices))
            if slices > 1 { slicesAboveOne += 1 }
            groupsFormed += groups.count
            #expect(sliced.matchmaker.waitingTickets.map(\.players) == whole.matchmaker.waitingTickets.map(\.players))
        }
        #expect(slicesAboveOne >= 10)
        #expect(groupsFormed >= 10)
    }

    /// Cancels and arrivals between every two slices (enough removals that the age order
    /// passes the size at which it is compacted, which must wait for the pass): no cancelled ticket
    /// is ever placed, every group is valid, nobody is lost, and once the arrivals stop a
    /// whole pass leaves no valid group waiting.
    @Test func ticketsThatComeAndGoBetweenSlicesAreHandled() throws {
        var random = SeededGenerator(seed: 7)
        let fixture = Self.slicedFixture()
        var playerNumber = 0
        var added: [String: MatchmakerTicket] = [:]
        var cancelled: Set<String> = []
        var matched: Set<String> = []
        var slicesCutShort = 0

        func check(_ groups: [MatchmakerGroup]) {
            for group in groups {
                let now = fixture.clock.now
                #expect(MatchmakerRules.violation(of: group.tickets, now: now, relaxAfter: Self.relaxAfter) == nil)
                for ticket in group.tickets {
                    #expect(!cancelled.contains(ticket.id), "a ticket cancelled between slices was placed")
                    #expect(added[ticket.id] == ticket)
                    #expect(matched.insert(ticket.id).inserted)
                }
            }
        }

        for _ in 0..<60 {
            while fixture.matchmaker.count < 120 {
                let ticket = try fixture.addRandomTicket(playerNumber: &playerNumber, using: &random)
                added[ticket.id] = ticket
            }
            fixture.clock.advance(by: .milliseconds(Int64.random(in: 200...1500, using: &random)))
            while true {
                let (groups, finished) = fixture.matchmaker.processSlice()
                check(groups)
                if finished { break }
                slicesCutShort += 1
                // Between two slices: a few leave, a few arrive.
                let waiting = fixture.matchmaker.waitingTickets
                for _ in 0..<min(waiting.count, Int.random(in: 0...3, using: &random)) {
                    let victim = waiting[Int.random(in: 0..<waiting.count, using: &random)]
                    if fixture.matchmaker.cancel(victim.id) { cancelled.insert(victim.id) }
                }
                for _ in 0..<Int.random(in: 0...2, using: &random) {
                    let ticket = try fixture.addRandomTicket(playerNumber: &playerNumber, using: &random)
                    added[ticket.id] = ticket
                }
            }
            let waiting = fixture.matchmaker.waitingTickets
            #expect(waiting.count == fixture.matchmaker.count)
            #expect(added.count == waiting.count + matched.count + cancelled.count)
        }
        // No arrivals, no cancels: one more pass must leave nothing that could be a group.
        fixture.clock.advance(by: .milliseconds(700))
        check(Self.slicedPass(fixture.matchmaker).groups)
        let now = fixture.clock.now
        #expect(MatchmakerRules.anyGroup(in: fixture.matchmaker.waitingTickets, now: now, relaxAfter: Self.relaxAfter) == nil)
        #expect(slicesCutShort > 500)
        #expect(cancelled.count > 100)
        #expect(matched.count > 1000)
    }

    /// A ticket added between two slices waits for the next pass, as a seed and as a partner:
    /// a pass covers the tickets waiting when it began, so that arrivals cannot keep it going
    /// forever, and so that a ticket searched later in the pass ("c") cannot take a newcomer
    /// ("e") that an older ticket searched before it might have wanted.
    @Test func aTicketAddedMidPassWaitsForTheNextPass() throws {
        let fixture = Self.slicedFixture()
        // Each wants a partner of its own region, and nobody present has one.
        try fixture.add("a", strings: ["region": "eu"], query: [.require(.equals("region", "eu"))])
        try fixture.add("b", strings: ["region": "us"], query: [.require(.equals("region", "us"))])
        try fixture.add("c", strings: ["region": "asia"], query: [.require(.equals("region", "asia"))])
        fixture.clock.advance(by: .seconds(1))
        let first = fixture.matchmaker.processSlice()  // the search from "a": nobody else in eu
        #expect(first.groups.isEmpty && !first.finished)
        // Mid-pass arrivals: "d" would suit "a", already searched; "e" suits "c", not yet.
        try fixture.add("d", strings: ["region": "eu"], query: [.require(.equals("region", "eu"))])
        try fixture.add("e", strings: ["region": "asia"], query: [.require(.equals("region", "asia"))])
        let rest = Self.slicedPass(fixture.matchmaker)
        #expect(rest.groups.isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 3)  // from a, b and c; not from d or e
        #expect(fixture.matchmaker.waitingTickets.map { $0.players[0] } == ["a", "b", "c", "d", "e"])
        // The next pass searches from "a" and "c" again (their regions have newcomers).
        fixture.clock.advance(by: .seconds(1))
        #expect(Self.slicedPass(fixture.matchmaker).groups.map(\.leads) == [["a", "d"], ["c", "e"]])
    }

    /// The timer of ``Matchmaker/start(onGroups:)`` runs a pass in slices, each on a timer of
    /// its own due at once (on the event loop: after the loop's next poll of its sockets), and
    /// hands each slice's groups over as they form; the next pass follows one interval later.
    @Test func startedPassesRunInSlicesAndHandOverGroupsAsTheyForm() throws {
        let fixture = Self.slicedFixture()
        for index in 0..<20 { try fixture.add("p\(index)") }
        var handOvers: [[[PlayerID]]] = []
        fixture.matchmaker.start { groups in handOvers.append(groups.map(\.leads)) }
        fixture.clock.advance(by: .seconds(1))
        // Ten duels, one search each: ten slices, ten hand-overs of one group, oldest first.
        #expect(handOvers == (0..<10).map { [["p\(2 * $0)", "p\(2 * $0 + 1)"]] })
        #expect(fixture.matchmaker.lastPass.slices == 10)
        #expect(fixture.clock.pendingCount == 1)  // the next pass
        #expect(fixture.matchmaker.count == 0)

        // With a slice far longer than the pass, the same pass is one slice.
        let whole = MatchmakerFixture(relaxAfter: Self.relaxAfter) { $0.sliceDuration = .seconds(60) }
        for index in 0..<20 { try whole.add("p\(index)") }
        var wholeHandOvers: [[[PlayerID]]] = []
        whole.matchmaker.start { groups in wholeHandOvers.append(groups.map(\.leads)) }
        whole.clock.advance(by: .seconds(1))
        #expect(wholeHandOvers == [(0..<10).map { ["p\(2 * $0)", "p\(2 * $0 + 1)"] }])
        #expect(whole.matchmaker.lastPass.slices == 1)
    }

    /// ``Matchmaker/process()`` called while a sliced pass is under way finishes that pass
    /// (it does not start another over it), and a stopped matchmaker keeps the pass for later.
    @Test func processFinishesASlicedPassUnderWay() throws {
        let fixture = Self.slicedFixture()
        for index in 0..<6 { try fixture.add("p\(index)") }
        fixture.clock.advance(by: .seconds(1))
        let first = fixture.matchmaker.processSlice()
        #expect(first.groups.map(\.leads) == [["p0", "p1"]])
        #expect(!first.finished)
        #expect(fixture.matchmaker.process().map(\.leads) == [["p2", "p3"], ["p4", "p5"]])
        #expect(fixture.matchmaker.lastPass.groups == 3)
        #expect(fixture.matchmaker.lastPass.slices == 2)  // one cut short, then the rest at once
    }
}
