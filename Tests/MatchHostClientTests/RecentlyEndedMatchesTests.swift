import Testing

@testable import MatchHostClient

struct RecentlyEndedMatchesTests {
    @Test func aRepeatIsRefusedAndTheOldestIsForgottenPastTheCapacity() {
        var ended = RecentlyEndedMatches(capacity: 3)
        let firsts = [7, 8, 9].map { ended.insert($0) }
        #expect(firsts == [true, true, true])
        let repeated = ended.insert(8)
        #expect(!repeated)
        // A fourth forgets the first only: memory stays bounded however many matches end.
        let fourth = ended.insert(10)
        #expect(fourth)
        #expect(!ended.contains(7))
        #expect([8, 9, 10].allSatisfy { ended.contains($0) })
        let forgotten = ended.insert(7)
        #expect(forgotten, "forgotten, so reported again")
        #expect(!ended.contains(8))
    }
}
