import NIOCore

/// Whether the store is failing, as the operator should hear of it: once when it starts, at
/// most once per ``reportInterval`` while it lasts, and once when it ends. A full disk refuses
/// every move of every game, every login and every result; a log line for each would flood the
/// log (often on that same disk) and bury the one line that says what is wrong.
///
/// A pure state machine: ``StorageOutageMonitor`` feeds it each call's outcome and logs what it
/// returns. Only a write that succeeds ends an outage (a full disk still reads). A write that
/// changed nothing succeeds on a full disk too, so an outage may seem to end and start again:
/// one that starts within ``reportInterval`` of the last reported end is not told until that
/// interval has passed (and its end not at all if it ends before), so however the outcomes
/// interleave there are at most two lines per interval.
struct StorageOutage {
    /// What to tell the operator.
    enum Report: Equatable {
        /// The store has failed, after working: `error` is the failure.
        case started(error: String)
        /// It is still failing: `failures` since the last report, for `duration` so far.
        case continuing(failures: Int, duration: TimeAmount, error: String)
        /// A write has just succeeded: the outage lasted `duration` up to that write, with
        /// `failures` in all.
        case ended(failures: Int, duration: TimeAmount)
    }

    /// How often, at most, an outage is reported while it lasts.
    static let reportInterval: TimeAmount = .seconds(10)

    /// When the outage began; `nil` while the store works.
    private(set) var failingSince: NIODeadline?
    /// Whether the operator has been told of the outage under way.
    private var isReported = false
    /// When the operator last heard of this outage, or, before that, of the end of the last one.
    private var lastReport: NIODeadline?
    private var failuresInAll = 0
    private var failuresSinceReport = 0

    /// A call failed because of the store (not a refusal such as an unknown player).
    mutating func failed(_ error: String, at now: NIODeadline) -> Report? {
        guard let since = self.failingSince else {
            self.failingSince = now
            self.failuresInAll = 1
            self.failuresSinceReport = 1
            if let last = self.lastReport, now - last < Self.reportInterval {
                self.isReported = false
                return nil
            }
            return self.report(.started(error: error), at: now)
        }
        self.failuresInAll += 1
        self.failuresSinceReport += 1
        guard let last = self.lastReport, now - last >= Self.reportInterval else { return nil }
        // An outage that started too soon after the last one ended is told now, as one.
        guard self.isReported else { return self.report(.started(error: error), at: now) }
        return self.report(.continuing(failures: self.failuresSinceReport, duration: now - since, error: error), at: now)
    }

    /// A write succeeded.
    mutating func wrote(at now: NIODeadline) -> Report? {
        guard let since = self.failingSince else { return nil }
        self.failingSince = nil
        guard self.isReported else { return nil }
        return self.report(.ended(failures: self.failuresInAll, duration: now - since), at: now)
    }

    private mutating func report(_ report: Report, at now: NIODeadline) -> Report {
        self.lastReport = now
        self.failuresSinceReport = 0
        self.isReported = true
        return report
    }
}
