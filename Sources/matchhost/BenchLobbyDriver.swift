import MatchHostWire
import NIOCore

/// One match the driver keeps changing, with its two sessions: the host creates it and, last,
/// leaves (which ends it); the guest joins and leaves in between. Each scheduled fire makes
/// the next of the four changes. Loop-confined.
final class LobbyBenchSlot: BenchPeriodicSender {
    let number: Int
    let host: NativeBenchPeer
    let guest: NativeBenchPeer
    unowned let driver: LobbyBenchDriver
    /// The step the next fire makes.
    var next = LobbyBenchStep.created
    var matchID: UInt64 = 0
    /// The request in flight, its step and when it was sent; the next change waits for its answer.
    var pending: (request: UInt32, step: LobbyBenchStep, sentAt: UInt64)?
    var nextDue: UInt64 = 0

    init(number: Int, host: NativeBenchPeer, guest: NativeBenchPeer, driver: LobbyBenchDriver) {
        self.number = number
        self.host = host
        self.guest = guest
        self.driver = driver
    }

    func fire(now: UInt64) -> Bool {
        self.driver.advance(self, now: now)
    }
}

/// Counters of the driver.
struct LobbyBenchDriverCounters: Sendable {
    /// Changes whose request was sent in the window and succeeded: what every subscriber should hear of.
    var changesInWindow: UInt64 = 0
    /// The same, by step.
    var changesByStep = [UInt64](repeating: 0, count: LobbyBenchStep.allCases.count)
    /// The same, by ``LobbyBenchStep/key(matchID:)``.
    var changeKeys: [UInt64] = []
    /// Changes not made because the match's previous request was still unanswered (server behind).
    var skippedBusy: UInt64 = 0
    /// Requests refused by the server.
    var refused: UInt64 = 0
    /// Slowest answer to a driver request, in ns.
    var slowestAnswer: UInt64 = 0
    var client = NativeBenchClientCounters()
}

/// The driver: its matches (slots), their sessions, and the schedule that changes them at
/// `changesPerSecond` in all. It announces each change's request time to every loop's
/// subscribers. Runs on the first event loop. Loop-confined.
final class LobbyBenchDriver: NativeBenchOwner {
    /// One loop's subscribers, for announcing send times.
    struct Audience: Sendable {
        var loop: any EventLoop
        var state: NIOLoopBound<LobbyBenchLoop>
    }

    let eventLoop: any EventLoop
    let settings: LobbyBenchSettings
    private(set) var slots: [LobbyBenchSlot] = []
    private var slotOfPeer: [ObjectIdentifier: LobbyBenchSlot] = [:]
    private var audiences: [Audience] = []
    private let schedule: BenchSendSchedule<LobbyBenchSlot>
    private var window = BenchWindow()
    private var counters = LobbyBenchDriverCounters()
    private var finished = false

    init(eventLoop: any EventLoop, settings: LobbyBenchSettings) {
        self.eventLoop = eventLoop
        self.settings = settings
        self.schedule = BenchSendSchedule(eventLoop: eventLoop)
        self.slots = (0..<settings.slots).map { number in
            let peer = { (guest: Bool) in
                NativeBenchPeer(
                    seat: guest ? 1 : 0, seats: 2, deviceID: settings.driverDeviceID(slot: number, guest: guest),
                    gameID: settings.gameID, reliable: true, payloadSize: NativeBenchPayload.minimumSize,
                    acknowledgeEveryRead: true, owner: self)
            }
            return LobbyBenchSlot(number: number, host: peer(false), guest: peer(true), driver: self)
        }
        for slot in self.slots {
            self.slotOfPeer[ObjectIdentifier(slot.host)] = slot
            self.slotOfPeer[ObjectIdentifier(slot.guest)] = slot
        }
    }

    /// Every session of the driver, hosts first.
    var peers: [NativeBenchPeer] { self.slots.map(\.host) + self.slots.map(\.guest) }

    /// Starts changing: every slot every `period` ns from `epoch` (phases spread), until the window's end.
    func start(audiences: [Audience], epoch: UInt64, period: UInt64, window: BenchWindow) {
        self.audiences = audiences
        self.window = window
        self.schedule.start(self.slots, epoch: epoch, period: period, window: window, stopAt: window.end)
    }

    /// Makes `slot`'s next change; false if its previous request is still unanswered.
    func advance(_ slot: LobbyBenchSlot, now: UInt64) -> Bool {
        guard !self.finished else { return false }
        guard slot.pending == nil else {
            if self.window.contains(now) { self.counters.skippedBusy += 1 }
            return false
        }
        let step = slot.next
        let request: UInt32
        switch step {
        case .created:
            request = slot.host.request(.createMatch(mode: self.settings.mode, maxPlayers: 2, label: "bench-lobby-\(slot.number)"))
        case .joined:
            request = slot.guest.request(.joinMatch(slot.matchID))
        case .guestLeft:
            request = slot.guest.request(.leaveMatch(slot.matchID))
        case .ended:
            request = slot.host.request(.leaveMatch(slot.matchID))
        }
        slot.pending = (request, step, now)
        // The match id of a creation is known only from its answer; the others' now.
        if step != .created { self.announce(step.key(matchID: slot.matchID), sentAt: now) }
        return true
    }

    private func announce(_ key: UInt64, sentAt: UInt64) {
        for audience in self.audiences {
            if audience.loop.inEventLoop {
                audience.state.value.changeSent(key, at: sentAt)
            } else {
                let state = audience.state
                audience.loop.execute { state.value.changeSent(key, at: sentAt) }
            }
        }
    }

    /// Stops changing; every driver session says GOODBYE (ending its matches).
    func finish() -> LobbyBenchDriverCounters {
        if !self.finished {
            self.finished = true
            self.schedule.stop()
            for peer in self.peers {
                self.counters.client.add(peer.counters)
                peer.goodbye()
            }
        }
        return self.counters
    }

    // MARK: NativeBenchOwner

    func peerAuthenticated(_ peer: NativeBenchPeer) {}

    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>) {
        guard let slot = self.slotOfPeer[ObjectIdentifier(peer)], let pending = slot.pending, pending.request == requestID,
            (pending.step == .created || pending.step == .ended) == (peer === slot.host)
        else {
            peer.count(error: "answer to a request the driver did not make")
            return
        }
        slot.pending = nil
        self.counters.slowestAnswer = max(self.counters.slowestAnswer, benchNow() &- pending.sentAt)
        switch result {
        case .success(let response):
            if case .matchJoined(let info) = response, pending.step == .created {
                slot.matchID = info.matchID
                self.announce(LobbyBenchStep.created.key(matchID: info.matchID), sentAt: pending.sentAt)
            }
            if self.window.contains(pending.sentAt) {
                self.counters.changesInWindow += 1
                self.counters.changesByStep[pending.step.rawValue] += 1
                self.counters.changeKeys.append(pending.step.key(matchID: slot.matchID))
            }
            slot.next = LobbyBenchStep(rawValue: (pending.step.rawValue + 1) % LobbyBenchStep.allCases.count)!
        case .failure(let error):
            self.counters.refused += 1
            peer.count(error: "driver request refused: \(error.code)")
            // Start over with a new match; one left behind ends when its sessions say GOODBYE.
            slot.next = .created
            slot.matchID = 0
        }
    }

    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64) {}

    func peerCut(_ peer: NativeBenchPeer) {}

    func peerResumed(_ peer: NativeBenchPeer, now: UInt64) {}

    func peerLost(_ peer: NativeBenchPeer) {}
}
