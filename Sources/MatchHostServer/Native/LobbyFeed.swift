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
final class LobbyFeed {
    /// Most changes in one LOBBY_UPDATE: 100 entries with the longest labels stay under 32 KiB.
    static let changesPerMessage = 100

    var interval: TimeAmount { self.pacing.interval }
    private let clock: any MatchClock
    private let current: (String, MatchID) -> NativeLobbyEntry?
    private var listings: [String: LobbyListing<NativeLobbyEntry>] = [:]
    private var subscribers: [String: [ObjectIdentifier: Session]] = [:]
    private var subscriptions: [ObjectIdentifier: Set<String>] = [:]
    private var timer: MatchTimer?
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
            self.send(changes.map(Self.wire), mode: mode, to: audience.values)
        }
    }

    /// One page of `query.mode`'s lobby, as of now.
    func page(_ query: NativeLobbyQuery) -> (entries: [NativeLobbyEntry], next: MatchID) {
        self.publish()
        let limit = query.limit == 0 ? 20 : min(Int(query.limit), 100)
        let needle = query.labelContains.lowercased()
        return (self.listings[query.mode] ?? LobbyListing()).page(after: query.after, limit: limit) { entry in
            (!query.joinableOnly || entry.joinable) && (needle.isEmpty || entry.label.lowercased().contains(needle))
        }
    }

    /// Subscribes `session` to `mode`'s lobby and sends it every listed match as `added`,
    /// after the LOBBY_SUBSCRIBED response that `respond` sends with their count. A session
    /// follows a mode at most once (again: the entries are sent again), so what it follows is
    /// bounded by the server's modes.
    func subscribe(_ session: Session, to mode: String, respond: (UInt32) -> Void) {
        let key = ObjectIdentifier(session)
        self.publish()
        let entries = self.listings[mode]?.entries ?? []
        self.subscriptions[key, default: []].insert(mode)
        self.subscribers[mode, default: [:]][key] = session
        respond(UInt32(entries.count))
        if !entries.isEmpty {
            self.send(entries.map { NativeLobbyChange(.added, $0) }, mode: mode, to: CollectionOfOne(session))
        }
    }

    /// Stops `mode`'s updates to `session`.
    func unsubscribe(_ session: Session, from mode: String) {
        let key = ObjectIdentifier(session)
        self.subscriptions[key]?.remove(mode)
        if self.subscriptions[key]?.isEmpty == true { self.subscriptions[key] = nil }
        self.subscribers[mode]?[key] = nil
    }

    /// Forgets every subscription of an ended session.
    func sessionEnded(_ session: Session) {
        let key = ObjectIdentifier(session)
        for mode in self.subscriptions.removeValue(forKey: key) ?? [] {
            self.subscribers[mode]?[key] = nil
        }
    }

    private func send(_ changes: [NativeLobbyChange], mode: String, to audience: some Collection<Session>) {
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
