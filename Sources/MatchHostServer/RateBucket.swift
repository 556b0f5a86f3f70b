import NIOCore

/// An allowance refilled continuously at `rate` a second, holding at most `burst`: what a
/// connection may send in a burst, and on average.
struct RateBucket {
    let rate: Double
    let burst: Double
    private var budget: Double
    private var refilledAt: NIODeadline

    init(rate: Double, burst: Double, now: NIODeadline) {
        self.rate = rate
        self.burst = burst
        self.budget = burst
        self.refilledAt = now
    }

    /// What the bucket holds at `now`. A `now` before the latest time seen refills nothing.
    func available(at now: NIODeadline) -> Double {
        guard now > self.refilledAt else { return self.budget }
        return min(self.burst, self.budget + Double((now - self.refilledAt).nanoseconds) / 1e9 * self.rate)
    }

    /// Takes `amount` from the bucket if it holds that much.
    mutating func take(_ amount: Double, now: NIODeadline) -> Bool {
        self.refill(to: now)
        guard self.budget >= amount else { return false }
        self.budget -= amount
        return true
    }

    /// Takes `amount` whether or not the bucket holds it, going into debt if not.
    /// - Returns: how long until the debt is paid back by the refill (nil if there is none):
    ///   what a reader that paces its sender waits before it takes anything more.
    mutating func charge(_ amount: Double, now: NIODeadline) -> TimeAmount? {
        self.refill(to: now)
        self.budget -= amount
        guard self.budget < 0 else { return nil }
        return .nanoseconds(Int64((-self.budget / self.rate * 1e9).rounded(.up)))
    }

    /// Puts `amount` back (never more than `burst`): something taken that cost nothing after all.
    mutating func giveBack(_ amount: Double, now: NIODeadline) {
        self.refill(to: now)
        self.budget = min(self.burst, self.budget + amount)
    }

    private mutating func refill(to now: NIODeadline) {
        self.budget = self.available(at: now)
        self.refilledAt = max(self.refilledAt, now)
    }
}

extension RateBucket {
    /// A connection's frame allowance (`--max-message-rate`): one second's worth, at least one.
    static func frames(perSecond rate: Double, now: NIODeadline) -> RateBucket {
        RateBucket(rate: rate, burst: max(1, rate), now: now)
    }

    /// A connection's byte allowance (`--max-inbound-rate`): one second's worth, or one largest
    /// frame if that is more, so that a frame `--max-frame` allows always gets through.
    static func bytes(perSecond rate: Int, maxFrameBytes: Int, now: NIODeadline) -> RateBucket {
        RateBucket(rate: Double(rate), burst: Double(max(rate, Self.bytes(ofFrameBody: maxFrameBytes))), now: now)
    }

    /// What a frame with a body of `bodyBytes` costs a byte allowance: the body and its 4-byte
    /// length prefix.
    static func bytes(ofFrameBody bodyBytes: Int) -> Int { bodyBytes + 4 }
}
