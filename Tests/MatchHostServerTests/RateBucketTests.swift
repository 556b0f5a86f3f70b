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

    @Test func aChargeGoesIntoDebtAndSaysHowLongTheRefillTakes() {
        var bucket = RateBucket(rate: 1_000, burst: 1_000, now: self.start)
        #expect(bucket.charge(600, now: self.start) == nil)
        #expect(bucket.charge(900, now: self.start) == .milliseconds(500), "500 in debt at 1,000 a second")
        #expect(bucket.available(at: self.start + .milliseconds(500)) == 0)
        #expect(bucket.charge(1, now: self.start + .milliseconds(600)) == nil)
    }
}

@Suite struct InboundPacingTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func controlFramesHaveAnAllowanceOfTheirOwn() {
        var pacing = InboundPacing(messagesPerSecond: 10, bytesPerSecond: 1 << 20, maxFrameBytes: 1024, now: self.start)
        for _ in 0..<10 { #expect(pacing.taken(isControl: false, bodyBytes: 10, now: self.start) == nil) }
        // The messages' burst is used up; ACKs and PINGs still go, ten of them.
        for _ in 0..<10 { #expect(pacing.taken(isControl: true, bodyBytes: 10, now: self.start) == nil) }
        #expect(pacing.taken(isControl: true, bodyBytes: 10, now: self.start) == .milliseconds(100))
        #expect(pacing.taken(isControl: false, bodyBytes: 10, now: self.start) == .milliseconds(100))
    }

    @Test func bytesPaceTooAndTheLongerWaitWins() {
        // A burst of one largest frame (1,028 bytes with its prefix): more than a second of 100.
        var pacing = InboundPacing(messagesPerSecond: 1_000, bytesPerSecond: 100, maxFrameBytes: 1024, now: self.start)
        #expect(pacing.taken(isControl: false, bodyBytes: 1024, now: self.start) == nil)
        #expect(pacing.taken(isControl: true, bodyBytes: 96, now: self.start) == .seconds(1))
        #expect(pacing.taken(isControl: false, bodyBytes: 96, now: self.start + .seconds(2)) == nil)
    }
}
