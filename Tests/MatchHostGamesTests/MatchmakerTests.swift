import MatchHostCore
import NIOCore
import Testing

/// The matchmaker's rules on a manual clock: age order, queries, relaxation, parties,
/// cancelling and limits.
@Suite struct MatchmakerTests {
    // MARK: - Age order

    @Test func theOldestTicketsGetTheRoom() throws {
        let fixture = MatchmakerFixture()
        for player in ["a", "b", "c", "d", "e", "f"] {
            try fixture.add(player, min: 4, max: 4)
            fixture.clock.advance(by: .milliseconds(100))
        }
        let groups = fixture.pass()
        #expect(groups.map(\.leads) == [["a", "b", "c", "d"]])
        #expect(fixture.matchmaker.waitingTickets.map { $0.players[0] } == ["e", "f"])
    }

    @Test func pairsFormInAgeOrder() throws {
        let fixture = MatchmakerFixture()
        for player in ["a", "b", "c", "d", "e"] { try fixture.add(player) }
        #expect(fixture.pass().map(\.leads) == [["a", "b"], ["c", "d"]])
        #expect(fixture.matchmaker.count == 1)
        try fixture.add("f")
        #expect(fixture.pass().map(\.leads) == [["e", "f"]])
    }

    @Test func aGroupFillsUpToItsSmallestMaximum() throws {
        let fixture = MatchmakerFixture(relaxAfter: .zero)
        try fixture.add("a", min: 2, max: 8)
        try fixture.add("b", min: 2, max: 3)
        for player in ["c", "d", "e"] { try fixture.add(player, min: 2, max: 8) }
        #expect(fixture.pass().map(\.leads) == [["a", "b", "c"], ["d", "e"]])
    }

    @Test func onlyTheSameModeIsGrouped() throws {
        let fixture = MatchmakerFixture()
        try fixture.add("a", mode: "duel")
        try fixture.add("b", mode: "chess")
        #expect(fixture.pass(after: .seconds(30)).isEmpty)
        try fixture.add("c", mode: "chess")
        let groups = fixture.pass()
        #expect(groups.map(\.leads) == [["b", "c"]])
        #expect(groups.first?.mode == "chess")
    }

    // MARK: - Queries

    @Test func requiredEqualityIsRespected() throws {
        let fixture = MatchmakerFixture()
        try fixture.add("a", strings: ["region": "eu"], query: [.require(.equals("region", "eu"))])
        try fixture.add("b", strings: ["region": "us"])
        try fixture.add("c", strings: ["region": "eu"])
        #expect(fixture.pass().map(\.leads) == [["a", "c"]])
        #expect(fixture.matchmaker.waitingTickets.map(\.players) == [["b"]])
    }

    @Test func excludedEqualityIsRespected() throws {
        let fixture = MatchmakerFixture()
        try fixture.add("a", strings: ["platform": "pc"], query: [.exclude(.equals("platform", "mobile"))])
        try fixture.add("b", strings: ["platform": "mobile"])
        try fixture.add("c", strings: ["platform": "console"])
        #expect(fixture.pass().map(\.leads) == [["a", "c"]])
    }

    @Test func rangesAreInclusive() throws {
        let fixture = MatchmakerFixture()
        try fixture.add("a", numbers: ["skill": 150], query: [.require(.range("skill", min: 100, max: 200))])
        try fixture.add("b", numbers: ["skill": 250], query: [.require(.range("skill", min: 240, max: nil))])
        try fixture.add("c", numbers: ["skill": 99.5], query: [.require(.range("skill", min: nil, max: 100))])
        #expect(fixture.pass(after: .seconds(60)).isEmpty)
        try fixture.add("d", numbers: ["skill": 200])
        #expect(fixture.pass().map(\.leads) == [["a", "d"]])
        // Open bounds.
        try fixture.add("e", numbers: ["skill": 240], query: [.require(.range("skill", min: 240, max: nil))])
        #expect(fixture.pass().map(\.leads) == [["b", "e"]])
        try fixture.add("f", numbers: ["skill": -3], query: [.require(.range("skill", min: nil, max: 100))])
        #expect(fixture.pass().map(\.leads) == [["c", "f"]])
    }

    @Test func aMissingPropertyFailsARequireAndPassesAnExclude() throws {
        let fixture = MatchmakerFixture()
        try fixture.add("a", query: [.require(.range("skill", min: 0, max: 100))])
        try fixture.add("b", strings: ["region": "eu"])
        try fixture.add("c", query: [.require(.equals("region", "eu"))])
        // a wants a skill nobody has; c takes b (b's region), a waits.
        #expect(fixture.pass(after: .seconds(30)).map(\.leads) == [["b", "c"]])
        // d has no skill, so a refuses it, although d's excludes pass for a (a has neither property).
        try fixture.add("d", query: [.exclude(.equals("platform", "mobile")), .exclude(.range("skill", min: 0, max: 100))])
        #expect(fixture.pass(after: .seconds(30)).isEmpty)
        try fixture.add("e", numbers: ["skill": 5], query: [.exclude(.equals("platform", "mobile"))])
        // e has a skill and no platform: a accepts e, e's exclude passes for a's missing platform.
        #expect(fixture.pass().map(\.leads) == [["a", "e"]])
    }

    @Test func compatibilityIsMutual() throws {
        let fixture = MatchmakerFixture()
        // a accepts anyone; b accepts a only if a is not from the eu, and a is.
        try fixture.add("a", strings: ["region": "eu"])
        try fixture.add("b", strings: ["region": "us"], query: [.exclude(.equals("region", "eu"))])
        #expect(fixture.pass(after: .seconds(60)).isEmpty)
        #expect(fixture.matchmaker.count == 2)
        let a = try #require(fixture.matchmaker.waitingTickets.first)
        let b = try #require(fixture.matchmaker.waitingTickets.last)
        #expect(a.accepts(b) && !b.accepts(a) && !a.isCompatible(with: b))
    }

    @Test func everyTicketInAGroupAcceptsEveryOther() throws {
        let fixture = MatchmakerFixture(relaxAfter: .zero)
        // b and c each accept a but not each other: the group is a + b + d, not a + b + c.
        try fixture.add("a", min: 3, max: 3)
        try fixture.add("b", min: 3, max: 3, strings: ["team": "red"], query: [.exclude(.equals("team", "blue"))])
        try fixture.add("c", min: 3, max: 3, strings: ["team": "blue"])
        try fixture.add("d", min: 3, max: 3)
        #expect(fixture.pass().map(\.leads) == [["a", "b", "d"]])
    }

    // MARK: - Relaxation

    @Test func aTicketWaitsForAFullGroupUntilItRelaxes() throws {
        let fixture = MatchmakerFixture(relaxAfter: .seconds(10))
        var formed: [[PlayerID]] = []
        fixture.matchmaker.start { groups in formed += groups.map(\.leads) }
        try fixture.add("a", min: 2, max: 4)
        try fixture.add("b", min: 2, max: 4)
        fixture.clock.advance(by: .milliseconds(9_999))
        #expect(formed.isEmpty)
        fixture.clock.advance(by: .milliseconds(1))  // the pass at 10 s: both have waited 10 s
        #expect(formed == [["a", "b"]])
        fixture.matchmaker.stop()
    }

    @Test func aRelaxedGroupStillTakesEveryoneWhoFits() throws {
        let fixture = MatchmakerFixture(relaxAfter: .seconds(10))
        for player in ["a", "b", "c"] { try fixture.add(player, min: 2, max: 4) }
        #expect(fixture.pass(after: .seconds(9)).isEmpty)
        #expect(fixture.pass(after: .seconds(1)).map(\.leads) == [["a", "b", "c"]])
    }

    @Test func aFreshTicketHoldsOutForItsMaximumWhileAnOldOneHasRelaxed() throws {
        let fixture = MatchmakerFixture(relaxAfter: .seconds(10))
        try fixture.add("old", min: 2, max: 4)
        #expect(fixture.pass(after: .seconds(10)).isEmpty)  // relaxed, but alone
        try fixture.add("new", min: 2, max: 4)
        // new needs 4 players until its own 10 s are up, so no group of 2 yet.
        #expect(fixture.pass(after: .seconds(9)).isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 2)
        #expect(fixture.pass(after: .milliseconds(500)).isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 0)  // nothing changed for either
        #expect(fixture.pass(after: .milliseconds(500)).map(\.leads) == [["old", "new"]])
    }

    @Test func aSearchIsRepeatedOnlyWhenSomethingChanged() throws {
        let fixture = MatchmakerFixture(relaxAfter: .seconds(10))
        try fixture.add("a", min: 3, max: 3, strings: ["region": "eu"], query: [.require(.equals("region", "eu"))])
        try fixture.add("b", min: 3, max: 3, strings: ["region": "eu"], query: [.require(.equals("region", "eu"))])
        #expect(fixture.pass().isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 2)
        #expect(fixture.pass().isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 0)
        try fixture.add("x", min: 3, max: 3, strings: ["region": "us"], query: [.require(.equals("region", "us"))])
        #expect(fixture.pass().isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 1)  // only x: nothing arrived in the eu
        try fixture.add("c", min: 3, max: 3, strings: ["region": "eu"], query: [.require(.equals("region", "eu"))])
        #expect(fixture.pass().map(\.leads) == [["a", "b", "c"]])
    }

    @Test func aTicketWithManyPartnersThatDoNotFitStillFindsItsGroup() throws {
        let fixture = MatchmakerFixture()
        // 40 duellists accept the big ticket (more partners than a ticket keeps between
        // searches) but want 2 players, and refuse each other.
        try fixture.add("big", min: 16, max: 16)
        for index in 0..<40 {
            try fixture.add(
                "small\(index)", min: 2, max: 2, strings: ["kind": "small"], query: [.exclude(.equals("kind", "small"))])
        }
        #expect(fixture.pass().isEmpty)
        #expect(fixture.pass(after: .seconds(30)).isEmpty)
        for index in 0..<15 { try fixture.add("crew\(index)", min: 16, max: 16) }
        let groups = fixture.pass()
        #expect(groups.map(\.leads) == [["big"] + (0..<15).map { "crew\($0)" }])
        #expect(fixture.matchmaker.count == 40)
    }

    // MARK: - Parties

    @Test func aPartyFillsAGroupWithSolos() throws {
        let fixture = MatchmakerFixture()
        try fixture.add("solo1", min: 4, max: 4)
        try fixture.add("p1", party: ["p2"], min: 4, max: 4)
        try fixture.add("solo2", min: 4, max: 4)
        try fixture.add("solo3", min: 4, max: 4)
        let groups = fixture.pass()
        #expect(groups.map(\.leads) == [["solo1", "p1", "solo2"]])
        #expect(groups.first?.players == ["solo1", "p1", "p2", "solo2"])
        #expect(groups.first?.playerCount == 4)
    }

    @Test func aPartyIsNeverSplit() throws {
        let fixture = MatchmakerFixture(relaxAfter: .seconds(5))
        try fixture.add("a1", party: ["a2", "a3"], min: 2, max: 4)
        try fixture.add("b1", party: ["b2", "b3"], min: 2, max: 4)
        // Two parties of 3 never fit in 4, not even once relaxed.
        #expect(fixture.pass(after: .seconds(60)).isEmpty)
        try fixture.add("solo", min: 2, max: 4)
        let groups = fixture.pass(after: .seconds(5))
        #expect(groups.map(\.leads) == [["a1", "solo"]])
        #expect(groups.first?.players == ["a1", "a2", "a3", "solo"])
    }

    @Test func partiesSkipPastATicketThatDoesNotFit() throws {
        let fixture = MatchmakerFixture()
        // a (1) + b (3) leave room for 2: c (3) is passed over, e (2) fills the 6.
        try fixture.add("a", min: 6, max: 6)
        try fixture.add("b", party: ["b2", "b3"], min: 6, max: 6)
        try fixture.add("c", party: ["c2", "c3"], min: 6, max: 6)
        try fixture.add("e", party: ["e2"], min: 6, max: 6)
        let groups = fixture.pass()
        #expect(groups.map(\.leads) == [["a", "b", "e"]])
        #expect(groups.first?.playerCount == 6)
    }

    @Test func theFullSearchFindsAGroupTheGreedyOneMisses() throws {
        let fixture = MatchmakerFixture(relaxAfter: .seconds(10))
        try fixture.add("old", min: 2, max: 4)
        #expect(fixture.pass(after: .seconds(10)).isEmpty)
        try fixture.add("young", min: 2, max: 4)
        fixture.clock.advance(by: .seconds(5))
        try fixture.add("late", min: 2, max: 4)
        fixture.clock.advance(by: .seconds(5))  // young relaxed, late not
        // The greedy group takes young, then late, which needs 4 players: 3 of 4. The full
        // search finds old + young (both relaxed), and late cannot join it.
        let groups = fixture.pass(after: .zero)
        #expect(groups.map(\.leads) == [["old", "young"]])
    }

    // MARK: - Cancelling

    @Test func aCancelledTicketIsNeverMatched() throws {
        let fixture = MatchmakerFixture()
        let a = try fixture.add("a")
        try fixture.add("b")
        #expect(fixture.matchmaker.cancel(a.id))
        #expect(!fixture.matchmaker.cancel(a.id))
        #expect(fixture.matchmaker.ticket(a.id) == nil)
        #expect(fixture.pass().isEmpty)
        try fixture.add("c")
        #expect(fixture.pass().map(\.leads) == [["b", "c"]])
        #expect(!fixture.matchmaker.cancel("no-such-ticket"))
    }

    @Test func cancelAllRemovesEveryTicketWithThePlayerPartiesToo() throws {
        let fixture = MatchmakerFixture()
        let solo = try fixture.add("p", mode: "duel")
        let party = try fixture.add("q", party: ["p"], mode: "squad", min: 4, max: 4)
        let other = try fixture.add("r", mode: "duel")
        #expect(Set(fixture.matchmaker.cancelAll(for: "p")) == [solo.id, party.id])
        #expect(fixture.matchmaker.tickets(of: "q").isEmpty)
        #expect(fixture.matchmaker.waitingTickets.map(\.id) == [other.id])
        #expect(fixture.matchmaker.cancelAll(for: "p").isEmpty)
    }

    @Test func aMatchedPlayersOtherTicketsAreWithdrawn() throws {
        let fixture = MatchmakerFixture()
        let squad = try fixture.add("p", mode: "squad", min: 4, max: 4)
        try fixture.add("p", mode: "duel")
        try fixture.add("q", mode: "duel")
        try fixture.add("s", mode: "squad", min: 4, max: 4)
        let groups = fixture.pass()
        #expect(groups.map(\.leads) == [["p", "q"]])
        #expect(groups.first?.withdrawnTicketIDs == [squad.id])
        #expect(fixture.matchmaker.tickets(of: "p").isEmpty)
        #expect(fixture.matchmaker.waitingTickets.map(\.players) == [["s"]])
    }

    // MARK: - Limits

    @Test func badTicketsAreRefused() throws {
        let fixture = MatchmakerFixture()
        let m = fixture.matchmaker
        #expect(throws: MatchmakerError.noPlayers) { try m.add(players: [], mode: "duel", minPlayers: 2, maxPlayers: 2) }
        #expect(throws: MatchmakerError.emptyMode) { try m.add(players: ["a"], mode: "", minPlayers: 2, maxPlayers: 2) }
        #expect(throws: MatchmakerError.invalidPlayerCounts(min: 1, max: 2)) {
            try m.add(players: ["a"], mode: "duel", minPlayers: 1, maxPlayers: 2)
        }
        #expect(throws: MatchmakerError.invalidPlayerCounts(min: 2, max: 17)) {
            try m.add(players: ["a"], mode: "duel", minPlayers: 2, maxPlayers: 17)
        }
        #expect(throws: MatchmakerError.invalidPlayerCounts(min: 4, max: 3)) {
            try m.add(players: ["a"], mode: "duel", minPlayers: 4, maxPlayers: 3)
        }
        #expect(throws: MatchmakerError.partyTooLarge(players: 4, maxPlayers: 4)) {
            try m.add(players: ["a", "b", "c", "d"], mode: "duel", minPlayers: 2, maxPlayers: 4)
        }
        #expect(throws: MatchmakerError.duplicatePlayer("a")) {
            try m.add(players: ["a", "b", "a"], mode: "duel", minPlayers: 2, maxPlayers: 8)
        }
        #expect(throws: MatchmakerError.invalidProperties("number property skill is NaN")) {
            try m.add(players: ["a"], mode: "duel", minPlayers: 2, maxPlayers: 2, numberProperties: ["skill": .nan])
        }
        #expect(throws: MatchmakerError.invalidProperties("range on skill is empty or NaN")) {
            try m.add(
                players: ["a"], mode: "duel", minPlayers: 2, maxPlayers: 2,
                query: MatchmakerQuery([.require(.range("skill", min: 5, max: 4))]))
        }
        #expect(m.count == 0)
    }

    @Test func propertyAndClauseCountsAreBounded() throws {
        let fixture = MatchmakerFixture { $0.maxProperties = 2; $0.maxQueryClauses = 1 }
        #expect(throws: MatchmakerError.invalidProperties("more than 2 properties")) {
            try fixture.add("a", strings: ["x": "1", "y": "2"], numbers: ["z": 3])
        }
        #expect(throws: MatchmakerError.invalidProperties("more than 1 query clauses")) {
            try fixture.add("a", query: [.require(.equals("x", "1")), .require(.equals("y", "2"))])
        }
        try fixture.add("a", strings: ["x": "1"], numbers: ["z": 3], query: [.require(.equals("x", "1"))])
    }

    @Test func aPlayerHasOneTicketPerModeAndFewTicketsInAll() throws {
        let fixture = MatchmakerFixture { $0.maxTicketsPerPlayer = 2 }
        try fixture.add("p", mode: "duel")
        #expect(throws: MatchmakerError.alreadyQueued(player: "p", mode: "duel")) { try fixture.add("p", mode: "duel") }
        #expect(throws: MatchmakerError.alreadyQueued(player: "p", mode: "duel")) {
            try fixture.add("q", party: ["p"], mode: "duel", max: 4)
        }
        try fixture.add("p", mode: "chess")
        #expect(throws: MatchmakerError.tooManyTickets(player: "p", limit: 2)) { try fixture.add("p", mode: "go") }
        #expect(fixture.matchmaker.tickets(of: "p").count == 2)
    }

    @Test func theCapacityIsEnforced() throws {
        let fixture = MatchmakerFixture { $0.capacity = 3 }
        for player in ["a", "b", "c"] { try fixture.add(player, mode: player) }
        #expect(throws: MatchmakerError.full(capacity: 3)) { try fixture.add("d") }
        fixture.matchmaker.cancelAll(for: "a")
        try fixture.add("d")
    }

    @Test func ticketIDsAreUniqueAndLookedUp() throws {
        let fixture = MatchmakerFixture()
        var ids = Set<String>()
        for index in 0..<500 {
            let ticket = try fixture.add("p\(index)", strings: ["n": "\(index)"])
            ids.insert(ticket.id)
            #expect(fixture.matchmaker.ticket(ticket.id) == ticket)
        }
        #expect(ids.count == 500)
        #expect(fixture.matchmaker.ticket("p0")?.players == nil)
    }

    @Test func anExhaustedSearchIsReportedAndRetried() throws {
        // With a budget of one extension, the full search cannot pass over the young ticket.
        let fixture = MatchmakerFixture(relaxAfter: .seconds(10)) { $0.searchBudget = 1 }
        try fixture.add("old", min: 2, max: 4)
        #expect(fixture.pass(after: .seconds(10)).isEmpty)
        try fixture.add("young", min: 2, max: 4)
        try fixture.add("other", min: 2, max: 4)
        // From old, the greedy group is 3 of the 4 the young ones need, and the full search
        // needs a second extension to try old + other. (From young and other, counting the
        // players proves at once that no group exists.)
        #expect(fixture.pass().isEmpty)
        #expect(fixture.matchmaker.lastPass.exhaustedSearches == 1)
        #expect(fixture.pass(after: .zero).isEmpty)
        #expect(fixture.matchmaker.lastPass.searches == 1)  // old again, although nothing changed
        // Once all have relaxed the greedy group is valid and needs no full search.
        #expect(fixture.pass(after: .seconds(10)).map(\.leads) == [["old", "young", "other"]])
    }
}
