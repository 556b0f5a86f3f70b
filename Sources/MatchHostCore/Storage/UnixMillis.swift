/// A point in wall-clock time: milliseconds since 1970-01-01 00:00:00 UTC.
///
/// Storage keeps time as a plain integer so that the core needs no Foundation and both
/// implementations store and compare exactly the same value.
public struct UnixMillis: Sendable, Hashable, Comparable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var milliseconds: Int64

    /// A time `milliseconds` after the Unix epoch.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// A time written as a literal number of milliseconds.
    public init(integerLiteral milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// Earlier times sort first.
    public static func < (lhs: UnixMillis, rhs: UnixMillis) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    /// The number of milliseconds, for logs.
    public var description: String { "\(self.milliseconds)ms" }

    /// `duration` later (or earlier), saturating at the ends of the range instead of trapping.
    public func adding(_ duration: Duration) -> UnixMillis {
        let (seconds, attoseconds) = duration.components
        let (whole, overflowed) = seconds.multipliedReportingOverflow(by: 1000)
        let (addend, overflowedAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflowed || overflowedAgain { return UnixMillis(milliseconds: seconds < 0 ? .min : .max) }
        let (sum, overflowedSum) = self.milliseconds.addingReportingOverflow(addend)
        if overflowedSum { return UnixMillis(milliseconds: addend < 0 ? .min : .max) }
        return UnixMillis(milliseconds: sum)
    }
}
