@testable import MatchHostServer
import NIOCore
import Testing

@Suite struct RateBucketTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aBucketGivesItsBurstAtOnceThenRefillsAtItsRate() {
        var bucket = RateBucket(rate: 1_000, burst: 4_000, now: self.start)
        func take(_ amount: Double, _ now: NIODeadline) -> Bool { bucket.take(amount, now: now) }
        #expect(take(3_000, self.start))
        #expect(!take(1_001, self.start), "1,000 left")
        #expect(take(1_000, self.start))
        // Half a second refills 500; a refused take spends nothing.
        #expect(!take(600, self.start + .milliseconds(500)))
        #expect(take(500, self.start + .milliseconds(500)))
        // A long quiet spell refills to the burst and no further.
        #expect(!take(4_001, self.start + .seconds(60)))
        #expect(take(4_000, self.start + .seconds(60)))
    }

    @Test func anEarlierTimeRefillsNothingAndTakesNothingFromLaterRefills() {
        var bucket = RateBucket(rate: 1_000, burst: 1_000, now: self.start)
        func take(_ amount: Double, _ now: NIODeadline) -> Bool { bucket.take(amount, now: now) }
        #expect(take(1_000, self.start))
        #expect(!take(1, self.start - .seconds(5)))
        #expect(!take(1, self.start), "nothing gained by going back")
        #expect(take(500, self.start + .milliseconds(500)), "the refill counts from the latest time seen")
    }
}
