import MatchHostWire
import NIOCore

/// One bench player in a Disks match: its native peer, and what it last saw of the ticks.
/// It is also the sender of its taps. Loop-confined.
final class DisksBenchPlayer: BenchPeriodicSender {
    let peer: NativeBenchPeer
    let seat: Int
    unowned let match: DisksBenchMatch
    unowned let loop: DisksBenchLoop
    /// The match whose ticks `lastTick` counts; 0 before the first TICK.
    var tickMatch: UInt64 = 0
    var lastTick: UInt32 = 0
    var lastServerTime: UInt64 = 0
    var nextDue: UInt64 = 0

    init(peer: NativeBenchPeer, seat: Int, match: DisksBenchMatch, loop: DisksBenchLoop) {
        self.peer = peer
        self.seat = seat
        self.match = match
        self.loop = loop
    }

    func fire(now: UInt64) -> Bool {
        self.loop.tap(self, now: now)
    }
}

/// One Disks match of the bench: seat 0 creates it (again when it ends), the others join.
final class DisksBenchMatch {
    let number: Int
    var players: [DisksBenchPlayer] = []
    var joinedCount = 0
    var matchID: UInt64 = 0
    var createRequest: UInt32 = 0
    /// Succeeded when every player has joined the first time.
    let started: EventLoopPromise<Void>
    /// The disks that can be hit, as seat 0 sees them (kept only when tapping).
    var liveDisks: [DisksDisk] = []

    init(number: Int, started: EventLoopPromise<Void>) {
        self.number = number
        self.started = started
    }
}

/// Counters of one event loop. "In window" means received inside the measured window.
struct DisksBenchCounters: BenchCounterSet {
    /// The issue's bound on tick-to-delivery at p99: 10 ms.
    static let lateThreshold: UInt64 = 10_000_000

    /// TICKs received in the window, and how many came in RELIABLE frames (ticks with news).
    var ticks: UInt64 = 0
    var reliableTicks: UInt64 = 0
    /// TICKs that took longer than ``DisksBenchCounters/lateThreshold``.
    var late: UInt64 = 0
    /// Tick numbers skipped in a player's sequence (an UNRELIABLE TICK dropped).
    var missedTicks: UInt64 = 0
    /// Ticks the server skipped (consecutive numbers, but more than 1.5 intervals apart in serverTime).
    var serverSkippedTicks: UInt64 = 0
    /// TICKs whose number was not above the last one (must be 0 over TCP).
    var outOfOrder: UInt64 = 0
    /// TICKs with a serverTime after their arrival (clocks not shared?).
    var future: UInt64 = 0
    var states: UInt64 = 0
    /// GAME_OVERs (counted at seat 0, once per match) and matches started again after they ended.
    var gamesOver: UInt64 = 0
    var restarts: UInt64 = 0
    var restartsInWindow: UInt64 = 0
    /// Taps sent in the window and TAP_MISSED received in it.
    var taps: UInt64 = 0
    var tapsMissed: UInt64 = 0
    /// MATCH_EVENT bodies that did not decode.
    var badEvents: UInt64 = 0
    var client = NativeBenchClientCounters()

    mutating func add(_ other: DisksBenchCounters) {
        self.ticks += other.ticks
        self.reliableTicks += other.reliableTicks
        self.late += other.late
        self.missedTicks += other.missedTicks
        self.serverSkippedTicks += other.serverSkippedTicks
        self.outOfOrder += other.outOfOrder
        self.future += other.future
        self.states += other.states
        self.gamesOver += other.gamesOver
        self.restarts += other.restarts
        self.restartsInWindow += other.restartsInWindow
        self.taps += other.taps
        self.tapsMissed += other.tapsMissed
        self.badEvents += other.badEvents
        self.client.add(other.client)
    }
}

/// What one loop measured.
typealias DisksBenchLoopResult = BenchMeasurements<DisksBenchCounters>

/// The matches and players of one event loop, their taps, and the measurements. Loop-confined.
final class DisksBenchLoop: NativeBenchOwner, GroupedBenchLoop {
    let eventLoop: any EventLoop
    let settings: DisksBenchSettings
    private(set) var matches: [DisksBenchMatch] = []
    private var playerOfPeer: [ObjectIdentifier: DisksBenchPlayer] = [:]
    private var counters = DisksBenchCounters()
    private var histogram = BenchLatencyHistogram()
    private var window = BenchWindow()
    private var finished = false
    private let schedule: BenchSendSchedule<DisksBenchPlayer>
    private let allocator = ByteBufferAllocator()

    init(eventLoop: any EventLoop, settings: DisksBenchSettings, matchNumbers: [Int]) {
        self.eventLoop = eventLoop
        self.settings = settings
        self.schedule = BenchSendSchedule(eventLoop: eventLoop)
        for number in matchNumbers {
            let match = DisksBenchMatch(number: number, started: eventLoop.makePromise(of: Void.self))
            match.players = (0..<settings.players).map { seat in
                let peer = NativeBenchPeer(
                    seat: seat, seats: settings.players, deviceID: settings.deviceID(match: number, seat: seat),
                    gameID: settings.gameID, reliable: true, payloadSize: NativeBenchPayload.minimumSize,
                    acknowledgeEveryRead: false, owner: self)
                return DisksBenchPlayer(peer: peer, seat: seat, match: match, loop: self)
            }
            for player in match.players { self.playerOfPeer[ObjectIdentifier(player.peer)] = player }
            self.matches.append(match)
        }
        self.scheduleAcknowledgements(delay: 200_000_000)
    }

    func createGroups(spread: UInt64) {
        benchStagger(self.matches.map(\.number), total: self.settings.matches, spread: spread, on: self.eventLoop) { index in
            self.create(self.matches[index])
        }
    }

    func peer(group index: Int, seat: Int) -> NativeBenchPeer {
        self.matches[index].players[seat].peer
    }

    private func create(_ match: DisksBenchMatch) {
        match.joinedCount = 0
        match.matchID = 0
        match.liveDisks.removeAll()
        match.createRequest = match.players[0].peer.request(
            .createMatch(mode: "disks", maxPlayers: UInt8(match.players.count), label: "bench-disks-\(match.number)"))
    }

    /// Opens the measured window and, with taps, starts them at `epoch` until the window's end.
    func start(epoch: UInt64, window: BenchWindow) {
        self.window = window
        guard self.settings.tapRate > 0 else { return }
        let period = UInt64((1e9 / self.settings.tapRate).rounded())
        self.schedule.start(self.matches.flatMap(\.players), epoch: epoch, period: period, window: window, stopAt: window.end)
    }

    /// Players hold acknowledgements up to `delay`, as the client library does, unless a frame of theirs carries them.
    private func scheduleAcknowledgements(delay: UInt64) {
        self.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay / 4))) {
            guard !self.finished else { return }
            let deadline = benchNow() &- delay
            for match in self.matches {
                for player in match.players { player.peer.acknowledgePending(receivedBefore: deadline) }
            }
            self.scheduleAcknowledgements(delay: delay)
        }
    }

    /// A scheduled tap: on a live disk of the player's match (the first tap there scores, later
    /// ones get TAP_MISSED), or anywhere when none is up (TAP_MISSED); false between matches.
    func tap(_ player: DisksBenchPlayer, now: UInt64) -> Bool {
        let match = player.match
        guard !self.finished, match.matchID != 0, player.peer.matchID == match.matchID else { return false }
        let point =
            match.liveDisks.randomElement().map { DisksTap(x: $0.x, y: $0.y) }
            ?? DisksTap(x: .random(in: 0..<DisksBoard.width), y: .random(in: 0..<DisksBoard.height))
        let body = DisksClientMessage.tap(point).encoded(allocator: self.allocator)
        player.peer.send(.matchInput(matchID: match.matchID, input: body))
        return true
    }

    /// Stops tapping, hands back the measurements, and every player says GOODBYE.
    func finish() -> DisksBenchLoopResult {
        if !self.finished {
            self.finished = true
            self.schedule.stop()
            self.counters.taps = self.schedule.sentInWindow
            for match in self.matches {
                for player in match.players {
                    self.counters.client.add(player.peer.counters)
                    player.peer.goodbye()
                }
            }
        }
        return DisksBenchLoopResult(counters: self.counters, histogram: self.histogram)
    }

    func failUnstartedGroups(_ error: BenchError) {
        for match in self.matches { match.started.fail(error) }
    }

    // MARK: Events

    private func received(_ event: DisksServerMessage, matchID: UInt64, by player: DisksBenchPlayer, reliable: Bool, now: UInt64) {
        let inWindow = self.window.contains(now)
        switch event {
        case .tick(let tick):
            if player.tickMatch != matchID {
                player.tickMatch = matchID
                player.lastTick = 0
            }
            if inWindow {
                self.counters.ticks += 1
                if reliable { self.counters.reliableTicks += 1 }
                if tick.serverTime <= now {
                    let latency = now - tick.serverTime
                    if latency > DisksBenchCounters.lateThreshold { self.counters.late += 1 }
                    self.histogram.record(latency)
                } else {
                    self.counters.future += 1
                }
            }
            let last = player.lastTick
            if last != 0, inWindow {
                if tick.tick > last &+ 1 {
                    self.counters.missedTicks += UInt64(tick.tick - last - 1)
                } else if tick.tick == last &+ 1 {
                    let interval = self.settings.tickInterval
                    let apart = tick.serverTime &- player.lastServerTime
                    if tick.serverTime > player.lastServerTime, apart > interval + interval / 2 {
                        self.counters.serverSkippedTicks += (apart + interval / 2) / interval - 1
                    }
                } else {
                    self.counters.outOfOrder += 1
                }
            }
            player.lastTick = tick.tick
            player.lastServerTime = tick.serverTime
            if player.seat == 0, self.settings.tapRate > 0, matchID == player.match.matchID {
                Self.apply(tick, to: &player.match.liveDisks)
            }
        case .state(let state):
            self.counters.states += 1
            if player.seat == 0, matchID == player.match.matchID { player.match.liveDisks = state.disks }
        case .gameOver:
            if player.seat == 0 { self.counters.gamesOver += 1 }
        case .tapMissed:
            if inWindow { self.counters.tapsMissed += 1 }
        }
    }

    private static func apply(_ tick: DisksTick, to disks: inout [DisksDisk]) {
        if !tick.hits.isEmpty || !tick.expired.isEmpty {
            disks.removeAll { disk in
                tick.expired.contains(disk.id) || tick.hits.contains { $0.diskID == disk.id }
            }
        }
        disks.append(contentsOf: tick.spawned)
    }

    // MARK: NativeBenchOwner

    func peerAuthenticated(_ peer: NativeBenchPeer) {}

    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>) {
        guard let player = self.playerOfPeer[ObjectIdentifier(peer)] else { return }
        let match = player.match
        switch result {
        case .success(.matchJoined(let info)):
            peer.matchID = info.matchID
            if player.seat == 0, requestID == match.createRequest {
                match.matchID = info.matchID
                for other in match.players.dropFirst() { other.peer.request(.joinMatch(info.matchID)) }
            }
            match.joinedCount += 1
            if match.joinedCount == match.players.count { match.started.succeed() }
        case .success(let other):
            peer.count(error: "unexpected response \(other)")
        case .failure(let error):
            peer.count(error: "request refused: \(error.code)")
            match.started.fail(BenchError("request \(requestID) of seat \(player.seat) of match \(match.number) refused: \(error)"))
        }
    }

    func peer(_ peer: NativeBenchPeer, received message: NativeServerMessage, reliable: Bool, now: UInt64) {
        guard let player = self.playerOfPeer[ObjectIdentifier(peer)] else { return }
        switch message {
        case .matchEvent(let matchID, let body):
            do {
                self.received(try DisksServerMessage(body: body), matchID: matchID, by: player, reliable: reliable, now: now)
            } catch {
                self.counters.badEvents += 1
            }
        case .matchEnded(let matchID, _):
            if peer.matchID == matchID { peer.matchID = 0 }
            let match = player.match
            // Seat 0 starts the next match; the others join it when it answers.
            guard player.seat == 0, matchID == match.matchID, !self.finished else { return }
            self.counters.restarts += 1
            if self.window.contains(now) { self.counters.restartsInWindow += 1 }
            self.create(match)
        default:
            break
        }
    }

    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64) {}

    func peerCut(_ peer: NativeBenchPeer) {}

    func peerResumed(_ peer: NativeBenchPeer, now: UInt64) {}

    func peerLost(_ peer: NativeBenchPeer) {
        if let player = self.playerOfPeer[ObjectIdentifier(peer)] {
            let errors = peer.counters.errors.keys.sorted().joined(separator: "; ")
            player.match.started.fail(
                BenchError("seat \(player.seat) of match \(player.match.number)'s connection closed\(errors.isEmpty ? "" : " (\(errors))")"))
        }
    }
}
