import NIOCore

/// `--slow-consumer-grace`: when a connection's outbound buffer passes `--max-outbound` (the
/// channel turns unwritable), it has this long to drain to half of it before it is closed as
/// a slow consumer.
///
/// Passing the mark alone is no sign of a slow client: one event-loop pass may hand a
/// connection more than the mark at once (a resumed session's backlog, a lobby snapshot, a
/// burst of relayed data) before a single byte could be sent. What it may hold meanwhile is
/// bounded by ``hardLimit`` (``ConnectionLimits/outboundHardLimit``), set above what a client
/// that reads can have waiting: past it the connection is closed at once.
///
/// Loop-confined, owned by one connection's handler. A class, not a struct: `slow` may close
/// the connection, which may call back into the watch while it is still deciding.
final class SlowConsumerWatch {
    /// How long the buffer may stay over the mark.
    let grace: TimeAmount
    /// The most bytes that may wait in the channel, whatever the grace.
    let hardLimit: Int
    private var deadline: Scheduled<Void>?

    init(grace: TimeAmount, hardLimit: Int) {
        self.grace = grace
        self.hardLimit = hardLimit
    }

    /// Whether writing `bytes` more to `channel` would take what waits in it past
    /// ``hardLimit`` raised by `allowance` (what a client that reads may have waiting beyond
    /// it). Looked at only while the channel is unwritable, when it could be near: a flush of
    /// a channel under the mark costs no more than the writability check.
    func passesHardLimit(of channel: any Channel, writing bytes: Int, allowance: @autoclosure () -> Int = 0) -> Bool {
        guard !channel.isWritable, let waiting = try? channel.syncOptions?.getOption(.bufferedWritableBytes) else { return false }
        return waiting + bytes > self.hardLimit + allowance()
    }

    /// Call from `channelWritabilityChanged`. Unwritable: `slow` runs on the channel's loop
    /// if it is still so after ``grace`` (at once for a grace of zero). Writable again: that
    /// is called off.
    func writabilityChanged(of channel: any Channel, slow: @escaping () -> Void) {
        guard !channel.isWritable else { return self.stop() }
        guard self.deadline == nil else { return }
        guard self.grace > .zero else { return slow() }
        let slow = NIOLoopBound(slow, eventLoop: channel.eventLoop)
        self.deadline = channel.eventLoop.scheduleTask(in: self.grace) {
            slow.value()
        }
    }

    /// Calls off a pending close (the connection closed, or drained).
    func stop() {
        self.deadline?.cancel()
        self.deadline = nil
    }
}
