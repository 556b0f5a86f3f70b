import NIOCore

/// Whether the store is failing, as the operator should hear of it: once when it starts, at
/// most once per ``reportInterval`` while it lasts, and once when it ends. A full disk refuses
/// every move of every game, every login and every result; a log line for each would flood the
/// log (often on that same disk) and bury the one line that says what is wrong.
///
/// A pure state machine: ``WorldStore`` feeds it each call's outcome and logs what it returns.
/// Reads that succeed do not end an outage: a full disk still reads, so only a write that
/// succeeds shows that the store takes writes again.
struct StorageOutage {
    /// What to tell the operator.
    enum Report: Equatable {
        /// The store has just failed, after working: `error` is the first failure.
        case started(error: String)
        /// It is still failing: `failures` since the last report, for `duration` so far.
        case continuing(failures: Int, duration: TimeAmount, error: String)
        /// A write has just succeeded: the outage lasted `duration`, with `failures` in all.
        case ended(failures: Int, duration: TimeAmount)
    }

    /// How often, at most, an outage that goes on is reported again.
    static let reportInterval: TimeAmount = .seconds(10)

    /// When the outage began; `nil` while the store works.
    private(set) var failingSince: NIODeadline?
    private var lastReport = NIODeadline.uptimeNanoseconds(0)
    private var failuresInAll = 0
    private var failuresSinceReport = 0

    /// A call failed because of the store (not a refusal such as an unknown player).
    mutating func failed(_ error: String, at now: NIODeadline) -> Report? {
        self.failuresInAll += 1
        guard let since = self.failingSince else {
            self.failingSince = now
            self.lastReport = now
            self.failuresInAll = 1
            self.failuresSinceReport = 0
            return .started(error: error)
        }
        self.failuresSinceReport += 1
        guard now - self.lastReport >= Self.reportInterval else { return nil }
        defer {
            self.lastReport = now
            self.failuresSinceReport = 0
        }
        return .continuing(failures: self.failuresSinceReport, duration: now - since, error: error)
    }

    /// A write succeeded.
    mutating func wrote(at now: NIODeadline) -> Report? {
        guard let since = self.failingSince else { return nil }
        self.failingSince = nil
        return .ended(failures: self.failuresInAll, duration: now - since)
    }
}
