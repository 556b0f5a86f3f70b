import NIOCore

/// Something with writes to flush once per event-loop pass.
protocol CoalescedFlushing: AnyObject {
    /// Flushes what was written since the last flush (nothing, if there is nothing).
    func flushCoalesced()
    /// Its flush waits in the backlog: a write from now on registers it again, so that the
    /// write (a match's tick, say) goes out in its own pass instead of waiting there too.
    func flushDeferred()
}

/// Flushes connections once per event-loop pass instead of once per message, and never for
/// so long that the loop's sockets and timers wait.
///
/// A match writes an event to many connections, and one connection may receive many events
/// while the loop works through a batch of readable sockets. Each connection registers here
/// on its first unflushed write; one task, queued behind the batch, flushes them all, so that
/// everything a player receives in one pass goes out in one syscall. One closure is queued per
/// pass, never one per message.
///
/// A flush is a `write` syscall, several microseconds each: one lobby publication to 10,000
/// subscribers is 10,000 of them, which in one go would hold every match on the loop (their
/// ticks, their players' input) for a fifth of a second. So a pass flushes for at most
/// ``budget``; the connections it did not reach wait in a backlog that is flushed, a budget at
/// a time, each after the loop's next poll (`yieldToIO`), so that reads and due timers run in
/// between. The connections of later passes go first, each pass up to its own budget: the
/// backlog is a big fan-out finishing, and a match's next tick should not wait for it. That
/// holds for a connection waiting in the backlog too (a lobby subscriber playing a match): it
/// is told so (``CoalescedFlushing/flushDeferred()``) and registers again when written to; its
/// turn in the backlog then finds its data gone, or flushes what came since.
final class FlushCoalescer {
    /// The longest one pass's flushes, or one backlog turn's, may run before the loop polls.
    let budget: TimeAmount
    private let eventLoop: any EventLoop
    private let yieldToIO: (@escaping () -> Void) -> Void
    private var pending: [any CoalescedFlushing] = []
    private var spare: [any CoalescedFlushing] = []
    /// Registered in passes that ran out of budget, oldest first.
    private var backlog = CircularBuffer<any CoalescedFlushing>()
    private var isScheduled = false
    private var isYielding = false

    /// Creates the coalescer of the connections on `eventLoop`.
    /// - Parameters:
    ///   - budget: how long one pass's flushes may run before the rest waits for a poll
    ///     (``ServerConfiguration/flushBudget``); the same 4 ms by default as
    ///     ``EventLoopClock``'s batches of timers, so a tick waits for at most about that much
    ///     of a big fan-out. Zero flushes one connection a pass.
    ///   - yieldToIO: runs its argument on the loop after the loop's next poll of its sockets
    ///     (the server's ``IOPassDoorbell``). The default waits a millisecond.
    init(eventLoop: any EventLoop, budget: TimeAmount = .milliseconds(4), yieldToIO: ((@escaping () -> Void) -> Void)? = nil) {
        self.eventLoop = eventLoop
        self.budget = budget
        self.yieldToIO =
            yieldToIO ?? { body in
                eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1), body)
            }
    }

    /// Connections waiting for a turn after a poll.
    var backlogCount: Int { self.backlog.count }

    /// Registers `connection` for the flush at the end of this pass. Call once per pass
    /// per connection (connections keep their own "flush pending" flag, which also keeps one
    /// waiting in the backlog from registering again).
    func enqueue(_ connection: any CoalescedFlushing) {
        self.pending.append(connection)
        guard !self.isScheduled else { return }
        self.isScheduled = true
        self.eventLoop.assumeIsolated().execute { self.flushPass() }
    }

    private func flushPass() {
        self.isScheduled = false
        // Swap buffers so connections enqueued by a flush's side effects land in the next pass,
        // and neither array is reallocated in steady state.
        swap(&self.pending, &self.spare)
        let start = self.eventLoop.now
        var flushed = 0
        while flushed < self.spare.count {
            self.spare[flushed].flushCoalesced()
            flushed += 1
            if self.eventLoop.now - start >= self.budget { break }
        }
        if flushed < self.spare.count {
            for connection in self.spare[flushed...] {
                connection.flushDeferred()
                self.backlog.append(connection)
            }
        }
        self.spare.removeAll(keepingCapacity: true)
        self.yieldIfBacklogged()
    }

    private func flushBacklog() {
        self.isYielding = false
        let start = self.eventLoop.now
        while let connection = self.backlog.popFirst() {
            connection.flushCoalesced()
            if self.eventLoop.now - start >= self.budget { break }
        }
        self.yieldIfBacklogged()
    }

    private func yieldIfBacklogged() {
        guard !self.backlog.isEmpty, !self.isYielding else { return }
        self.isYielding = true
        self.yieldToIO { self.flushBacklog() }
    }
}
