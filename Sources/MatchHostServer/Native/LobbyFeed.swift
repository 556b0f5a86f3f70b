import MatchHostCore
import MatchHostWire
import Metrics
import NIOCore

extension NativeLobbyEntry: LobbyEntry {}

/// The lobbies of the native port: each mode's listing, the sessions subscribed to it, and
/// the timer that publishes changes.
///
/// Changes are published on the loop's next turn after a quiet spell and at most once per
/// `interval` while they keep coming (``PublicationPacing``), and before every LIST_MATCHES and
/// SUBSCRIBE_LOBBY, so that those see the latest state. Each publication is encoded once per
/// lobby as one LOBBY_UPDATE and the same buffer handed to every subscriber.
///
/// A new subscriber's snapshot (every listed match as `added`) can be far larger than its
/// `--max-backlog`, so it goes out a page at a time, the next page only while the session's
/// unacknowledged bytes are under half its bound (``Snapshot``). Until it is complete, that
/// subscriber's publications leave out the matches its snapshot has still to send: those go
/// out as they are when their page does, or not at all if they ended.
final class LobbyFeed {
    /// Most changes in one LOBBY_UPDATE: 100 entries with the longest labels stay under 32 KiB.
    static let changesPerMessage = 100
    /// Most matches one LIST_MATCHES looks at: a filter few pass must not make one request
    /// walk a lobby of 100,000 matches on the world's loop.
    static let examinedPerPage = 1_000

    var interval: TimeAmount { self.pacing.interval }
    private let clock: any MatchClock
    private let current: (String, MatchID) -> NativeLobbyEntry?
    private var listings: [String: LobbyListing<NativeLobbyEntry>] = [:]
    private var subscribers: [String: [ObjectIdentifier: Session]] = [:]
    private var subscriptions: [ObjectIdentifier: Set<String>] = [:]
    private var timer: MatchTimer?
    /// The snapshots still being sent, by mode and subscriber.
    private var snapshots: [String: [ObjectIdentifier: Snapshot]] = [:]
    private var snapshotTimer: MatchTimer?
    private var pacing: PublicationPacing
    private let allocator = ByteBufferAllocator()
    private let updatesSent = Counter(label: "matchhost_lobby_updates_total")

    /// - Parameter current: a match's entry now, or nil if it is not listed (ended, private).
    init(
        clock: any MatchClock, interval: TimeAmount, current: @escaping (String, MatchID) -> NativeLobbyEntry?
    ) {
        self.clock = clock
        self.pacing = PublicationPacing(interval: interval)
        self.current = current
    }

    /// How many sessions follow `mode`'s lobby.
    func subscriberCount(_ mode: String) -> Int { self.subscribers[mode]?.count ?? 0 }

    /// Notes that a match of `mode` opened, changed or ended; subscribers hear of it at the next publication.
    func matchChanged(_ matchID: MatchID, mode: String) {
        self.listings[mode, default: LobbyListing()].markDirty(matchID)
        guard self.timer == nil else { return }
        // Even when due at once, a timer rather than a publication here: the other changes of
        // this turn (a join that also fills the match) go out in the same LOBBY_UPDATE.
        self.timer = self.clock.schedule(at: self.pacing.due(now: self.clock.now)) { [weak self] in
            guard let self else { return }
            self.timer = nil
            self.publish()
        }
    }

    /// Publishes every lobby's pending changes now.
    func publish() {
        guard self.listings.values.contains(where: \.hasChanges) else { return }
        self.pacing.published(at: self.clock.now)
        for mode in Array(self.listings.keys) where self.listings[mode]!.hasChanges {
            let changes = self.listings[mode]!.publish { self.current(mode, $0) }
            guard !changes.isEmpty, let audience = self.subscribers[mode], !audience.isEmpty else { continue }
            let wire = changes.map(Self.wire)
            guard let snapshots = self.snapshots[mode] else {
                self.send(wire, mode: mode, to: audience.values)
                continue
            }
            // Whoever has had every match these changes are about gets the shared encoding.
            var everything: [Session] = []
            everything.reserveCapacity(audience.count)
            for (key, session) in audience {
                guard let snapshot = snapshots[key] else {
                    everything.append(session)
                    continue
                }
                let seen = wire.filter { snapshot.hasSent($0.entry.matchID) }
                if seen.count == wire.count {
                    everything.append(session)
                } else if !seen.isEmpty {
                    self.send(seen, mode: mode, to: CollectionOfOne(session))
                }
            }
            self.send(wire, mode: mode, to: everything)
        }
    }

    /// One page of `query.mode`'s lobby, as of now.
    func page(_ query: NativeLobbyQuery) -> (entries: [NativeLobbyEntry], next: MatchID) {
        self.publish()
        let limit = query.limit == 0 ? 20 : min(Int(query.limit), 100)
        let needle = query.labelContains.lowercased()
        return (self.listings[query.mode] ?? LobbyListing()).page(after: query.after, limit: limit, examining: Self.examinedPerPage) { entry in
            (!query.joinableOnly || entry.joinable) && (needle.isEmpty || entry.label.lowercased().contains(needle))
        }
    }

    /// Subscribes `session` to `mode`'s lobby and sends it every listed match as `added`,
    /// after the LOBBY_SUBSCRIBED response that `respond` sends with their count, a page at a
    /// time as its backlog allows. A session follows a mode at most once (again: the entries
    /// are sent again), so what it follows is bounded by the server's modes.
    func subscribe(_ session: Session, to mode: String, respond: (UInt32) -> Void) {
        let key = ObjectIdentifier(session)
        self.publish()
        self.subscriptions[key, default: []].insert(mode)
        self.subscribers[mode, default: [:]][key] = session
        self.forgetSnapshot(key, mode: mode)
        respond(UInt32(self.listings[mode]?.count ?? 0))
        guard let last = self.listings[mode]?.lastID else { return }
        var snapshot = Snapshot(session: session, sentThrough: 0, last: last)
        if !self.advance(&snapshot, mode: mode) {
            self.snapshots[mode, default: [:]][key] = snapshot
            self.scheduleSnapshots()
        }
    }

    /// Stops `mode`'s updates to `session`.
    func unsubscribe(_ session: Session, from mode: String) {
        let key = ObjectIdentifier(session)
        self.subscriptions[key]?.remove(mode)
        if self.subscriptions[key]?.isEmpty == true { self.subscriptions[key] = nil }
        self.subscribers[mode]?[key] = nil
        self.forgetSnapshot(key, mode: mode)
    }

    /// Forgets every subscription of an ended session.
    func sessionEnded(_ session: Session) {
        let key = ObjectIdentifier(session)
        for mode in self.subscriptions.removeValue(forKey: key) ?? [] {
            self.subscribers[mode]?[key] = nil
            self.forgetSnapshot(key, mode: mode)
        }
    }

    /// A subscriber's snapshot being sent: the matches listed when it subscribed, up to
    /// `last`, in id order; those up to `sentThrough` have gone out.
    private struct Snapshot {
        let session: Session
        var sentThrough: MatchID
        let last: MatchID

        /// Whether the subscriber has had `matchID`'s `added` (or never will from the
        /// snapshot: it opened after the subscription), so that its changes go to it live.
        func hasSent(_ matchID: MatchID) -> Bool { matchID <= self.sentThrough || matchID > self.last }
    }

    /// Sends `snapshot`'s next pages while its session's backlog is under half its bound, each
    /// page as many entries (up to 100, at least one) as fit in what is left of that half: the
    /// session keeps the other half for its matches, however small `--max-backlog` is.
    /// - Returns: whether the snapshot is complete.
    private func advance(_ snapshot: inout Snapshot, mode: String) -> Bool {
        let session = snapshot.session
        guard let listing = self.listings[mode] else { return true }
        while session.isTakingMessages {
            let room = session.outbox.maximumBytes / 2 - session.outbox.chargedBytes
            guard room > 0 else { return false }
            var page = listing.entries(after: snapshot.sentThrough, through: snapshot.last, limit: Self.changesPerMessage)
                .map { NativeLobbyChange(.added, $0) }
            guard !page.isEmpty else { return true }
            var size = Session.backlogChargePerMessage + NativeLobbyChange.updateHeaderSize(mode: mode)
            let fitting = page.firstIndex { change in
                size += change.encodedSize
                return size > room
            }
            if let fitting {
                // Not even one entry fits: wait for acknowledgements, unless nothing is
                // waiting for them (then one entry goes, or the snapshot never would).
                if fitting == 0, session.outbox.chargedBytes > 0 { return false }
                page.removeSubrange(max(1, fitting)...)
            }
            let newest = page.last!.entry.matchID
            self.send(page, mode: mode, to: CollectionOfOne(session))
            snapshot.sentThrough = newest
            if newest >= snapshot.last { return true }
        }
        return true
    }

    /// Goes on with the unfinished snapshots every interval, as their subscribers acknowledge.
    private func scheduleSnapshots() {
        guard self.snapshotTimer == nil else { return }
        self.snapshotTimer = self.clock.schedule(at: self.clock.now + self.interval) { [weak self] in
            guard let self else { return }
            self.snapshotTimer = nil
            for mode in Array(self.snapshots.keys) {
                for (key, var snapshot) in self.snapshots[mode] ?? [:] {
                    let complete = self.advance(&snapshot, mode: mode)
                    // Written back only if still there: sending never ends a session at once
                    // today, but a subscription forgotten meanwhile must stay forgotten.
                    guard self.snapshots[mode]?[key] != nil else { continue }
                    self.snapshots[mode]?[key] = complete ? nil : snapshot
                }
                if self.snapshots[mode]?.isEmpty == true { self.snapshots[mode] = nil }
            }
            if !self.snapshots.isEmpty { self.scheduleSnapshots() }
        }
    }

    private func forgetSnapshot(_ key: ObjectIdentifier, mode: String) {
        self.snapshots[mode]?[key] = nil
        if self.snapshots[mode]?.isEmpty == true { self.snapshots[mode] = nil }
    }

    private func send(_ changes: [NativeLobbyChange], mode: String, to audience: some Collection<Session>) {
        guard !audience.isEmpty else { return }
        var start = 0
        while start < changes.count {
            let end = min(start + Self.changesPerMessage, changes.count)
            let message = NativeServerMessage.lobbyUpdate(mode: mode, changes: Array(changes[start..<end]))
                .encoded(allocator: self.allocator)
            for session in audience { session.sendReliable(message) }
            self.updatesSent.increment(by: audience.count)
            start = end
        }
    }

    private static func wire(_ change: LobbyListing<NativeLobbyEntry>.Change) -> NativeLobbyChange {
        switch change {
        case .added(let entry): return NativeLobbyChange(.added, entry)
        case .changed(let entry): return NativeLobbyChange(.changed, entry)
        case .removed(let entry): return NativeLobbyChange(.removed, entry)
        }
    }
}
