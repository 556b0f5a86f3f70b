import MatchHostWire
import NIOCore

/// The four changes the driver makes to each match, in order, and how a subscriber tells
/// them apart in a LOBBY_UPDATE.
enum LobbyBenchStep: Int, Sendable, CaseIterable {
    /// CREATE_MATCH by the host: `added`, 1 player.
    case created = 0
    /// JOIN_MATCH by the guest: `changed`, 2 players (full).
    case joined = 1
    /// LEAVE_MATCH by the guest: `changed`, 1 player.
    case guestLeft = 2
    /// LEAVE_MATCH by the host, which ends the match: `removed`.
    case ended = 3

    /// The step a lobby change shows, or nil if the driver never causes such a change.
    init?(_ change: NativeLobbyChange) {
        switch (change.kind, change.entry.players) {
        case (.added, 1): self = .created
        case (.changed, 2): self = .joined
        case (.changed, 1): self = .guestLeft
        case (.removed, _): self = .ended
        default: return nil
        }
    }

    /// One number for a change to one match, as the send-time tables key it.
    func key(matchID: UInt64) -> UInt64 { matchID << 2 | UInt64(self.rawValue) }
}

/// Counters of one event loop's subscribers.
struct LobbyBenchCounters: Sendable {
    /// The issue's bound on a change's delivery: 100 ms.
    static let lateThreshold: UInt64 = 100_000_000

    /// Change entries of changes the driver sent in the window (each counted once per subscriber).
    var delivered: UInt64 = 0
    /// Of those, entries that took longer than ``LobbyBenchCounters/lateThreshold``.
    var late: UInt64 = 0
    /// Change entries of changes sent before or after the window.
    var deliveredOutsideWindow: UInt64 = 0
    /// LOBBY_UPDATE messages received in the window.
    var updatesInWindow: UInt64 = 0
    /// Entries the driver cannot have caused (wrong mode, unexpected player count).
    var unexpected: UInt64 = 0
    /// Entries that arrived before the driver's request was known (counted again once resolved).
    var arrivedBeforeSendTime: UInt64 = 0
    /// Entries whose request time never became known (matches of an earlier run, say).
    var unattributed: UInt64 = 0
    /// Subscriptions acknowledged by LOBBY_SUBSCRIBED, and entries it said were listed then.
    var subscribed: UInt64 = 0
    var listedAtSubscribe: UInt64 = 0
    /// The subscribers' protocol counters.
    var client = NativeBenchClientCounters()

    mutating func add(_ other: LobbyBenchCounters) {
        self.delivered += other.delivered
        self.late += other.late
        self.deliveredOutsideWindow += other.deliveredOutsideWindow
        self.updatesInWindow += other.updatesInWindow
        self.unexpected += other.unexpected
        self.arrivedBeforeSendTime += other.arrivedBeforeSendTime
        self.unattributed += other.unattributed
        self.subscribed += other.subscribed
        self.listedAtSubscribe += other.listedAtSubscribe
        self.client.add(other.client)
    }
}

/// What one loop's subscribers measured.
struct LobbyBenchLoopResult: Sendable {
    var counters: LobbyBenchCounters
    var histogram: BenchLatencyHistogram
    /// For each change sent in the window: its request time and the first and last arrival here.
    var arrivals: [UInt64: LobbyBenchArrivals]
}

/// When one change reached its first and its last subscriber, and how many it reached.
struct LobbyBenchArrivals: Sendable {
    var sentAt: UInt64
    var first: UInt64
    var last: UInt64
    var count: UInt64 = 1

    mutating func merge(_ other: LobbyBenchArrivals) {
        self.first = min(self.first, other.first)
        self.last = max(self.last, other.last)
        self.count += other.count
    }
}

/// The subscribers of one event loop, the driver's send times as they are announced to this
/// loop, and the measurements. Loop-confined.
final class LobbyBenchLoop: NativeBenchOwner {
    let eventLoop: any EventLoop
    let settings: LobbyBenchSettings
    private(set) var peers: [NativeBenchPeer] = []
    /// Succeeded once every subscriber has its LOBBY_SUBSCRIBED.
    let allSubscribed: EventLoopPromise<Void>
    /// When the driver sent the request of each change (by ``LobbyBenchStep/key(matchID:)``).
    private var sendTimes: [UInt64: UInt64] = [:]
    /// Receive times of entries whose send time this loop has not heard yet.
    private var waiting: [UInt64: [UInt64]] = [:]
    private(set) var counters = LobbyBenchCounters()
    private var histogram = BenchLatencyHistogram()
    private var arrivals: [UInt64: LobbyBenchArrivals] = [:]
    private var window = BenchWindow()
    private var finished = false

    /// - Parameter subscriberNumbers: the run-wide numbers of the subscribers placed here.
    init(eventLoop: any EventLoop, settings: LobbyBenchSettings, subscriberNumbers: [Int]) {
        self.eventLoop = eventLoop
        self.settings = settings
        self.allSubscribed = eventLoop.makePromise(of: Void.self)
        self.peers = subscriberNumbers.map { number in
            NativeBenchPeer(
                seat: 0, seats: 1, deviceID: settings.subscriberDeviceID(number), gameID: settings.gameID, reliable: true,
                payloadSize: NativeBenchPayload.minimumSize, acknowledgeEveryRead: false, owner: self)
        }
        if self.peers.isEmpty { self.allSubscribed.succeed() }
    }

    /// Opens the measured window and starts the subscribers' held acknowledgements (200 ms, as
    /// the client library holds them).
    func start(window: BenchWindow) {
        self.window = window
        self.scheduleAcknowledgements(delay: 200_000_000)
    }

    private func scheduleAcknowledgements(delay: UInt64) {
        self.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay / 4))) {
            guard !self.finished else { return }
            let deadline = benchNow() &- delay
            for peer in self.peers { peer.acknowledgePending(receivedBefore: deadline) }
            self.scheduleAcknowledgements(delay: delay)
        }
    }

    /// The driver sent the request of change `key` at `sentAt`.
    func changeSent(_ key: UInt64, at sentAt: UInt64) {
        self.sendTimes[key] = sentAt
        guard let arrivals = self.waiting.removeValue(forKey: key) else { return }
        for now in arrivals { self.record(key, sentAt: sentAt, now: now) }
    }

    @inline(__always)
    private func record(_ key: UInt64, sentAt: UInt64, now: UInt64) {
        guard self.window.contains(sentAt) else {
            self.counters.deliveredOutsideWindow += 1
            return
        }
        self.counters.delivered += 1
        let latency = now &- sentAt
        if latency > LobbyBenchCounters.lateThreshold { self.counters.late += 1 }
        self.histogram.record(latency)
        if let index = self.arrivals.index(forKey: key) {
            self.arrivals.values[index].merge(LobbyBenchArrivals(sentAt: sentAt, first: now, last: now))
        } else {
            self.arrivals[key] = LobbyBenchArrivals(sentAt: sentAt, first: now, last: now)
        }
    }

    /// Stops the subscribers (GOODBYE) and hands back the measurements.
    func finish() -> LobbyBenchLoopResult {
        if !self.finished {
            self.finished = true
            self.counters.unattributed = UInt64(self.waiting.values.reduce(0) { $0 + $1.count })
            for peer in self.peers {
                self.counters.client.add(peer.counters)
                peer.goodbye()
            }
        }
        return LobbyBenchLoopResult(counters: self.counters, histogram: self.histogram, arrivals: self.arrivals)
    }

    func fail(_ error: BenchError) {
        self.allSubscribed.fail(error)
    }

    // MARK: NativeBenchOwner

    func peerAuthenticated(_ peer: NativeBenchPeer) {
        peer.request(.subscribeLobby(mode: self.settings.mode))
    }

    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>) {
        switch result {
        case .success(.lobbySubscribed(_, let count)):
            self.counters.subscribed += 1
            self.counters.listedAtSubscribe += UInt64(count)
            if self.counters.subscribed == UInt64(self.peers.count) { self.allSubscribed.succeed() }
        case .success(let other):
            peer.count(error: "unexpected response \(other)")
        case .failure(let error):
            self.allSubscribed.fail(BenchError("SUBSCRIBE_LOBBY of \(peer.deviceID) refused: \(error)"))
        }
    }

    func peer(_ peer: NativeBenchPeer, received message: NativeServerMessage, reliable: Bool, now: UInt64) {
        guard case .lobbyUpdate(let mode, let changes) = message else { return }
        guard mode == self.settings.mode else {
            self.counters.unexpected += UInt64(changes.count)
            return
        }
        if self.window.contains(now) { self.counters.updatesInWindow += 1 }
        for change in changes {
            guard let step = LobbyBenchStep(change) else {
                self.counters.unexpected += 1
                continue
            }
            let key = step.key(matchID: change.entry.matchID)
            if let sentAt = self.sendTimes[key] {
                self.record(key, sentAt: sentAt, now: now)
            } else {
                // The server answered before the driver's loop told this one: rare, resolved later.
                self.counters.arrivedBeforeSendTime += 1
                self.waiting[key, default: []].append(now)
            }
        }
    }

    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64) {}

    func peerCut(_ peer: NativeBenchPeer) {}

    func peerResumed(_ peer: NativeBenchPeer, now: UInt64) {}

    func peerLost(_ peer: NativeBenchPeer) {
        let errors = peer.counters.errors.keys.sorted().joined(separator: "; ")
        self.allSubscribed.fail(
            BenchError("subscriber \(peer.deviceID)'s connection closed before it subscribed\(errors.isEmpty ? "" : " (\(errors))")"))
    }
}
