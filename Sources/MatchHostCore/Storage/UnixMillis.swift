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
}
