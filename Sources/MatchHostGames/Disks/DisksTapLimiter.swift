import NIOCore

/// At most `rate` taps in any second per player, by the generic cell rate algorithm: one
/// deadline per player, exact integer arithmetic, and a full second's worth of taps may come
/// at once (a burst), after which taps are let through one every 1/`rate` seconds.
struct DisksTapLimiter {
    /// Nanoseconds each tap uses up.
    private let spacing: Int64
    /// How far ahead of now the schedule may run: the burst.
    private let tolerance: Int64
    /// When the schedule says the next tap is due.
    private var dueAt: NIODeadline = .uptimeNanoseconds(0)

    /// Creates a limiter letting `rate` taps through per second.
    init(rate: Int) {
        precondition(rate > 0, "a tap rate must be positive")
        self.spacing = 1_000_000_000 / Int64(rate)
        self.tolerance = self.spacing * Int64(rate - 1)
    }

    /// Whether a tap at `now` is allowed; an allowed tap is counted.
    mutating func allow(at now: NIODeadline) -> Bool {
        let due = max(self.dueAt, now)
        guard (due - now).nanoseconds <= self.tolerance else { return false }
        self.dueAt = due + .nanoseconds(self.spacing)
        return true
    }
}
