import NIOCore

/// The time source and timer service of a match.
///
/// A match reads the time and schedules its ticks, grace periods and turn timers only
/// through its clock, so that tests drive time with ``ManualClock`` in microseconds
/// instead of sleeping. Like the match, a clock is used only on the match's event loop.
public protocol MatchClock: AnyObject {
    /// The current time.
    var now: NIODeadline { get }
    /// Runs `body` once at `deadline` (at once, on the next turn, if it has passed).
    func schedule(at deadline: NIODeadline, _ body: @escaping () -> Void) -> MatchTimer
}

extension MatchClock {
    /// Runs `body` once after `delay`.
    public func schedule(after delay: TimeAmount, _ body: @escaping () -> Void) -> MatchTimer {
        self.schedule(at: self.now + delay, body)
    }
}

/// A timer handed out by a ``MatchClock``; cancelling a fired or cancelled timer does nothing.
public struct MatchTimer {
    private let cancelAction: () -> Void

    /// Creates a timer whose cancellation runs `cancel`.
    public init(cancel: @escaping () -> Void) {
        self.cancelAction = cancel
    }

    /// Stops the timer from firing.
    public func cancel() {
        self.cancelAction()
    }
}

/// The production clock: the event loop's monotonic time and scheduler.
public final class EventLoopClock: MatchClock {
    /// The loop the match lives on; every call must be made on it.
    public let eventLoop: any EventLoop

    /// Creates a clock on `eventLoop`.
    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// The loop's monotonic now.
    public var now: NIODeadline { .now() }

    /// Schedules on the event loop without requiring a Sendable closure: the match is loop-confined.
    public func schedule(at deadline: NIODeadline, _ body: @escaping () -> Void) -> MatchTimer {
        let scheduled = self.eventLoop.assumeIsolated().scheduleTask(deadline: deadline, body)
        return MatchTimer { scheduled.cancel() }
    }
}

/// A clock that only moves when told to: for tests of grace periods, ticks and rate limits.
///
/// ```swift
/// let clock = ManualClock()
/// clock.advance(by: .seconds(30))   // fires every timer due by then, in deadline order
/// ```
public final class ManualClock: MatchClock {
    private struct Pending {
        var id: Int
        var deadline: NIODeadline
        var body: () -> Void
    }

    /// The current (manual) time.
    public private(set) var now: NIODeadline
    private var pending: [Pending] = []
    private var nextID = 0

    /// Creates a clock reading `start`.
    public init(start: NIODeadline = .uptimeNanoseconds(1_000_000_000)) {
        self.now = start
    }

    /// The number of timers waiting to fire.
    public var pendingCount: Int { self.pending.count }

    /// Records a timer; it fires during a later ``advance(by:)``.
    public func schedule(at deadline: NIODeadline, _ body: @escaping () -> Void) -> MatchTimer {
        let id = self.nextID
        self.nextID += 1
        self.pending.append(Pending(id: id, deadline: deadline, body: body))
        return MatchTimer { [weak self] in self?.pending.removeAll { $0.id == id } }
    }

    /// Moves time forward, firing each due timer at its own deadline, earliest first
    /// (timers with equal deadlines in the order they were scheduled), including timers
    /// that the fired ones schedule.
    public func advance(by amount: TimeAmount) {
        let target = self.now + amount
        while let next = self.pending.indices
            .filter({ self.pending[$0].deadline <= target })
            .min(by: { (self.pending[$0].deadline, self.pending[$0].id) < (self.pending[$1].deadline, self.pending[$1].id) })
        {
            let timer = self.pending.remove(at: next)
            self.now = max(self.now, timer.deadline)
            timer.body()
        }
        self.now = target
    }
}
