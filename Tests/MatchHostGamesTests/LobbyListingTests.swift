import MatchHostCore
import Testing

private struct Entry: LobbyEntry {
    var matchID: MatchID
    var players: Int
}

@Suite struct LobbyListingTests {
    @Test func changesAreCoalescedBetweenPublications() {
        var listing = LobbyListing<Entry>()
        var live: [MatchID: Entry] = [1: Entry(matchID: 1, players: 1), 2: Entry(matchID: 2, players: 1)]
        listing.markDirty(2)
        listing.markDirty(1)
        #expect(listing.publish { live[$0] } == [.added(live[1]!), .added(live[2]!)])
        #expect(!listing.hasChanges)

        // Three joins to one match, one update.
        for players in 2...4 {
            live[1]!.players = players
            listing.markDirty(1)
        }
        #expect(listing.publish { live[$0] } == [.changed(Entry(matchID: 1, players: 4))])
        // Back to how it was published: nothing to say.
        live[2]!.players = 2
        listing.markDirty(2)
        live[2]!.players = 1
        listing.markDirty(2)
        #expect(listing.publish { live[$0] } == [])
        // Opened and closed between publications: never seen.
        live[3] = Entry(matchID: 3, players: 1)
        listing.markDirty(3)
        live[3] = nil
        listing.markDirty(3)
        #expect(listing.publish { live[$0] } == [])
        // Removed: reported with the entry as last published.
        live[1] = nil
        listing.markDirty(1)
        #expect(listing.publish { live[$0] } == [.removed(Entry(matchID: 1, players: 4))])
        #expect(listing.entries == [Entry(matchID: 2, players: 1)])
    }

    @Test func pagesFollowTheCursorAndTheFilter() {
        var listing = LobbyListing<Entry>()
        // Published out of order: the listing keeps ids sorted.
        for id: MatchID in [5, 1, 3, 2, 4] { listing.markDirty(id) }
        _ = listing.publish { Entry(matchID: $0, players: Int($0)) }
        #expect(listing.entries.map(\.matchID) == [1, 2, 3, 4, 5])
        var page = listing.page(after: 0, limit: 2) { _ in true }
        #expect(page.entries.map(\.matchID) == [1, 2] && page.next == 2)
        page = listing.page(after: page.next, limit: 2) { _ in true }
        #expect(page.entries.map(\.matchID) == [3, 4] && page.next == 4)
        page = listing.page(after: page.next, limit: 2) { _ in true }
        #expect(page.entries.map(\.matchID) == [5] && page.next == 0)
        // Exactly a full last page: no further cursor.
        page = listing.page(after: 3, limit: 2) { _ in true }
        #expect(page.entries.map(\.matchID) == [4, 5] && page.next == 0)
        let odd = listing.page(after: 0, limit: 10) { $0.players % 2 == 1 }
        #expect(odd.entries.map(\.matchID) == [1, 3, 5] && odd.next == 0)
        let firstOdd = listing.page(after: 0, limit: 1) { $0.players % 2 == 1 }
        #expect(firstOdd.entries.map(\.matchID) == [1] && firstOdd.next == 1)
    }

    @Test func aPageLooksAtABoundedNumberOfEntriesAndEndsEarlyWithACursor() {
        var listing = LobbyListing<Entry>()
        for id: MatchID in 1...10 { listing.markDirty(id) }
        _ = listing.publish { Entry(matchID: $0, players: $0 == 9 ? 1 : 2) }
        var looked: [MatchID] = []
        var page = listing.page(after: 0, limit: 5, examining: 4) { entry in
            looked.append(entry.matchID)
            return entry.players == 1
        }
        #expect(looked == [1, 2, 3, 4])
        #expect(page.entries.isEmpty && page.next == 4, "nothing yet, but more to look at")
        page = listing.page(after: page.next, limit: 5, examining: 4) { $0.players == 1 }
        #expect(page.entries.isEmpty && page.next == 8)
        page = listing.page(after: page.next, limit: 5, examining: 4) { $0.players == 1 }
        #expect(page.entries.map(\.matchID) == [9] && page.next == 0, "the end reached within the budget")
        // A budget that ends exactly at the last entry: no cursor, nothing is left.
        page = listing.page(after: 6, limit: 5, examining: 4) { _ in true }
        #expect(page.entries.map(\.matchID) == [7, 8, 9, 10] && page.next == 0)
    }
}

@Suite struct PartyDirectoryTests {
    @Test func membershipAndLimits() throws {
        var parties = PartyDirectory()
        let party = try parties.create(leader: "a", maxSize: 3).get()
        #expect(party.id.count == 8 && party.members == ["a"])
        #expect(parties.create(leader: "a", maxSize: 2) == .failure(.alreadyInParty(party.id)))
        #expect(parties.create(leader: "x", maxSize: 1) == .failure(.badSize(1)))
        #expect(parties.create(leader: "x", maxSize: 17) == .failure(.badSize(17)))
        #expect(try parties.join(party.id.lowercased(), player: "b").get().members == ["a", "b"])
        #expect(try parties.join(party.id, player: "b").get().members == ["a", "b"])  // again: no change
        #expect(try parties.join(party.id, player: "c").get().members == ["a", "b", "c"])
        #expect(parties.join(party.id, player: "d") == .failure(.full(maxSize: 3)))
        #expect(parties.join("NOSUCHID", player: "d") == .failure(.noSuchParty("NOSUCHID")))

        let leaving = parties.leave(player: "b")
        let left = try #require(leaving)
        #expect(left.after.members == ["a", "c"])
        #expect(parties.party(of: "b") == nil)
        #expect(parties.leave(player: "c", party: "OTHERONE") == nil)
        // The leader leaving disbands it: every member is free.
        let leader = parties.leave(player: "a")
        let disbanded = try #require(leader)
        #expect(disbanded.before.members == ["a", "c"] && disbanded.after.members.isEmpty)
        #expect(parties.party(of: "c") == nil && parties.party(party.id) == nil && parties.count == 0)
    }
}
