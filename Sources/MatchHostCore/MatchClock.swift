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

/// The production clock: the event loop's monotonic time, and one timer queue for every match
/// on the loop.
///
/// Every timer of the loop's matches (ticks, grace periods, turn timers) waits in one heap
/// behind a single scheduled task, rather than one loop task each, for one reason: an
/// overloaded loop must still read its sockets. NIO runs due tasks until none is due before it
/// polls again, so when the matches' ticks take longer than a tick interval, per-match tasks are
/// always due and the loop never reads (players time out while their messages wait unread).
/// This queue runs due timers for at most ``batchBudget`` and, if any is still due, hands the
/// rest to `yieldToIO`, which must run it only after the loop has been through its sockets.
public final class EventLoopClock: MatchClock {
    /// The loop the matches live on; every call must be made on it.
    public let eventLoop: any EventLoop
    /// The longest the clock runs due timers before it lets the loop poll its sockets.
    public let batchBudget: TimeAmount

    private let yieldToIO: (@escaping () -> Void) -> Void
    private var heap = TimerHeap()
    private var bodies: [UInt64: () -> Void] = [:]
    private var nextSequence: UInt64 = 0
    private var armed: (deadline: NIODeadline, task: Scheduled<Void>)?
    private var isRunning = false
    private var isYielding = false

    /// Creates a clock on `eventLoop`.
    /// - Parameters:
    ///   - batchBudget: how long one batch of due timers may run before sockets get a turn.
    ///   - yieldToIO: runs its argument on the loop after the loop's next poll of its sockets.
    ///     The default waits a millisecond, which lets the loop poll unless other tasks keep it
    ///     busy that long; the server passes one that is woken by the poll itself.
    public init(
        eventLoop: any EventLoop, batchBudget: TimeAmount = .milliseconds(4),
        yieldToIO: ((@escaping () -> Void) -> Void)? = nil
    ) {
        self.eventLoop = eventLoop
        self.batchBudget = batchBudget
        self.yieldToIO =
            yieldToIO ?? { body in
                eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1), body)
            }
    }

    /// The loop's monotonic now (an embedded loop's own time in tests).
    public var now: NIODeadline { self.eventLoop.now }

    /// The number of timers waiting to fire.
    public var pendingCount: Int { self.bodies.count }

    /// Queues `body` for `deadline`; must be called on the loop.
    public func schedule(at deadline: NIODeadline, _ body: @escaping () -> Void) -> MatchTimer {
        let sequence = self.nextSequence
        self.nextSequence &+= 1
        self.bodies[sequence] = body
        self.heap.push(TimerHeap.Entry(deadline: deadline, sequence: sequence))
        if !self.isRunning, !self.isYielding { self.arm(for: deadline) }
        return MatchTimer { [weak self] in self?.cancel(sequence) }
    }

    private func cancel(_ sequence: UInt64) {
        guard self.bodies.removeValue(forKey: sequence) != nil else { return }
        // Cancelled entries leave the heap when they reach its top; rebuild it when they
        // outnumber the live ones, so cancel-heavy timers (turn timers) cannot grow it.
        if self.heap.count > 64, self.heap.count > 2 * self.bodies.count {
            self.heap.removeAll { self.bodies[$0.sequence] == nil }
        }
    }

    private func arm(for deadline: NIODeadline) {
        if let armed = self.armed {
            guard deadline < armed.deadline else { return }
            armed.task.cancel()
        }
        let task = self.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            // A cancelled task can still run if the loop had already dequeued it; it must not
            // forget the task that replaced it.
            guard let self, self.armed?.deadline == deadline else { return }
            self.armed = nil
            self.runDue()
        }
        self.armed = (deadline, task)
    }

    /// The earliest live entry, dropping cancelled entries on the way.
    private func nextTop() -> TimerHeap.Entry? {
        while let top = self.heap.top {
            if self.bodies[top.sequence] != nil { return top }
            self.heap.pop()
        }
        return nil
    }

    /// Runs the timers that are due and were queued before the batch began, for at most the
    /// budget; whatever they queue that is already due waits for the next batch, after a poll.
    private func runDue() {
        self.isRunning = true
        let start = self.eventLoop.now
        let batchEnd = self.nextSequence
        var now = start
        while let top = self.nextTop(), top.deadline <= now, top.sequence < batchEnd {
            self.heap.pop()
            if let body = self.bodies.removeValue(forKey: top.sequence) { body() }
            now = self.eventLoop.now
            if now - start >= self.batchBudget { break }
        }
        self.isRunning = false
        guard let next = self.nextTop()?.deadline else { return }
        if next > now {
            self.arm(for: next)
        } else {
            self.isYielding = true
            self.yieldToIO { [weak self] in
                guard let self else { return }
                self.isYielding = false
                self.runDue()
            }
        }
    }
}

/// A binary min-heap of timer deadlines; equal deadlines leave in the order they came.
struct TimerHeap {
    struct Entry {
        var deadline: NIODeadline
        var sequence: UInt64

        func precedes(_ other: Entry) -> Bool {
            (self.deadline, self.sequence) < (other.deadline, other.sequence)
        }
    }

    private var entries: [Entry] = []

    var count: Int { self.entries.count }
    var top: Entry? { self.entries.first }

    mutating func push(_ entry: Entry) {
        self.entries.append(entry)
        var child = self.entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard self.entries[child].precedes(self.entries[parent]) else { break }
            self.entries.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func pop() -> Entry {
        let top = self.entries[0]
        let last = self.entries.removeLast()
        if !self.entries.isEmpty {
            self.entries[0] = last
            self.siftDown(from: 0)
        }
        return top
    }

    mutating func removeAll(where shouldRemove: (Entry) -> Bool) {
        self.entries.removeAll(where: shouldRemove)
        for index in stride(from: self.entries.count / 2 - 1, through: 0, by: -1) {
            self.siftDown(from: index)
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < self.entries.count else { return }
            var first = left
            if left + 1 < self.entries.count, self.entries[left + 1].precedes(self.entries[left]) { first = left + 1 }
            guard self.entries[first].precedes(self.entries[parent]) else { return }
            self.entries.swapAt(first, parent)
            parent = first
        }
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
