import Metrics
import NIOConcurrencyHelpers
import NIOCore

/// How many of something one network may do a minute. Of what fills the database, so that a
/// client cannot fill the disk by repeating it: new players (`--max-new-players-per-minute`:
/// invented device ids on the native port, tutorial player ids on the Cat Race port) and new
/// matches (`--max-new-matches-per-minute`: CREATE_MATCH, START_MATCH), one budget of each
/// for both ports: the server makes one and both worlds ask it. And of guesses at secrets
/// (`--max-failed-joins-per-minute`: invite codes and party ids that name nothing). And of
/// player values' bytes written (`--max-value-bytes-per-minute`), as each new player may
/// store up to `--max-keys-per-player` full values. Each refusal is counted in the budget's
/// metric.
final class NetworkBudget: Sendable {
    private let buckets: NIOLockedValueBox<NetworkBuckets>
    private let refused: Counter

    /// - Parameters:
    ///   - perMinute: how many per source network a minute, and at once.
    ///   - refusals: the label of the counter of refusals.
    init(perMinute: Int, refusals: String) {
        self.buckets = NIOLockedValueBox(NetworkBuckets(perMinute: perMinute))
        self.refused = Counter(label: refusals)
    }

    /// The budget of new players, `--max-new-players-per-minute`.
    static func newPlayers(perMinute: Int) -> NetworkBudget {
        NetworkBudget(perMinute: perMinute, refusals: "matchhost_registrations_refused_total")
    }

    /// The budget of failed guesses at invite codes and party ids, `--max-failed-joins-per-minute`.
    static func failedJoins(perMinute: Int) -> NetworkBudget {
        NetworkBudget(perMinute: perMinute, refusals: "matchhost_join_guesses_refused_total")
    }

    /// The budget of bytes of player values written, `--max-value-bytes-per-minute`.
    static func valueWrites(bytesPerMinute: Int) -> NetworkBudget {
        NetworkBudget(perMinute: bytesPerMinute, refusals: "matchhost_value_writes_refused_total")
    }

    /// The budget of new matches, `--max-new-matches-per-minute`.
    static func newMatches(perMinute: Int) -> NetworkBudget {
        NetworkBudget(perMinute: perMinute, refusals: "matchhost_match_creations_refused_total")
    }

    /// Whether `source` may make one more (of `cost` units) at `now`; if so, it is counted,
    /// and if not, the refusal.
    func admit(_ source: String, now: NIODeadline, cost: Int = 1) -> Bool {
        let admitted = self.buckets.withLockedValue { $0.admit(source, now: now, cost: cost) }
        if !admitted { self.refused.increment() }
        return admitted
    }

    /// Counts one for `source` at `now`, after ``allows(_:now:)`` said it has one left (a
    /// refused request that costs an allowance: a wrong guess). No refusal is counted.
    func charge(_ source: String, now: NIODeadline) {
        _ = self.buckets.withLockedValue { $0.admit(source, now: now) }
    }

    /// Counts a refusal made after ``allows(_:now:)`` said no.
    func countRefusal() {
        self.refused.increment()
    }

    /// Whether `source` has one left at `now`; nothing is counted.
    func allows(_ source: String, now: NIODeadline) -> Bool {
        self.buckets.withLockedValue { $0.allows(source, now: now) }
    }

    /// Gives back one ``admit(_:now:)`` counted for `source` that made nothing after all (a
    /// registration whose identity turned out to be stored already).
    func refund(_ source: String, now: NIODeadline) {
        self.buckets.withLockedValue { $0.refund(source, now: now) }
    }

    /// How many sources are tracked now.
    var trackedSources: Int { self.buckets.withLockedValue { $0.trackedSources } }

    /// The network a connection comes from, as registrations are counted: an IPv4 address
    /// (also when it arrives IPv4-mapped on an IPv6 socket), an IPv6 /64 (one subscriber's
    /// network: a host can take any address in it), or one key for Unix sockets.
    static func source(of address: SocketAddress?) -> String {
        switch address {
        case .v4?:
            return address?.ipAddress ?? "unknown"
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return bytes[12...].map { String($0) }.joined(separator: ".")
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        case .unixDomainSocket?:
            return "unix"
        case nil:
            return "unknown"
        }
    }
}

/// The token buckets behind ``NetworkBudget``: one per source network, `perMinute` at
/// once, refilled at `perMinute` a minute.
///
/// Only sources that registered within the last minute are kept: a bucket that has refilled
/// is dropped at the next sweep, so memory follows the registration rate, not history.
struct NetworkBuckets {
    /// How many per source network a minute, and at once.
    let perMinute: Int
    private var buckets: [String: RateBucket] = [:]
    private var sweepAbove = 1024

    init(perMinute: Int) {
        precondition(perMinute >= 1, "at least one registration a minute")
        self.perMinute = perMinute
    }

    /// How many sources are tracked now.
    var trackedSources: Int { self.buckets.count }

    /// Whether `source` may make one more (of `cost` units) at `now`; if so, it is counted.
    mutating func admit(_ source: String, now: NIODeadline, cost: Int = 1) -> Bool {
        var bucket = self.buckets[source] ?? self.fullBucket(at: now)
        let admitted = bucket.take(Double(cost), now: now)
        self.buckets[source] = bucket
        if admitted, self.buckets.count > self.sweepAbove { self.sweep(now: now) }
        return admitted
    }

    /// Whether `source` has one left at `now`, without counting it.
    func allows(_ source: String, now: NIODeadline) -> Bool {
        (self.buckets[source]?.available(at: now) ?? 1) >= 1
    }

    /// Gives `source` back one (never more than a full bucket).
    mutating func refund(_ source: String, now: NIODeadline) {
        self.buckets[source]?.giveBack(1, now: now)
    }

    private func fullBucket(at now: NIODeadline) -> RateBucket {
        RateBucket(rate: Double(self.perMinute) / 60, burst: Double(self.perMinute), now: now)
    }

    /// Drops the buckets that have refilled by `now` (their sources are as if never seen).
    private mutating func sweep(now: NIODeadline) {
        self.buckets = self.buckets.filter { _, bucket in bucket.available(at: now) < bucket.burst }
        self.sweepAbove = max(1024, self.buckets.count * 2)
    }
}
