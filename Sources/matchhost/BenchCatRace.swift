import ArgumentParser
import MatchHostWire
import NIOCore
import NIOPosix

/// `matchhost bench catrace`: K races of P racers tapping R times a second against a running
/// server; prints delivered PLAYER_MOVED per second, tap-to-delivery latency, and CPU/RSS.
struct BenchCatRaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catrace",
        abstract: "Drive Cat Races against a running server and measure relay throughput and latency.")

    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "Server Cat Race port.")
    var port = 1955

    @Option(help: "Number of races (K).")
    var races = 100

    @Option(help: "Racers per race (P, 2-16).")
    var racers = 16

    @Option(help: "Taps per second per racer (R).")
    var rate: Double = 5

    @Option(help: "Seconds measured, after the warmup.")
    var duration: Double = 20

    @Option(help: "Seconds of tapping before the measured window.")
    var warmup: Double = 3

    @Option(name: .customLong("server-pid"), help: "Server process id, to report its CPU use and RSS (Linux /proc).")
    var serverPID: Int32?

    @Option(help: "Client event loop threads.")
    var threads = 1

    @Option(name: .customLong("connect-batch"), help: "Connections opened in parallel during setup.")
    var connectBatch = 200

    @Flag(help: "Also print one JSON line with all numbers.")
    var json = false

    func validate() throws {
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0-65535") }
        guard self.races >= 1 else { throw ValidationError("--races must be at least 1") }
        guard (2...16).contains(self.racers) else { throw ValidationError("--racers must be 2-16") }
        guard self.rate > 0, self.rate.isFinite else { throw ValidationError("--rate must be positive") }
        guard self.duration > 0, self.duration.isFinite else { throw ValidationError("--duration must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard self.threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard self.connectBatch >= 1 else { throw ValidationError("--connect-batch must be at least 1") }
    }

    func run() async throws {
        let fileLimit = raiseOpenFileLimit()
        let connectionCount = self.races * self.racers
        if fileLimit > 0, UInt64(connectionCount) + 64 > fileLimit {
            benchPrintError("warning: \(connectionCount) connections but the open file limit is \(fileLimit)")
        }
        let address = try benchResolve(host: self.host, port: self.port)
        let serverPID = self.serverPID.map { String($0) }
        if let serverPID, BenchProc.cpuTicks(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/stat: no such process?")
            throw ExitCode.failure
        }
        let settings = CatRaceBenchSettings(
            host: self.host, port: self.port, address: address, races: self.races, racers: self.racers,
            rate: self.rate, duration: self.duration, warmup: self.warmup, serverPID: serverPID,
            threads: self.threads, connectBatch: self.connectBatch, runID: benchRunID())

        benchPrint(
            "races=\(settings.races) racers=\(settings.racers) rate=\(benchFormat(settings.rate))/s "
                + "duration=\(benchFormatCompact(settings.duration))s warmup=\(benchFormatCompact(settings.warmup))s "
                + "threads=\(settings.threads) connections=\(connectionCount) server=\(settings.host):\(settings.port)")

        try await runBenchReport(threads: settings.threads, json: self.json) { group in
            try await CatRaceBenchRun(settings: settings, group: group).run()
        }
    }
}

/// Everything a run needs, copied out of the command so tasks and loops can share it.
struct CatRaceBenchSettings: Sendable {
    var host: String
    var port: Int
    var address: SocketAddress
    var races: Int
    var racers: Int
    var rate: Double
    var duration: Double
    var warmup: Double
    var serverPID: String?
    var threads: Int
    var connectBatch: Int
    var runID: String

    func playerID(race: Int, seat: Int) -> String { "bench-\(self.runID)-\(race)-\(seat)" }
}

// MARK: - Run

/// One run: setup, tapping, measurement, teardown.
struct CatRaceBenchRun: Sendable {
    let settings: CatRaceBenchSettings
    let loops: [any EventLoop]

    init(settings: CatRaceBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> CatRaceBenchReport {
        let settings = self.settings

        // One state object per loop, holding the races placed on it (race r -> loop r % threads).
        let (states, startedFutures) = try await benchPlaceGroups(settings.races, on: self.loops) { loop, raceNumbers in
            let benchLoop = CatRaceBenchLoop(eventLoop: loop, period: UInt64((1e9 / settings.rate).rounded()))
            for race in raceNumbers {
                let ids = (0..<settings.racers).map { settings.playerID(race: race, seat: $0) }
                benchLoop.races.append(CatRaceBenchRace(ids: ids, started: loop.makePromise(of: Void.self)))
            }
            return (benchLoop, benchLoop.races.map { $0.started.futureResult })
        }

        let phases = BenchPhases(
            warmup: settings.warmup, seconds: settings.duration, drain: .seconds(1), goodbye: .milliseconds(200),
            serverPID: settings.serverPID, notStarted: "race not started within 30 s of connecting")
        // START_MATCH goes out as soon as a race's last racer got NOT_IN_MATCH.
        let (results, connections, usage) = try await runLoadBench(
            loops: self.loops, states: states, started: startedFutures, phases: phases,
            connect: { try await self.connectAll(states: states) },
            setupLine: { connections, connectSeconds, startSeconds in
                "setup: \(connections) racers connected in \(benchFormat(connectSeconds, 2))s, "
                    + "\(settings.races) races started in \(benchFormat(startSeconds, 2))s"
            })
        return CatRaceBenchReport(settings: settings, connections: connections, results: results, usage: usage)
    }

    /// Opens every racer's connection, `connectBatch` at a time, each up to its NOT_IN_MATCH.
    private func connectAll(states: [NIOLoopBound<CatRaceBenchLoop>]) async throws -> [any Channel] {
        try await benchConnectAll(total: self.settings.races * self.settings.racers, batch: self.settings.connectBatch) {
            try await self.connectRacer(index: $0, states: states)
        }
    }

    /// Connects racer number `index` (race index / P, seat index % P) and waits for NOT_IN_MATCH.
    private func connectRacer(index: Int, states: [NIOLoopBound<CatRaceBenchLoop>]) async throws -> any Channel {
        let settings = self.settings
        let race = index / settings.racers
        let seat = index % settings.racers
        let loopIndex = race % self.loops.count
        let localRace = race / self.loops.count
        let loop = self.loops[loopIndex]
        let state = states[loopIndex]
        let hello = loop.makePromise(of: Void.self)
        let connect = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let benchLoop = state.value
                    let handler = CatRaceBenchRacer(
                        loop: benchLoop, race: benchLoop.races[localRace], seat: seat, hello: hello)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(to: settings.address)
        return try await benchAwaitReady(
            connect, ready: hello, readyMessage: "NOT_IN_MATCH", host: settings.host, port: settings.port,
            player: "racer \(seat) of race \(race) (\(settings.playerID(race: race, seat: seat)))")
    }
}

// MARK: - Loop-confined state

/// Counters of one event loop. "In window" means the event happened inside the measured window.
struct CatRaceBenchCounters: BenchCounterSet {
    /// MOVED_SELF sent in the window.
    var tapsSent: UInt64 = 0
    /// Taps due in the window but skipped because the racer's race was over.
    var tapsSkipped: UInt64 = 0
    /// PLAYER_MOVED frames that arrived in the window.
    var delivered: UInt64 = 0
    /// PLAYER_MOVED frames (arriving any time until the end) for taps sent in the window.
    var deliveredOfWindowTaps: UInt64 = 0
    /// Steps skipped in the PLAYER_MOVED sequence of a racer (refused taps), seen in the window.
    var refusedStepsSeen: UInt64 = 0
    /// Races won in the window (GAME_OVER seen by its winner).
    var racesWon: UInt64 = 0
    /// Over races whose GAME_OVER arrived in the window: steps each racer tapped in the race...
    var stepsTappedInFinishedRaces: UInt64 = 0
    /// ...and steps of each racer the server accepted (its last PLAYER_MOVED x, seen by its observer).
    /// The difference is the taps the server refused, most of them sent while GAME_OVER was on its way.
    var stepsAcceptedInFinishedRaces: UInt64 = 0
    /// PLAYER_MOVED with no matching send time (or one later than the arrival).
    var unmatchedDeliveries: UInt64 = 0
    /// PLAYER_MOVED with a bad index or position.
    var badDeliveries: UInt64 = 0
    /// NOT_IN_MATCH after the start: the server ended a race.
    var racesEndedByServer: UInt64 = 0
    /// MATCH_STARTED listing someone else at the racer's seat.
    var seatMismatches: UInt64 = 0
    /// Connections closed while the bench was still running.
    var connectionsLost: UInt64 = 0
    /// Frames that did not decode, and other errors, by kind.
    var errors: [String: UInt64] = [:]

    mutating func add(_ other: CatRaceBenchCounters) {
        self.tapsSent += other.tapsSent
        self.tapsSkipped += other.tapsSkipped
        self.delivered += other.delivered
        self.deliveredOfWindowTaps += other.deliveredOfWindowTaps
        self.refusedStepsSeen += other.refusedStepsSeen
        self.racesWon += other.racesWon
        self.stepsTappedInFinishedRaces += other.stepsTappedInFinishedRaces
        self.stepsAcceptedInFinishedRaces += other.stepsAcceptedInFinishedRaces
        self.unmatchedDeliveries += other.unmatchedDeliveries
        self.badDeliveries += other.badDeliveries
        self.racesEndedByServer += other.racesEndedByServer
        self.seatMismatches += other.seatMismatches
        self.connectionsLost += other.connectionsLost
        self.errors.merge(other.errors, uniquingKeysWith: +)
    }
}

/// What one loop measured.
typealias CatRaceBenchLoopResult = BenchMeasurements<CatRaceBenchCounters>

/// The racers, races, tap schedule and measurements of one event loop. Loop-confined.
final class CatRaceBenchLoop: BenchLoop {
    let eventLoop: any EventLoop
    var races: [CatRaceBenchRace] = []
    var counters = CatRaceBenchCounters()
    var histogram = BenchLatencyHistogram()
    /// The measured window; empty until tapping starts.
    private(set) var window = BenchWindow()
    /// Set once the bench closes its connections on purpose.
    private(set) var finished = false
    /// The racers' taps, every racer once per `period` ns.
    private let schedule: BenchSendSchedule<CatRaceBenchRacer>
    private let period: UInt64

    init(eventLoop: any EventLoop, period: UInt64) {
        self.eventLoop = eventLoop
        self.schedule = BenchSendSchedule(eventLoop: eventLoop)
        self.period = period
    }

    @inline(__always)
    func inWindow(_ time: UInt64) -> Bool {
        self.window.contains(time)
    }

    /// Starts every racer's taps at `epoch` plus a random phase (see ``BenchSendSchedule``);
    /// tapping stops at the window's end.
    func start(epoch: UInt64, window: BenchWindow) {
        self.window = window
        let racers = self.races.flatMap { race in race.racers.compactMap { $0 } }
        self.schedule.start(racers, epoch: epoch, period: self.period, window: window, stopAt: window.end)
    }

    /// Stops tapping and hands back the measurements. Connections closing from now on are expected.
    /// Each started race is then quit (racer 0 says PLAYER_CONNECTED with continueMatch 0), so the
    /// server ends it at once instead of holding every seat for its grace period after the close.
    func finish() -> CatRaceBenchLoopResult {
        self.counters.tapsSent = self.schedule.sentInWindow
        self.counters.tapsSkipped = self.schedule.skippedInWindow
        let result = CatRaceBenchLoopResult(counters: self.counters, histogram: self.histogram)
        if !self.finished {
            self.finished = true
            self.schedule.stop()
            for race in self.races where race.startedCount > 0 {
                race.racers.lazy.compactMap { $0 }.first?.quitMatch()
            }
        }
        return result
    }

    func failUnstartedGroups(_ error: BenchError) {
        for race in self.races {
            race.started.fail(error)  // no-op for a race already started
        }
    }

    func count(error kind: String) {
        self.counters.errors[kind, default: 0] += 1
    }
}

/// One race: its racers (by seat) and the send time of every step of every racer.
final class CatRaceBenchRace {
    /// Steps tracked per racer: 42 win the race, a little room for catch-up moves past the line.
    static let stepSlots = 48

    let ids: [String]
    var racers: [CatRaceBenchRacer?]
    /// `sendTimes[seat * stepSlots + step]`: when that racer sent MOVED_SELF to 25 + 10 × step.
    var sendTimes: [UInt64]
    /// The last x of each racer seen by its observer (seat 0 observes everyone else, seat 1 observes seat 0).
    var lastSeenX: [UInt32]
    var helloCount = 0
    var startedCount = 0
    let started: EventLoopPromise<Void>

    var size: Int { self.ids.count }

    init(ids: [String], started: EventLoopPromise<Void>) {
        self.ids = ids
        self.racers = Array(repeating: nil, count: ids.count)
        self.sendTimes = Array(repeating: 0, count: ids.count * Self.stepSlots)
        self.lastSeenX = Array(repeating: CatRaceTrack.startX, count: ids.count)
        self.started = started
    }
}

// MARK: - Connection handler

/// One racer's connection. Runs on its race's event loop; all state is loop-confined.
final class CatRaceBenchRacer: ChannelInboundHandler, BenchPeriodicSender {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let loop: CatRaceBenchLoop
    private let race: CatRaceBenchRace
    private let seat: Int
    private let hello: EventLoopPromise<Void>
    private var frames = FrameAccumulator()
    private var context: ChannelHandlerContext?
    private var x = CatRaceTrack.startX
    private var active = false
    private var helloDone = false
    private var startedOnce = false
    /// When this racer's next tap is due (monotonic ns); owned by the loop's tap schedule.
    var nextDue: UInt64 = 0

    init(loop: CatRaceBenchLoop, race: CatRaceBenchRace, seat: Int, hello: EventLoopPromise<Void>) {
        self.loop = loop
        self.race = race
        self.seat = seat
        self.hello = hello
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.race.racers[self.seat] = self
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.send(PlayerConnected(playerID: self.race.ids[self.seat], alias: "racer\(self.seat)", continueMatch: true))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.active = false
        if !self.loop.finished { self.loop.counters.connectionsLost += 1 }
        if !self.helloDone {
            self.helloDone = true
            self.hello.fail(BenchError("connection closed before NOT_IN_MATCH"))
        }
        if !self.startedOnce {
            self.race.started.fail(BenchError("racer \(self.seat)'s connection closed before MATCH_STARTED"))
        }
        self.race.racers[self.seat] = nil
        self.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.loop.count(error: benchErrorKind(error))
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = benchNow()
        var incoming = Self.unwrapInboundIn(data)
        self.frames.append(&incoming)
        do {
            while let body = try self.frames.nextFrame() {
                try self.handle(CatRaceServerMessage(frameBody: body), now: now)
            }
        } catch {
            self.loop.count(error: "bad frame from server: \(error)")
            self.frames.reset()
            context.close(promise: nil)
        }
    }

    private func handle(_ message: CatRaceServerMessage, now: UInt64) {
        switch message {
        case .playerMoved(let moved):
            self.received(moved, now: now)

        case .gameOver(let over):
            if self.active, self.loop.inWindow(now) {
                // The race's totals: what this racer tapped, and what the server accepted from
                // the racers it observes (every PLAYER_MOVED of the race precedes GAME_OVER).
                self.loop.counters.stepsTappedInFinishedRaces += UInt64((self.x - CatRaceTrack.startX) / CatRaceTrack.stepX)
                for observed in self.observedSeats {
                    let accepted = self.race.lastSeenX[observed]
                    self.loop.counters.stepsAcceptedInFinishedRaces += UInt64(
                        (max(accepted, CatRaceTrack.startX) - CatRaceTrack.startX) / CatRaceTrack.stepX)
                }
            }
            self.active = false
            if Int(over.winnerIndex) == self.seat {
                if self.loop.inWindow(now) { self.loop.counters.racesWon += 1 }
                self.send(RestartMatch())
            }

        case .matchStarted(let started):
            if !self.startedOnce {
                let listed = self.seat < started.racers.count ? started.racers[self.seat].playerID : nil
                if listed != self.race.ids[self.seat] { self.loop.counters.seatMismatches += 1 }
            }
            guard started.state == .active else {
                self.active = false
                return
            }
            self.x = CatRaceTrack.startX
            self.active = true
            // The observer's view of its racers starts again from the snapshot.
            for observed in self.observedSeats where observed < started.racers.count {
                self.race.lastSeenX[observed] = started.racers[observed].posX
            }
            if !self.startedOnce {
                self.startedOnce = true
                self.race.startedCount += 1
                if self.race.startedCount == self.race.size { self.race.started.succeed() }
            }

        case .notInMatch:
            if !self.helloDone {
                self.helloDone = true
                self.hello.succeed()
                self.race.helloCount += 1
                if self.race.helloCount == self.race.size {
                    // Everyone is here: racer 0 starts the race with the ids in seat order.
                    self.race.racers[0]?.send(StartMatch(playerIDs: self.race.ids))
                }
            } else {
                self.active = false
                self.loop.counters.racesEndedByServer += 1
            }

        case .notifyReady:
            break
        }
    }

    /// The seats whose PLAYER_MOVED sequence this racer checks for gaps.
    private var observedSeats: Range<Int> {
        switch self.seat {
        case 0: return 1..<self.race.size
        case 1: return 0..<1
        default: return 0..<0
        }
    }

    @inline(__always)
    private func received(_ moved: PlayerMoved, now: UInt64) {
        let loop = self.loop
        let race = self.race
        let mover = Int(moved.playerIndex)
        let posX = moved.posX
        guard mover < race.size, mover != self.seat, posX > CatRaceTrack.startX,
            (posX - CatRaceTrack.startX) % CatRaceTrack.stepX == 0
        else {
            loop.counters.badDeliveries += 1
            return
        }
        let inWindow = loop.inWindow(now)
        if inWindow { loop.counters.delivered += 1 }
        let step = Int((posX - CatRaceTrack.startX) / CatRaceTrack.stepX)
        if step < CatRaceBenchRace.stepSlots {
            let sentAt = race.sendTimes[mover * CatRaceBenchRace.stepSlots + step]
            if sentAt != 0, sentAt <= now {
                if inWindow { loop.histogram.record(now - sentAt) }
                if loop.inWindow(sentAt) { loop.counters.deliveredOfWindowTaps += 1 }
            } else {
                loop.counters.unmatchedDeliveries += 1
            }
        } else {
            loop.counters.unmatchedDeliveries += 1
        }
        // One observer per mover counts refused taps: a move of k steps means k - 1 were refused.
        if self.seat == (mover == 0 ? 1 : 0) {
            let previous = race.lastSeenX[mover]
            if posX > previous {
                if inWindow, posX - previous > CatRaceTrack.stepX {
                    loop.counters.refusedStepsSeen += UInt64((posX - previous) / CatRaceTrack.stepX - 1)
                }
                race.lastSeenX[mover] = posX
            }
        }
    }

    /// Sends one tap if the race is running: MOVED_SELF(x + 10), recording the send time.
    func fire(now: UInt64) -> Bool {
        guard self.active, self.context != nil else { return false }
        self.x += CatRaceTrack.stepX
        let step = Int((self.x - CatRaceTrack.startX) / CatRaceTrack.stepX)
        if step < CatRaceBenchRace.stepSlots {
            self.race.sendTimes[self.seat * CatRaceBenchRace.stepSlots + step] = now
        }
        self.send(MovedSelf(posX: self.x))
        return true
    }

    /// Leaves the race for good: PLAYER_CONNECTED with continueMatch 0 ends the match for everyone.
    func quitMatch() {
        self.active = false
        self.send(PlayerConnected(playerID: self.race.ids[self.seat], alias: "racer\(self.seat)", continueMatch: false))
    }

    private func send(_ message: some CatRaceMessage) {
        guard let context = self.context else { return }
        var buffer = context.channel.allocator.buffer(capacity: 16)
        message.encodeFrame(into: &buffer)
        context.writeAndFlush(Self.wrapOutboundOut(buffer), promise: nil)
    }
}

// MARK: - Report

/// The results of a run, merged over loops, and how they are printed.
struct CatRaceBenchReport: PrintableBenchReport {
    var settings: CatRaceBenchSettings
    var connections: Int
    var counters = CatRaceBenchCounters()
    var histogram = BenchLatencyHistogram()
    var usage: BenchUsage

    init(settings: CatRaceBenchSettings, connections: Int, results: [CatRaceBenchLoopResult], usage: BenchUsage) {
        self.settings = settings
        self.connections = connections
        let merged = BenchMeasurements(merging: results)
        self.counters = merged.counters
        self.histogram = merged.histogram
        self.usage = usage
    }

    func print(json: Bool) {
        let s = self.settings
        let c = self.counters
        let seconds = s.duration
        let targetTaps = Double(s.races * s.racers) * s.rate
        let tapsPerSecond = Double(c.tapsSent) / seconds
        let deliveredPerSecond = Double(c.delivered) / seconds
        let expected = c.tapsSent * UInt64(s.racers - 1)
        let ratio = expected > 0 ? Double(c.deliveredOfWindowTaps) / Double(expected) : Double.nan
        // Refused taps, from the races that finished in the window; scaled to the window's taps.
        let refusedSteps = c.stepsTappedInFinishedRaces > c.stepsAcceptedInFinishedRaces
            ? c.stepsTappedInFinishedRaces - c.stepsAcceptedInFinishedRaces : 0
        let refusedShare = c.stepsTappedInFinishedRaces > 0
            ? Double(refusedSteps) / Double(c.stepsTappedInFinishedRaces) : 0
        let acceptedExpected = Double(c.tapsSent) * (1 - refusedShare) * Double(s.racers - 1)
        let acceptedRatio = acceptedExpected > 0 ? Double(c.deliveredOfWindowTaps) / acceptedExpected : Double.nan

        benchPrint(
            "taps sent: \(benchFormat(tapsPerSecond))/s (target \(benchFormat(targetTaps))/s)  "
                + "PLAYER_MOVED delivered: \(benchFormat(deliveredPerSecond))/s "
                + "(delivered/expected \(benchFormat(ratio, 4)): \(c.deliveredOfWindowTaps)/\(expected))")
        benchPrint("latency tap->delivery ms: \(self.histogram.summary)")
        benchPrint(
            "races won: \(c.racesWon) (\(benchFormat(Double(c.racesWon) / seconds))/s)  "
                + "taps refused by the server: \(benchFormat(refusedShare * 100, 2))% "
                + "(\(refusedSteps) of \(c.stepsTappedInFinishedRaces) in finished races; \(c.refusedStepsSeen) seen mid-race, "
                + "the rest crossed GAME_OVER)  delivered/accepted≈\(benchFormat(acceptedRatio, 4))  "
                + "taps skipped while race over: \(c.tapsSkipped)")
        self.usage.print(threads: s.threads, deliveredPerSecond: deliveredPerSecond)

        var problems: [String] = []
        if c.connectionsLost > 0 { problems.append("\(c.connectionsLost) connections closed during the run") }
        if c.racesEndedByServer > 0 { problems.append("\(c.racesEndedByServer) NOT_IN_MATCH after start (race ended by server)") }
        if c.seatMismatches > 0 { problems.append("\(c.seatMismatches) MATCH_STARTED with another racer at our seat") }
        if c.badDeliveries > 0 { problems.append("\(c.badDeliveries) PLAYER_MOVED with bad index/position") }
        if c.unmatchedDeliveries > 0 { problems.append("\(c.unmatchedDeliveries) PLAYER_MOVED without a matching tap") }
        for (kind, count) in c.errors.sorted(by: { $0.key < $1.key }) { problems.append("\(count)× \(kind)") }
        if let serverCPU = self.usage.serverCPU, serverCPU > 90 {
            problems.append(
                "the server used \(benchFormat(serverCPU))% of one core; its Cat Race world runs on one event loop, "
                    + "so it is probably saturated and the latency above is mostly queueing")
        }
        if let clientCPU = self.usage.clientCPU, clientCPU > 85 * Double(s.threads) {
            problems.append("the client used \(benchFormat(clientCPU))% CPU: it may be the bottleneck (try --threads)")
        }
        if expected > 0, ratio < 0.95 {
            problems.append(
                "only \(benchFormat(ratio * 100))% of the expected PLAYER_MOVED arrived: the server refused taps "
                    + "(over its --max-tap-rate: a racer moves those steps later, on a tap that claims them again, so "
                    + "fewer moves arrive and their latency includes the wait for the bucket) or lost them")
        }
        if tapsPerSecond < targetTaps * 0.97 {
            problems.append("taps sent below target (client overloaded, or taps skipped between races)")
        }
        for problem in problems { benchPrint("warning: \(problem)") }

        guard json else { return }
        var out = BenchJSON()
        out.add("bench", "catrace")
        out.add("races", s.races)
        out.add("racers", s.racers)
        out.add("rate", s.rate)
        out.add("duration", s.duration)
        out.add("warmup", s.warmup)
        out.add("threads", s.threads)
        out.add("connections", self.connections)
        out.add("taps_target_per_s", targetTaps)
        out.add("taps_sent_per_s", tapsPerSecond)
        out.add("taps_sent", c.tapsSent)
        out.add("taps_skipped", c.tapsSkipped)
        out.add("delivered_per_s", deliveredPerSecond)
        out.add("delivered", c.delivered)
        out.add("delivered_of_window_taps", c.deliveredOfWindowTaps)
        out.add("expected", expected)
        out.add("delivered_ratio", ratio)
        out.add("refused_steps_seen", c.refusedStepsSeen)
        out.add("steps_tapped_in_finished_races", c.stepsTappedInFinishedRaces)
        out.add("steps_accepted_in_finished_races", c.stepsAcceptedInFinishedRaces)
        out.add("refused_share", refusedShare)
        out.add("delivered_accepted_ratio", acceptedRatio)
        out.add("races_won", c.racesWon)
        out.add("latency_ms", object: self.histogram.json)
        self.usage.add(to: &out, deliveredPerSecond: deliveredPerSecond)
        out.add("connections_lost", c.connectionsLost)
        out.add("races_ended_by_server", c.racesEndedByServer)
        out.add("seat_mismatches", c.seatMismatches)
        out.add("bad_deliveries", c.badDeliveries)
        out.add("unmatched_deliveries", c.unmatchedDeliveries)
        out.add("errors", UInt64(c.errors.values.reduce(0, +)))
        benchPrint(out.line)
    }
}
