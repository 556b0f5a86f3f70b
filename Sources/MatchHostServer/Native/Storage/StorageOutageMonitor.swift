import Logging
import MatchHostCore
import Metrics
import NIOConcurrencyHelpers
import NIOCore

/// One store's outages, told to the operator: every world writing to the store (the native
/// world and the Cat Race port's) hands it each call's outcome through its ``WorldStore``, so
/// that one full disk is one outage in the log, whichever world notices it and ends it.
///
/// Logs `error` "storage failing", `warning` "storage still failing" (with the count) and
/// `notice` "storage recovered" as ``StorageOutage`` says; counts each failure in
/// `matchhost_storage_failures_total`; and keeps the gauge `matchhost_storage_failing` at 1
/// while an outage lasts, 0 otherwise, for alerting.
final class StorageOutageMonitor: Sendable {
    private let outage = NIOLockedValueBox(StorageOutage())
    private let logger: Logger
    private let now: @Sendable () -> NIODeadline
    private let failures = Counter(label: "matchhost_storage_failures_total")
    private let failing = Gauge(label: "matchhost_storage_failing")

    /// - Parameters:
    ///   - logger: the server's logger.
    ///   - now: the monotonic clock outages are timed with.
    init(logger: Logger, now: @escaping @Sendable () -> NIODeadline = { .now() }) {
        self.logger = logger
        self.now = now
        self.failing.record(0)
    }

    /// Whether an outage lasts now.
    var isFailing: Bool {
        self.outage.withLockedValue { $0.failingSince != nil }
    }

    /// A call failed with `error`.
    func failed(_ error: any Error) {
        guard GameStoreError.isStorageFailure(error) else { return }
        self.failures.increment()
        let now = self.now()
        let report = self.outage.withLockedValue { outage in
            // Under the lock, so that the gauge follows the outage however calls interleave.
            self.failing.record(1)
            return outage.failed("\(error)", at: now)
        }
        self.log(report)
    }

    /// A call that writes succeeded. The usual case: one lock and one comparison.
    func wrote() {
        let report: StorageOutage.Report? = self.outage.withLockedValue { outage in
            guard outage.failingSince != nil else { return nil }
            self.failing.record(0)
            return outage.wrote(at: self.now())
        }
        self.log(report)
    }

    private func log(_ report: StorageOutage.Report?) {
        switch report {
        case nil:
            return
        case .started(let error):
            self.logger.error("storage failing: what needs it is refused until it recovers", metadata: ["error": "\(error)"])
        case .continuing(let failures, let duration, let error):
            self.logger.warning(
                "storage still failing", metadata: ["failures": "\(failures)", "for": "\(duration.secondsText)", "error": "\(error)"])
        case .ended(let failures, let duration):
            self.logger.notice(
                "storage recovered: a write succeeded", metadata: ["failures": "\(failures)", "after": "\(duration.secondsText)"])
        }
    }
}

extension TimeAmount {
    /// Seconds with one decimal, for logs: "12.5s".
    fileprivate var secondsText: String {
        let tenths = self.nanoseconds / 100_000_000
        return "\(tenths / 10).\(tenths % 10)s"
    }
}
