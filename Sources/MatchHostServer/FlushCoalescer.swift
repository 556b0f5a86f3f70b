import NIOCore

/// Something with writes to flush once per event-loop pass.
protocol CoalescedFlushing: AnyObject {
    /// Flushes what was written since the last flush.
    func flushCoalesced()
}

/// Flushes connections once per event-loop pass instead of once per message.
///
/// A match writes an event to many connections, and one connection may receive many events
/// while the loop works through a batch of readable sockets. Each connection registers here
/// on its first unflushed write; one task, queued behind the batch, flushes them all, so that
/// everything a player receives in one pass goes out in one syscall. One closure is queued per
/// pass, never one per message.
final class FlushCoalescer {
    private let eventLoop: any EventLoop
    private var pending: [any CoalescedFlushing] = []
    private var spare: [any CoalescedFlushing] = []
    private var isScheduled = false

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Registers `connection` for the flush at the end of this pass. Call once per pass
    /// per connection (connections keep their own "flush pending" flag).
    func enqueue(_ connection: any CoalescedFlushing) {
        self.pending.append(connection)
        guard !self.isScheduled else { return }
        self.isScheduled = true
        self.eventLoop.assumeIsolated().execute { self.flushAll() }
    }

    private func flushAll() {
        self.isScheduled = false
        // Swap buffers so connections enqueued by a flush's side effects land in the next pass,
        // and neither array is reallocated in steady state.
        swap(&self.pending, &self.spare)
        for connection in self.spare {
            connection.flushCoalesced()
        }
        self.spare.removeAll(keepingCapacity: true)
    }
}
