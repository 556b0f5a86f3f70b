import Foundation
import MatchHostCore
import NIOConcurrencyHelpers

/// Where the native port reads the time of day: when tokens expire, when players were last
/// seen, when matches started and ended, when bans end. The system's clock, unless a test
/// moves it forward (``advance(by:)``) to see what a later time does, without waiting for it.
/// Timers (heartbeats, ticks, turn limits) run on the event loops' monotonic clock instead.
public final class WallClock: Sendable, Hashable {
    /// The system's clock.
    public static let system = WallClock()

    /// Milliseconds added to the system's clock.
    private let offset = NIOLockedValueBox<Int64>(0)

    /// A clock that reads the system's until it is moved.
    public init() {}

    /// The time now.
    public func now() -> UnixMillis {
        let system = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        return UnixMillis(milliseconds: system + self.offset.withLockedValue { $0 })
    }

    /// Moves this clock `duration` ahead of the system's (for tests; never ``system``, which
    /// every server in the process reads).
    public func advance(by duration: Duration) {
        precondition(self !== WallClock.system, "the system's clock is not moved")
        self.offset.withLockedValue { $0 = UnixMillis(milliseconds: $0).adding(duration).milliseconds }
    }

    /// Clocks are the same only if they are the same object.
    public static func == (lhs: WallClock, rhs: WallClock) -> Bool { lhs === rhs }

    /// By identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
