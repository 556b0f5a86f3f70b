@testable import MatchHostServer
import NIOCore
import Testing

@Suite struct NetworkBudgetTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aNetworkRegistersItsMinuteAtOnceThenAtTheRefillRate() {
        var limiter = NetworkBuckets(perMinute: 3)
        func admit(_ source: String, _ now: NIODeadline) -> Bool { limiter.admit(source, now: now) }
        for _ in 0..<3 { #expect(admit("10.0.0.1", self.start)) }
        #expect(!admit("10.0.0.1", self.start))
        #expect(admit("10.0.0.2", self.start), "another network has its own allowance")
        // One registration refills every 20 s; a refused attempt loses nothing of the refill.
        #expect(!admit("10.0.0.1", self.start + .seconds(19)))
        #expect(admit("10.0.0.1", self.start + .seconds(41)))
        #expect(admit("10.0.0.1", self.start + .seconds(41)))
        #expect(!admit("10.0.0.1", self.start + .seconds(41)))
    }

    @Test func askingWhetherANetworkHasOneLeftCountsNothing() {
        var limiter = NetworkBuckets(perMinute: 1)
        #expect(limiter.allows("10.0.0.1", now: self.start))
        #expect(limiter.allows("10.0.0.1", now: self.start))
        let admitted = limiter.admit("10.0.0.1", now: self.start)
        #expect(admitted)
        #expect(!limiter.allows("10.0.0.1", now: self.start))
        #expect(limiter.allows("10.0.0.1", now: self.start + .seconds(60)))
    }

    @Test func sourcesThatRefilledAreForgottenSoMemoryFollowsTheRate() {
        var limiter = NetworkBuckets(perMinute: 1)
        func admit(_ source: String, _ now: NIODeadline) -> Bool { limiter.admit(source, now: now) }
        for index in 0..<1024 {
            #expect(admit("10.0.\(index / 256).\(index % 256)", self.start))
        }
        #expect(limiter.trackedSources == 1024)
        // A minute later all of them have refilled: the next new source sweeps them away.
        #expect(admit("192.168.0.1", self.start + .seconds(61)))
        #expect(limiter.trackedSources == 1)
        #expect(admit("10.0.0.0", self.start + .seconds(61)), "a forgotten source starts full")
    }

    @Test func aRefundGivesBackOneRegistrationUpToAFullBucket() {
        var limiter = NetworkBuckets(perMinute: 2)
        func admit(_ source: String) -> Bool { limiter.admit(source, now: self.start) }
        #expect(admit("10.0.0.1") && admit("10.0.0.1"))
        #expect(!admit("10.0.0.1"))
        limiter.refund("10.0.0.1", now: self.start)
        #expect(admit("10.0.0.1"), "the refunded registration")
        #expect(!admit("10.0.0.1"))
        limiter.refund("10.0.0.1", now: self.start)
        limiter.refund("10.0.0.1", now: self.start)
        limiter.refund("10.0.0.1", now: self.start)
        #expect(admit("10.0.0.1") && admit("10.0.0.1"))
        #expect(!admit("10.0.0.1"), "refunds never fill a bucket past its minute")
        limiter.refund("10.0.0.9", now: self.start)
        #expect(limiter.trackedSources == 1, "a refund to a source never seen tracks nothing")
    }

    @Test func theServersLimiterIsTheBucketsBehindALock() {
        // One limiter, asked from two places (the native world and the Cat Race port's).
        let limiter = NetworkBudget.newPlayers(perMinute: 2)
        #expect(limiter.admit("10.0.0.1", now: self.start))
        #expect(limiter.admit("10.0.0.1", now: self.start))
        #expect(!limiter.admit("10.0.0.1", now: self.start))
        limiter.refund("10.0.0.1", now: self.start)
        #expect(limiter.admit("10.0.0.1", now: self.start))
        #expect(limiter.trackedSources == 1)
    }

    @Test func addressesCountByNetwork() throws {
        let v4 = try SocketAddress(ipAddress: "203.0.113.7", port: 5000)
        #expect(NetworkBudget.source(of: v4) == "203.0.113.7")
        let a = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa::1", port: 5000)
        let b = try SocketAddress(ipAddress: "2001:db8:1:2:bbbb::9", port: 5001)
        let c = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 5000)
        #expect(NetworkBudget.source(of: a) == "2001:db8:1:2::/64")
        #expect(NetworkBudget.source(of: a) == NetworkBudget.source(of: b))
        #expect(NetworkBudget.source(of: a) != NetworkBudget.source(of: c))
        let mapped = try SocketAddress(ipAddress: "::ffff:203.0.113.7", port: 5000)
        #expect(NetworkBudget.source(of: mapped) == "203.0.113.7", "IPv4 on a dual-stack socket counts as IPv4")
    }
}
