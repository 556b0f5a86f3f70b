import ArgumentParser
import MatchHostWire
import NIOCore
import NIOPosix

/// `matchhost bench resume`: N pairs in relay matches, both players sending RELIABLE data;
/// over M rounds one player of each pair loses its link (drops the next MATCH_DATA unread and
/// resets its connection), reconnects at once and RESUMEs. Measures the time from the close to
/// RESUMED and to the first resent MATCH_DATA, and checks that every message arrived exactly
/// once and in order, both ways.
struct BenchResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Cut native connections and measure reconnect-and-resume latency and exactly-once delivery.")

    @OptionGroup(title: "Server and load generator")
    var target: NativeBenchTarget

    @Option(help: "Number of pairs (N), each a relay match of 2.")
    var pairs = 100

    @Option(help: "Cuts per pair (M).")
    var rounds = 10

    @Option(help: "Seconds between the cuts of one pair (pairs are spread over this interval).")
    var interval: Double = 1

    @Option(help: "RELIABLE SEND_DATA per second per player.")
    var rate: Double = 20

    @Option(help: "Seconds of sending before the first cut.")
    var warmup: Double = 1

    @Flag(name: .customLong("graceful-close"), help: "Cut with an orderly close (FIN) instead of a reset (RST).")
    var gracefulClose = false

    @Option(name: .customLong("payload-size"), help: "SEND_DATA payload bytes (at least 13: send time, number, seat).")
    var payloadSize = 16

    @Option(help: "Seconds a round may take before it counts as failed.")
    var timeout: Double = 10

    func validate() throws {
        guard self.pairs >= 1 else { throw ValidationError("--pairs must be at least 1") }
        guard self.rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        guard self.interval > 0, self.interval.isFinite else { throw ValidationError("--interval must be positive") }
        guard self.rate > 0, self.rate.isFinite else { throw ValidationError("--rate must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard (NativeBenchPayload.minimumSize...60_000).contains(self.payloadSize) else {
            throw ValidationError("--payload-size must be \(NativeBenchPayload.minimumSize)-60000")
        }
        guard self.timeout > 0, self.timeout.isFinite else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        raiseOpenFileLimit()
        let address = try benchResolve(host: self.target.host, port: self.target.port)
        let serverPID = self.target.serverPID.map { String($0) }
        if let serverPID, BenchProc.cpuTicks(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/stat: no such process?")
            throw ExitCode.failure
        }
        let settings = NativeResumeBenchSettings(
            host: self.target.host, port: self.target.port, address: address, pairs: self.pairs, rounds: self.rounds,
            interval: self.interval, rate: self.rate, warmup: self.warmup, abrupt: !self.gracefulClose,
            payloadSize: self.payloadSize, gameID: self.target.gameID, timeout: self.timeout, serverPID: serverPID,
            threads: self.target.threads, connectBatch: self.target.connectBatch, runID: benchRunID())

        benchPrint(
            "pairs=\(settings.pairs) rounds=\(settings.rounds) interval=\(benchFormatCompact(settings.interval))s "
                + "rate=\(benchFormat(settings.rate))/s warmup=\(benchFormatCompact(settings.warmup))s "
                + "close=\(settings.abrupt ? "rst" : "fin") threads=\(settings.threads) "
                + "connections=\(settings.pairs * 2) server=\(settings.host):\(settings.port)")

        let report = try await runBenchReport(threads: settings.threads, json: self.target.json) { group in
            try await NativeResumeBenchRun(settings: settings, group: group).run()
        }
        if report.violations > 0 { throw ExitCode.failure }
    }
}

/// Everything a run needs, copied out of the command so tasks and loops can share it.
struct NativeResumeBenchSettings: Sendable {
    var host: String
    var port: Int
    var address: SocketAddress
    var pairs: Int
    var rounds: Int
    var interval: Double
    var rate: Double
    var warmup: Double
    var abrupt: Bool
    var payloadSize: Int
    var gameID: String
    var timeout: Double
    var serverPID: String?
    var threads: Int
    var connectBatch: Int
    var runID: String

    func deviceID(pair: Int, seat: Int) -> String { "bench-\(self.runID)-\(pair)-\(seat)" }
}

// MARK: - Run

/// One run: setup, sending and cuts, the drain and the checks, teardown.
struct NativeResumeBenchRun: Sendable {
    let settings: NativeResumeBenchSettings
    let loops: [any EventLoop]

    init(settings: NativeResumeBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> NativeResumeBenchReport {
        let settings = self.settings
        let loopCount = self.loops.count

        var states: [NIOLoopBound<NativeResumeBenchLoop>] = []
        var startedFutures: [EventLoopFuture<Void>] = []
        var doneFutures: [EventLoopFuture<Void>] = []
        for (loopIndex, loop) in self.loops.enumerated() {
            let pairNumbers = Array(stride(from: loopIndex, to: settings.pairs, by: loopCount))
            let (state, started, done) = try await loop.submit {
                let benchLoop = NativeResumeBenchLoop(eventLoop: loop, settings: settings, pairNumbers: pairNumbers)
                return (
                    NIOLoopBound(benchLoop, eventLoop: loop), benchLoop.pairs.map { $0.started.futureResult },
                    benchLoop.done.futureResult
                )
            }.get()
            states.append(state)
            startedFutures.append(contentsOf: started)
            doneFutures.append(done)
        }

        var channels: [any Channel] = []
        do {
            let setupStart = benchNow()
            channels = try await benchConnectAll(total: settings.pairs * 2, batch: settings.connectBatch) { [states] in
                try await self.connectPlayer(index: $0, states: states)
            }
            let connected = benchNow()
            for (loop, state) in zip(self.loops, states) {
                loop.scheduleTask(in: .seconds(30)) {
                    state.value.failUnstartedPairs(BenchError("match not joined by both within 30 s of connecting"))
                }
            }
            for future in startedFutures {
                try await future.get()
            }
            let started = benchNow()
            benchPrint(
                "setup: \(channels.count) players connected and authenticated in "
                    + "\(benchFormat(Double(connected - setupStart) / 1e9, 2))s, \(settings.pairs) matches joined in "
                    + "\(benchFormat(Double(started - connected) / 1e9, 2))s")

            let period = UInt64((1e9 / settings.rate).rounded())
            let epoch = benchNow() + 20_000_000
            let firstRound = epoch + UInt64((settings.warmup * 1e9).rounded())
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit {
                    state.value.start(epoch: epoch, period: period, firstRound: firstRound)
                }.get()
            }
            try await benchSleep(until: firstRound)
            let meter = BenchUsageMeter(serverPID: settings.serverPID)
            // Every pair's rounds, each bounded by the timeout.
            let roundsTook = Double(settings.rounds) * (settings.interval + settings.timeout) + 30
            for (loop, state) in zip(self.loops, states) {
                loop.scheduleTask(in: .nanoseconds(Int64(roundsTook * 1e9))) {
                    state.value.giveUp()
                }
            }
            for future in doneFutures {
                try await future.get()
            }
            let usage = meter.read()
            let cutsEnded = benchNow()

            // Stop sending; let the last messages and acknowledgements arrive, then check.
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { state.value.stopSending() }.get()
            }
            try await Task.sleep(nanoseconds: 1_000_000_000)
            var results: [NativeResumeBenchLoopResult] = []
            var current: [any Channel] = []
            for (loop, state) in zip(self.loops, states) {
                let (result, open) = try await loop.submit { state.value.finish() }.get()
                results.append(result)
                current.append(contentsOf: open)
            }
            try await Task.sleep(nanoseconds: 200_000_000)
            await benchClose(channels + current)
            await self.failPending(states: states)
            return NativeResumeBenchReport(
                settings: settings, results: results, usage: usage, seconds: Double(cutsEnded - firstRound) / 1e9)
        } catch {
            for (loop, state) in zip(self.loops, states) {
                if let (_, open) = try? await loop.submit({ state.value.finish() }).get() {
                    await benchClose(open)
                }
            }
            await benchClose(channels)
            await self.failPending(states: states)
            throw error
        }
    }

    /// Connects player number `index` (pair index / 2, seat index % 2) and waits for AUTHENTICATED.
    private func connectPlayer(index: Int, states: [NIOLoopBound<NativeResumeBenchLoop>]) async throws -> any Channel {
        let settings = self.settings
        let pair = index / 2
        let seat = index % 2
        let loopIndex = pair % self.loops.count
        let localPair = pair / self.loops.count
        let loop = self.loops[loopIndex]
        let state = states[loopIndex]
        let authenticated = loop.makePromise(of: Void.self)
        let connect = nativeBenchBootstrap(loop: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let peer = state.value.pairs[localPair].peers[seat]
                    peer.authenticated = authenticated
                    try channel.pipeline.syncOperations.addHandler(NativeBenchConnection(peer: peer))
                }
            }
            .connect(to: settings.address)
        return try await benchAwaitReady(
            connect, ready: authenticated, readyMessage: "AUTHENTICATED", host: settings.host, port: settings.port,
            player: "player \(seat) of pair \(pair) (\(settings.deviceID(pair: pair, seat: seat)))")
    }

    private func failPending(states: [NIOLoopBound<NativeResumeBenchLoop>]) async {
        for (loop, state) in zip(self.loops, states) {
            _ = try? await loop.submit {
                state.value.failUnstartedPairs(BenchError("bench stopped"))
                state.value.giveUp()
            }.get()
        }
    }
}

// MARK: - Loop-confined state

/// Counters of one event loop.
struct NativeResumeBenchCounters: Sendable {
    /// Connections cut, RESUMED received, and rounds completed (first resent MATCH_DATA received).
    var cuts: UInt64 = 0
    var resumed: UInt64 = 0
    var roundsCompleted: UInt64 = 0
    /// Rounds that did not complete within the timeout, and reconnects that failed to connect.
    var roundsTimedOut: UInt64 = 0
    var reconnectsFailed: UInt64 = 0
    /// First MATCH_DATA after RESUMED that was not the frame lost by the cut.
    var firstNotLost: UInt64 = 0
    /// MATCH_DATA sent, and delivered.
    var sent: UInt64 = 0
    var delivered: UInt64 = 0
    /// Message numbers skipped, duplicates or out of order, and messages missing after the drain.
    var gaps: UInt64 = 0
    var outOfOrder: UInt64 = 0
    var missingAtEnd: UInt64 = 0
    var client = NativeBenchClientCounters()

    mutating func add(_ other: NativeResumeBenchCounters) {
        self.cuts += other.cuts
        self.resumed += other.resumed
        self.roundsCompleted += other.roundsCompleted
        self.roundsTimedOut += other.roundsTimedOut
        self.reconnectsFailed += other.reconnectsFailed
        self.firstNotLost += other.firstNotLost
        self.sent += other.sent
        self.delivered += other.delivered
        self.gaps += other.gaps
        self.outOfOrder += other.outOfOrder
        self.missingAtEnd += other.missingAtEnd
        self.client.add(other.client)
    }
}

/// What one loop measured.
struct NativeResumeBenchLoopResult: Sendable {
    var counters: NativeResumeBenchCounters
    var toResumed: BenchLatencyHistogram
    var toData: BenchLatencyHistogram
    /// Delivery latency of every MATCH_DATA (cut or not), for context.
    var delivery: BenchLatencyHistogram
}

/// One pair: seat 0 stays, seat 1 is cut every round.
final class NativeResumeBenchPair {
    var peers: [NativeBenchPeer] = []
    var authenticatedCount = 0
    var joinedCount = 0
    var createRequest: UInt32 = 0
    let started: EventLoopPromise<Void>
    var roundsDone = 0
    /// Bumped at each round, so a timeout knows whether its round is still on.
    var round = 0
    var roundStartedAt: UInt64 = 0
    /// Done with its rounds (or given up on).
    var finished = false

    var stayer: NativeBenchPeer { self.peers[0] }
    var cutter: NativeBenchPeer { self.peers[1] }

    init(started: EventLoopPromise<Void>) {
        self.started = started
    }
}

/// The pairs, schedule, cuts and measurements of one event loop. Loop-confined.
final class NativeResumeBenchLoop: NativeBenchOwner {
    let eventLoop: any EventLoop
    let settings: NativeResumeBenchSettings
    var pairs: [NativeResumeBenchPair] = []
    /// Succeeds once every pair has done its rounds (or was given up on).
    let done: EventLoopPromise<Void>
    private var counters = NativeResumeBenchCounters()
    private var toResumed = BenchLatencyHistogram()
    private var toData = BenchLatencyHistogram()
    private var delivery = BenchLatencyHistogram()
    private let schedule: BenchSendSchedule<NativeBenchPeer>
    private var pairOfPeer: [ObjectIdentifier: NativeResumeBenchPair] = [:]
    private var finishedPairs = 0
    private var stopped = false
    private var finished = false

    init(eventLoop: any EventLoop, settings: NativeResumeBenchSettings, pairNumbers: [Int]) {
        self.eventLoop = eventLoop
        self.settings = settings
        self.schedule = BenchSendSchedule(eventLoop: eventLoop)
        self.done = eventLoop.makePromise(of: Void.self)
        for number in pairNumbers {
            let pair = NativeResumeBenchPair(started: eventLoop.makePromise(of: Void.self))
            pair.peers = (0..<2).map { seat in
                NativeBenchPeer(
                    seat: seat, seats: 2, deviceID: settings.deviceID(pair: number, seat: seat), gameID: settings.gameID,
                    reliable: true, payloadSize: settings.payloadSize, acknowledgeEveryRead: true, owner: self)
            }
            pair.cutter.cutsAbruptly = settings.abrupt
            for peer in pair.peers { self.pairOfPeer[ObjectIdentifier(peer)] = pair }
            self.pairs.append(pair)
        }
        if self.pairs.isEmpty { self.done.succeed() }
    }

    /// Starts sending at `epoch`, and each pair's first cut at `firstRound` plus its phase.
    func start(epoch: UInt64, period: UInt64, firstRound: UInt64) {
        var window = BenchWindow()
        window.start = epoch
        self.schedule.start(self.pairs.flatMap { $0.peers }, epoch: epoch, period: period, window: window, stopAt: .max)
        let interval = self.settings.interval * 1e9
        let slot = interval / Double(max(1, self.pairs.count))
        for (index, pair) in self.pairs.shuffled().enumerated() {
            let at = firstRound + UInt64((Double(index) + Double.random(in: 0..<1)) * slot)
            self.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(at)) { self.beginRound(pair) }
        }
    }

    private func beginRound(_ pair: NativeResumeBenchPair) {
        guard !pair.finished, !self.stopped else { return }
        pair.round += 1
        pair.roundStartedAt = benchNow()
        pair.cutter.cutOnNextData = true
        let round = pair.round
        let timeout = Int64((self.settings.timeout * 1e9).rounded())
        self.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout)) {
            guard !pair.finished, pair.round == round, pair.roundsDone < round else { return }
            self.counters.roundsTimedOut += 1
            pair.cutter.cutOnNextData = false
            self.finishPair(pair)
        }
    }

    private func finishPair(_ pair: NativeResumeBenchPair) {
        guard !pair.finished else { return }
        pair.finished = true
        self.finishedPairs += 1
        if self.finishedPairs == self.pairs.count { self.done.succeed() }
    }

    /// The overall deadline passed: stop waiting for the pairs still going.
    func giveUp() {
        for pair in self.pairs where !pair.finished {
            self.counters.roundsTimedOut += 1
            self.finishPair(pair)
        }
        self.done.succeed()  // no-op if already done
    }

    func stopSending() {
        self.stopped = true
        self.schedule.stop()
        for pair in self.pairs {
            for peer in pair.peers { peer.sending = false }
        }
    }

    /// Checks that every message sent arrived, says GOODBYE, and hands back the measurements
    /// and the channels still open (the reconnected ones).
    func finish() -> (NativeResumeBenchLoopResult, [any Channel]) {
        var open: [any Channel] = []
        if !self.finished {
            self.finished = true
            self.stopSending()
            for pair in self.pairs where pair.joinedCount == 2 {
                for receiver in pair.peers {
                    let sender = pair.peers[1 - receiver.seat]
                    self.counters.sent += UInt64(sender.sentCount)
                    let got = receiver.lastCounter[sender.seat]
                    if sender.sentCount > got { self.counters.missingAtEnd += UInt64(sender.sentCount - got) }
                }
            }
            for pair in self.pairs {
                for peer in pair.peers {
                    self.counters.client.add(peer.counters)
                    if let channel = peer.channel { open.append(channel) }
                    peer.goodbye()
                }
            }
        }
        let result = NativeResumeBenchLoopResult(
            counters: self.counters, toResumed: self.toResumed, toData: self.toData, delivery: self.delivery)
        return (result, open)
    }

    func failUnstartedPairs(_ error: BenchError) {
        for pair in self.pairs {
            pair.started.fail(error)
        }
    }

    // MARK: NativeBenchOwner

    func peerAuthenticated(_ peer: NativeBenchPeer) {
        guard let pair = self.pairOfPeer[ObjectIdentifier(peer)] else { return }
        pair.authenticatedCount += 1
        if pair.authenticatedCount == 2 {
            pair.createRequest = pair.stayer.request(.createMatch(mode: "relay", maxPlayers: 2, label: "bench-resume"))
        }
    }

    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>) {
        guard let pair = self.pairOfPeer[ObjectIdentifier(peer)] else { return }
        switch result {
        case .success(.matchJoined(let info)):
            peer.matchID = info.matchID
            if peer.seat == 0, requestID == pair.createRequest {
                pair.cutter.request(.joinMatch(info.matchID))
            }
            pair.joinedCount += 1
            if pair.joinedCount == 2 { pair.started.succeed() }
        case .success(let other):
            peer.count(error: "unexpected response \(other)")
        case .failure(let error):
            pair.started.fail(BenchError("request \(requestID) of seat \(peer.seat) refused: \(error)"))
        }
    }

    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64) {
        self.counters.delivered += 1
        if delivered.sentAt <= now { self.delivery.record(now - delivered.sentAt) }
        switch delivered.order {
        case .next: break
        case .gap(let missing): self.counters.gaps += UInt64(missing)
        case .old: self.counters.outOfOrder += 1
        }
        guard delivered.firstAfterResume, let pair = self.pairOfPeer[ObjectIdentifier(peer)] else { return }
        self.toData.record(now - peer.cutAt)
        if delivered.sequence != peer.lostSequence { self.counters.firstNotLost += 1 }
        self.counters.roundsCompleted += 1
        pair.roundsDone += 1
        if pair.roundsDone >= self.settings.rounds {
            self.finishPair(pair)
            return
        }
        // The next cut one interval after this one started (at once if that has passed).
        let next = max(pair.roundStartedAt + UInt64((self.settings.interval * 1e9).rounded()), now)
        self.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(next)) { self.beginRound(pair) }
    }

    func peerCut(_ peer: NativeBenchPeer) {
        self.counters.cuts += 1
        let connect = nativeBenchConnect(NIOLoopBound(peer, eventLoop: self.eventLoop), loop: self.eventLoop, to: self.settings.address)
        connect.assumeIsolated().whenFailure { error in
            self.counters.reconnectsFailed += 1
            peer.count(error: "reconnect: \(benchErrorKind(error))")
            if let pair = self.pairOfPeer[ObjectIdentifier(peer)] { self.finishPair(pair) }
        }
    }

    func peerResumed(_ peer: NativeBenchPeer, now: UInt64) {
        self.counters.resumed += 1
        self.toResumed.record(now - peer.cutAt)
    }

    func peerLost(_ peer: NativeBenchPeer) {
        guard let pair = self.pairOfPeer[ObjectIdentifier(peer)] else { return }
        pair.started.fail(BenchError("seat \(peer.seat)'s connection closed before the match started"))
        self.finishPair(pair)
    }
}

// MARK: - Report

/// The results of a run, merged over loops, and how they are printed.
struct NativeResumeBenchReport: PrintableBenchReport {
    var settings: NativeResumeBenchSettings
    var counters = NativeResumeBenchCounters()
    var toResumed = BenchLatencyHistogram()
    var toData = BenchLatencyHistogram()
    var delivery = BenchLatencyHistogram()
    var usage: BenchUsage
    /// How long the cuts took, first to last.
    var seconds: Double

    init(settings: NativeResumeBenchSettings, results: [NativeResumeBenchLoopResult], usage: BenchUsage, seconds: Double) {
        self.settings = settings
        for result in results {
            self.counters.add(result.counters)
            self.toResumed.merge(result.toResumed)
            self.toData.merge(result.toData)
            self.delivery.merge(result.delivery)
        }
        self.usage = usage
        self.seconds = seconds
    }

    /// Messages lost, duplicated or reordered, and resumes that did not resend the lost frame first.
    var violations: UInt64 {
        let c = self.counters
        return c.gaps + c.outOfOrder + c.missingAtEnd + c.firstNotLost
            + (c.client.errors.keys.contains { $0.hasPrefix("sequence error") } ? 1 : 0)
    }

    func print(json: Bool) {
        let s = self.settings
        let c = self.counters
        benchPrint(
            "cuts: \(c.cuts) (target \(s.pairs * s.rounds)) in \(benchFormat(self.seconds, 1))s, RESUMED: \(c.resumed), "
                + "first resent MATCH_DATA: \(c.roundsCompleted), rounds timed out: \(c.roundsTimedOut), "
                + "reconnects failed: \(c.reconnectsFailed)")
        benchPrint("resume ms, close -> RESUMED: \(self.toResumed.summary)")
        benchPrint("resume ms, close -> first resent MATCH_DATA: \(self.toData.summary)")
        benchPrint(
            "messages: \(c.sent) sent, \(c.delivered) delivered; RELIABLE frames resent by clients: "
                + "\(c.client.reliableResent); duplicate frames dropped: \(c.client.duplicateFramesDropped); "
                + "delivery latency ms: p50=\(benchFormatMs(self.delivery.quantile(0.5))) "
                + "p99=\(benchFormatMs(self.delivery.quantile(0.99))) max=\(benchFormatMs(self.delivery.count > 0 ? self.delivery.maxValue : nil))")
        benchPrint(
            "exactly once, in order: \(c.gaps) missing (gaps), \(c.outOfOrder) duplicate or out of order, "
                + "\(c.missingAtEnd) undelivered at the end, \(c.firstNotLost) resumes not resending the lost frame first "
                + "=> violations: \(self.violations)")
        self.usage.print(threads: s.threads)

        var problems: [String] = []
        if self.violations > 0 { problems.append("\(self.violations) delivery violations (must be 0)") }
        if c.roundsTimedOut > 0 { problems.append("\(c.roundsTimedOut) rounds did not complete") }
        if c.client.connectionsLost > 0 { problems.append("\(c.client.connectionsLost) connections closed without a cut") }
        for (kind, count) in c.client.errors.sorted(by: { $0.key < $1.key }) { problems.append("\(count)× \(kind)") }
        for problem in problems { benchPrint("warning: \(problem)") }

        guard json else { return }
        var out = BenchJSON()
        out.add("bench", "resume")
        out.add("pairs", s.pairs)
        out.add("rounds", s.rounds)
        out.add("interval", s.interval)
        out.add("rate", s.rate)
        out.add("abrupt", s.abrupt)
        out.add("threads", s.threads)
        out.add("cuts", c.cuts)
        out.add("resumed", c.resumed)
        out.add("rounds_completed", c.roundsCompleted)
        out.add("rounds_timed_out", c.roundsTimedOut)
        out.add("reconnects_failed", c.reconnectsFailed)
        out.add("to_resumed_ms", object: self.toResumed.json)
        out.add("to_first_resent_ms", object: self.toData.json)
        out.add("delivery_ms", object: self.delivery.json)
        out.add("sent", c.sent)
        out.add("delivered", c.delivered)
        out.add("client_resent", c.client.reliableResent)
        out.add("duplicate_frames_dropped", c.client.duplicateFramesDropped)
        out.add("gaps", c.gaps)
        out.add("out_of_order", c.outOfOrder)
        out.add("missing_at_end", c.missingAtEnd)
        out.add("first_not_lost", c.firstNotLost)
        out.add("violations", self.violations)
        out.add("connections_lost", c.client.connectionsLost)
        out.add("errors", UInt64(c.client.errors.values.reduce(0, +)))
        self.usage.add(to: &out)
        benchPrint(out.line)
    }
}
