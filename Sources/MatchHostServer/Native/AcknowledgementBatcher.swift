import MatchHostCore
import NIOCore

/// Something that may owe its peer an `ACK`.
protocol DelayedAcknowledging: AnyObject {
    /// The delay is over: send the `ACK` if one is still owed (no RELIABLE frame carried it meanwhile).
    func acknowledgementDue()
}

/// Sends the server's standalone ACKs late and together, so most never need sending.
///
/// The server acknowledges in every RELIABLE frame it writes. A player who only sends (the
/// sender in a relay, say) gets none back for a while, so it is owed a standalone ACK; writing
/// that at once cost one extra write per message it sent. Instead a connection that owes one
/// registers here, and one timer per ``delay`` for the whole world lets each send its ACK only
/// if no RELIABLE frame carried it in the meantime. One timer per batch, never one per message.
final class AcknowledgementBatcher {
    /// How long an acknowledgement may wait.
    let delay: TimeAmount
    private let clock: any MatchClock
    private var pending: [any DelayedAcknowledging] = []
    private var spare: [any DelayedAcknowledging] = []
    private var timer: MatchTimer?

    init(clock: any MatchClock, delay: TimeAmount) {
        self.clock = clock
        self.delay = delay
    }

    /// Registers `connection` for the next batch; call once until its ``DelayedAcknowledging/acknowledgementDue()``.
    func enqueue(_ connection: any DelayedAcknowledging) {
        self.pending.append(connection)
        guard self.timer == nil else { return }
        self.timer = self.clock.schedule(after: self.delay) { [weak self] in self?.fire() }
    }

    private func fire() {
        self.timer = nil
        swap(&self.pending, &self.spare)
        for connection in self.spare {
            connection.acknowledgementDue()
        }
        self.spare.removeAll(keepingCapacity: true)
    }
}
