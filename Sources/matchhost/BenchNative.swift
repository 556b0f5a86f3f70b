import ArgumentParser
import MatchHostWire
import NIOCore
import NIOPosix
import NIOSSL

/// `matchhost bench native`: K relay matches of P players over the native protocol, each
/// player sending SEND_DATA to all the others R times a second; prints delivered MATCH_DATA
/// per second, send-to-delivery latency, and CPU/RSS. The native twin of `bench catrace`.
struct BenchNativeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "native",
        abstract: "Drive relay matches over the native protocol and measure fan-out throughput and latency.")

    @OptionGroup(title: "Server and load generator")
    var target: NativeBenchTarget

    @Option(help: "Number of relay matches (K).")
    var matches = 100

    @Option(help: "Players per match (P, 2-16).")
    var players = 16

    @Option(help: "SEND_DATA per second per player (R).")
    var rate: Double = 5

    @Option(help: "Seconds measured, after the warmup.")
    var duration: Double = 20

    @Option(help: "Seconds of sending before the measured window.")
    var warmup: Double = 3

    @Flag(help: "Send in UNRELIABLE frames (the server relays them unreliably) instead of RELIABLE ones.")
    var unreliable = false

    @Option(
        name: .customLong("ack-delay"),
        help: "Seconds a player may hold its acknowledgement (piggybacking it on its own frames meanwhile), as the client library does (200 ms); 0: one ACK per read batch.")
    var ackDelay: Double = 0.2

    @Flag(
        name: .customLong("websocket"),
        help: "Connect over the web port's WebSocket (/native) instead of TCP: --port is then the server's --web-port.")
    var webSocket = false

    @OptionGroup(title: "TLS (a server started with --tls-certificate)")
    var tls: ClientTLSOptions

    @Option(name: .customLong("payload-size"), help: "SEND_DATA payload bytes (at least 13: send time, number, seat). The server's --max-inbound-rate (default 65536 bytes a second) must allow --rate x (this + about 40).")
    var payloadSize = 16

    func validate() throws {
        guard self.matches >= 1 else { throw ValidationError("--matches must be at least 1") }
        guard (2...16).contains(self.players) else { throw ValidationError("--players must be 2-16") }
        guard self.rate > 0, self.rate.isFinite else { throw ValidationError("--rate must be positive") }
        guard self.duration > 0, self.duration.isFinite else { throw ValidationError("--duration must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard self.ackDelay >= 0, self.ackDelay <= 10 else { throw ValidationError("--ack-delay must be 0-10 seconds") }
        guard (NativeBenchPayload.minimumSize...60_000).contains(self.payloadSize) else {
            throw ValidationError("--payload-size must be \(NativeBenchPayload.minimumSize)-60000")
        }
    }

    func run() async throws {
        let fileLimit = raiseOpenFileLimit()
        let connectionCount = self.matches * self.players
        if fileLimit > 0, UInt64(connectionCount) + 64 > fileLimit {
            benchPrintError("warning: \(connectionCount) connections but the open file limit is \(fileLimit)")
        }
        let address = try benchResolve(host: self.target.host, port: self.target.port)
        let serverPID = self.target.serverPID.map { String($0) }
        if let serverPID, BenchProc.cpuTicks(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/stat: no such process?")
            throw ExitCode.failure
        }
        let settings = NativeRelayBenchSettings(
            host: self.target.host, port: self.target.port, address: address, matches: self.matches, players: self.players,
            rate: self.rate, duration: self.duration, warmup: self.warmup, reliable: !self.unreliable,
            ackDelay: self.ackDelay, payloadSize: self.payloadSize, gameID: self.target.gameID, serverPID: serverPID,
            threads: self.target.threads, connectBatch: self.target.connectBatch, runID: benchRunID(), webSocket: self.webSocket,
            tls: try self.tls.clientTLS?.makeContext())

        benchPrint(
            "matches=\(settings.matches) players=\(settings.players) rate=\(benchFormat(settings.rate))/s "
                + "duration=\(benchFormatCompact(settings.duration))s warmup=\(benchFormatCompact(settings.warmup))s "
                + "\(settings.reliable ? "reliable" : "unreliable") ack=\(settings.ackPolicy) "
                + "payload=\(settings.payloadSize)B threads=\(settings.threads) connections=\(connectionCount) "
                + "transport=\(settings.webSocket ? "websocket" : "tcp")\(settings.tls == nil ? "" : "+tls") server=\(settings.host):\(settings.port)")

        try await runBenchReport(threads: settings.threads, json: self.target.json) { group in
            try await NativeRelayBenchRun(settings: settings, group: group).run()
        }
    }
}

/// Everything a run needs, copied out of the command so tasks and loops can share it.
struct NativeRelayBenchSettings: Sendable {
    var host: String
    var port: Int
    var address: SocketAddress
    var matches: Int
    var players: Int
    var rate: Double
    var duration: Double
    var warmup: Double
    var reliable: Bool
    var ackDelay: Double
    var payloadSize: Int
    var gameID: String
    var serverPID: String?
    var threads: Int
    var connectBatch: Int
    var runID: String
    /// Over the web port's WebSocket instead of TCP.
    var webSocket: Bool
    /// Inside TLS, with this context.
    var tls: NIOSSLContext?

    func deviceID(match: Int, seat: Int) -> String { "bench-\(self.runID)-\(match)-\(seat)" }

    var ackPolicy: String {
        self.ackDelay == 0 ? "every-read" : "piggyback+\(benchFormatCompact(self.ackDelay * 1000))ms"
    }
}

// MARK: - Run

/// One run: setup, sending, measurement, teardown.
struct NativeRelayBenchRun: Sendable {
    let settings: NativeRelayBenchSettings
    let loops: [any EventLoop]

    init(settings: NativeRelayBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> NativeRelayBenchReport {
        let settings = self.settings

        // One state object per loop, holding the matches placed on it (match m -> loop m % threads).
        let (states, startedFutures) = try await benchPlaceGroups(settings.matches, on: self.loops) { loop, numbers in
            let benchLoop = NativeRelayBenchLoop(eventLoop: loop, settings: settings, matchNumbers: numbers)
            return (benchLoop, benchLoop.matches.map { $0.started.futureResult })
        }

        let phases = BenchPhases(
            warmup: settings.warmup, seconds: settings.duration, drain: .seconds(1), goodbye: .milliseconds(200),
            serverPID: settings.serverPID, notStarted: "match not joined by all within 30 s of connecting")
        // A match is created once its players are all authenticated.
        let (results, connections, usage) = try await runLoadBench(
            loops: self.loops, states: states, started: startedFutures, phases: phases,
            connect: {
                try await benchConnectAll(total: settings.matches * settings.players, batch: settings.connectBatch) { [states] in
                    try await self.connectPlayer(index: $0, states: states)
                }
            },
            setupLine: { connections, connectSeconds, startSeconds in
                "setup: \(connections) players connected and authenticated in \(benchFormat(connectSeconds, 2))s, "
                    + "\(settings.matches) matches joined in \(benchFormat(startSeconds, 2))s"
            })
        return NativeRelayBenchReport(settings: settings, connections: connections, results: results, usage: usage)
    }

    /// Connects player number `index` (match index / P, seat index % P) and waits for AUTHENTICATED.
    private func connectPlayer(index: Int, states: [NIOLoopBound<NativeRelayBenchLoop>]) async throws -> any Channel {
        let settings = self.settings
        let match = index / settings.players
        let seat = index % settings.players
        let loopIndex = match % self.loops.count
        let localMatch = match / self.loops.count
        let loop = self.loops[loopIndex]
        let state = states[loopIndex]
        let authenticated = loop.makePromise(of: Void.self)
        let connect = nativeBenchBootstrap(loop: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let peer = state.value.matches[localMatch].peers[seat]
                    peer.authenticated = authenticated
                    if let tls = settings.tls {
                        try channel.pipeline.syncOperations.addHandler(benchTLSHandler(context: tls, host: settings.host))
                    }
                    if settings.webSocket {
                        let bound = NIOLoopBound(peer, eventLoop: channel.eventLoop)
                        try BenchWebSocket.initialize(channel, host: settings.host, port: settings.port) {
                            NativeBenchConnection(peer: bound.value)
                        }
                    } else {
                        try channel.pipeline.syncOperations.addHandler(NativeBenchConnection(peer: peer))
                    }
                }
            }
            .connect(to: settings.address)
        return try await benchAwaitReady(
            connect, ready: authenticated, readyMessage: "AUTHENTICATED", host: settings.host, port: settings.port,
            player: "player \(seat) of match \(match) (\(settings.deviceID(match: match, seat: seat)))")
    }
}

// MARK: - Loop-confined state

/// Counters of one event loop. "In window" means the event happened inside the measured window.
struct NativeRelayBenchCounters: BenchCounterSet {
    /// SEND_DATA sent in the window, and sends skipped (player not in a match).
    var sent: UInt64 = 0
    var skipped: UInt64 = 0
    /// MATCH_DATA that arrived in the window.
    var delivered: UInt64 = 0
    /// MATCH_DATA (arriving any time until the end) for sends made in the window.
    var deliveredOfWindowSends: UInt64 = 0
    /// Message numbers skipped in a sender's sequence (lost; for UNRELIABLE, dropped by the server).
    var gaps: UInt64 = 0
    /// MATCH_DATA whose number was not above the last from its sender (duplicate or out of order).
    var outOfOrder: UInt64 = 0
    /// MATCH_DATA with a send time in the future.
    var unmatched: UInt64 = 0
    /// After the drain: messages sent that never arrived, over every (sender, receiver).
    var undelivered: UInt64 = 0
    /// ACK frames the players sent, and received, in the window.
    var acksSentInWindow: UInt64 = 0
    var acksReceivedInWindow: UInt64 = 0
    /// The players' protocol counters.
    var client = NativeBenchClientCounters()

    mutating func add(_ other: NativeRelayBenchCounters) {
        self.sent += other.sent
        self.skipped += other.skipped
        self.delivered += other.delivered
        self.deliveredOfWindowSends += other.deliveredOfWindowSends
        self.gaps += other.gaps
        self.outOfOrder += other.outOfOrder
        self.unmatched += other.unmatched
        self.undelivered += other.undelivered
        self.acksSentInWindow += other.acksSentInWindow
        self.acksReceivedInWindow += other.acksReceivedInWindow
        self.client.add(other.client)
    }
}

/// What one loop measured.
typealias NativeRelayBenchLoopResult = BenchMeasurements<NativeRelayBenchCounters>

/// One relay match: its players, by bench seat.
final class NativeRelayBenchMatch {
    var peers: [NativeBenchPeer] = []
    var authenticatedCount = 0
    var joinedCount = 0
    var matchID: UInt64 = 0
    var createRequest: UInt32 = 0
    let started: EventLoopPromise<Void>

    init(started: EventLoopPromise<Void>) {
        self.started = started
    }
}

/// The players, matches, send schedule and measurements of one event loop. Loop-confined.
final class NativeRelayBenchLoop: NativeBenchOwner, BenchLoop {
    let eventLoop: any EventLoop
    let settings: NativeRelayBenchSettings
    var matches: [NativeRelayBenchMatch] = []
    private var counters = NativeRelayBenchCounters()
    private var histogram = BenchLatencyHistogram()
    private var window = BenchWindow()
    private var finished = false
    private let schedule: BenchSendSchedule<NativeBenchPeer>
    /// Which match each peer plays in, by object identity.
    private var matchOfPeer: [ObjectIdentifier: NativeRelayBenchMatch] = [:]

    init(eventLoop: any EventLoop, settings: NativeRelayBenchSettings, matchNumbers: [Int]) {
        self.eventLoop = eventLoop
        self.settings = settings
        self.schedule = BenchSendSchedule(eventLoop: eventLoop)
        for number in matchNumbers {
            let match = NativeRelayBenchMatch(started: eventLoop.makePromise(of: Void.self))
            match.peers = (0..<settings.players).map { seat in
                NativeBenchPeer(
                    seat: seat, seats: settings.players, deviceID: settings.deviceID(match: number, seat: seat),
                    gameID: settings.gameID, reliable: settings.reliable, payloadSize: settings.payloadSize,
                    acknowledgeEveryRead: settings.ackDelay == 0, owner: self)
            }
            for peer in match.peers { self.matchOfPeer[ObjectIdentifier(peer)] = match }
            self.matches.append(match)
        }
    }

    private var allPeers: [NativeBenchPeer] { self.matches.flatMap { $0.peers } }

    /// Starts every player's sends at `epoch` plus a random phase; sending stops at the window's end.
    func start(epoch: UInt64, window: BenchWindow) {
        self.window = window
        let period = UInt64((1e9 / self.settings.rate).rounded())
        self.schedule.start(self.allPeers, epoch: epoch, period: period, window: window, stopAt: window.end)
        var atStart = (sent: UInt64(0), received: UInt64(0))
        self.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(window.start)) {
            atStart = self.acknowledgementTotals()
        }
        self.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(window.end)) {
            let atEnd = self.acknowledgementTotals()
            self.counters.acksSentInWindow = atEnd.sent - atStart.sent
            self.counters.acksReceivedInWindow = atEnd.received - atStart.received
        }
        if self.settings.ackDelay > 0 {
            self.scheduleAcknowledgements(delay: UInt64((self.settings.ackDelay * 1e9).rounded()))
        }
    }

    private func acknowledgementTotals() -> (sent: UInt64, received: UInt64) {
        var totals = (sent: UInt64(0), received: UInt64(0))
        for match in self.matches {
            for peer in match.peers {
                totals.sent += peer.counters.acksSent
                totals.received += peer.counters.acksReceived
            }
        }
        return totals
    }

    /// With `--ack-delay`: a player acknowledges what its own frames did not once the oldest
    /// of it has waited the delay. Checked every tenth of the delay, so the ACKs of different
    /// players are spread out as their arrivals are, not sent in one burst.
    private func scheduleAcknowledgements(delay: UInt64) {
        let tick = max(delay / 10, 1_000_000)
        self.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(tick))) {
            guard !self.finished else { return }
            let deadline = benchNow() &- delay
            for match in self.matches {
                for peer in match.peers { peer.acknowledgePending(receivedBefore: deadline) }
            }
            self.scheduleAcknowledgements(delay: delay)
        }
    }

    /// Stops sending and hands back the measurements. Every player then says GOODBYE, so the
    /// server ends its session (and the matches) at once instead of after the session grace.
    func finish() -> NativeRelayBenchLoopResult {
        if !self.finished {
            self.finished = true
            self.schedule.stop()
            self.counters.sent = self.schedule.sentInWindow
            self.counters.skipped = self.schedule.skippedInWindow
            // Everything sent has had the drain to arrive: what is missing was lost (or is stuck).
            for match in self.matches where match.joinedCount == match.peers.count {
                for receiver in match.peers {
                    for sender in match.peers where sender !== receiver {
                        let got = receiver.lastCounter[sender.seat]
                        if sender.sentCount > got { self.counters.undelivered += UInt64(sender.sentCount - got) }
                    }
                }
            }
            for match in self.matches {
                for peer in match.peers {
                    self.counters.client.add(peer.counters)
                    peer.goodbye()
                }
            }
        }
        return NativeRelayBenchLoopResult(counters: self.counters, histogram: self.histogram)
    }

    func failUnstartedGroups(_ error: BenchError) {
        for match in self.matches {
            match.started.fail(error)  // no-op for a match already started
        }
    }

    // MARK: NativeBenchOwner

    func peerAuthenticated(_ peer: NativeBenchPeer) {
        guard let match = self.matchOfPeer[ObjectIdentifier(peer)] else { return }
        match.authenticatedCount += 1
        if match.authenticatedCount == match.peers.count {
            // Everyone is here: seat 0 creates the match, the others join when it answers.
            match.createRequest = match.peers[0].request(
                .createMatch(mode: "relay", maxPlayers: UInt8(match.peers.count), label: "bench"))
        }
    }

    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>) {
        guard let match = self.matchOfPeer[ObjectIdentifier(peer)] else { return }
        switch result {
        case .success(.matchJoined(let info)):
            peer.matchID = info.matchID
            if peer.seat == 0, requestID == match.createRequest {
                match.matchID = info.matchID
                for other in match.peers.dropFirst() { other.request(.joinMatch(info.matchID)) }
            }
            match.joinedCount += 1
            if match.joinedCount == match.peers.count { match.started.succeed() }
        case .success(let other):
            peer.count(error: "unexpected response \(other)")
        case .failure(let error):
            match.started.fail(BenchError("request \(requestID) of seat \(peer.seat) refused: \(error)"))
        }
    }

    @inline(__always)
    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64) {
        let sentAt = delivered.sentAt
        guard sentAt <= now else {
            self.counters.unmatched += 1
            return
        }
        if self.window.contains(now) {
            self.counters.delivered += 1
            self.histogram.record(now - sentAt)
        }
        if self.window.contains(sentAt) { self.counters.deliveredOfWindowSends += 1 }
        switch delivered.order {
        case .next: break
        case .gap(let missing): self.counters.gaps += UInt64(missing)
        case .old: self.counters.outOfOrder += 1
        }
    }

    func peerCut(_ peer: NativeBenchPeer) {}

    func peerResumed(_ peer: NativeBenchPeer, now: UInt64) {}

    func peerLost(_ peer: NativeBenchPeer) {
        if let match = self.matchOfPeer[ObjectIdentifier(peer)] {
            match.started.fail(BenchError("seat \(peer.seat)'s connection closed before the match started"))
        }
    }
}

// MARK: - Report

/// The results of a run, merged over loops, and how they are printed.
struct NativeRelayBenchReport: PrintableBenchReport {
    var settings: NativeRelayBenchSettings
    var connections: Int
    var counters = NativeRelayBenchCounters()
    var histogram = BenchLatencyHistogram()
    var usage: BenchUsage

    init(settings: NativeRelayBenchSettings, connections: Int, results: [NativeRelayBenchLoopResult], usage: BenchUsage) {
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
        let targetSends = Double(s.matches * s.players) * s.rate
        let sentPerSecond = Double(c.sent) / seconds
        let deliveredPerSecond = Double(c.delivered) / seconds
        let expected = c.sent * UInt64(s.players - 1)
        let ratio = expected > 0 ? Double(c.deliveredOfWindowSends) / Double(expected) : Double.nan
        let violations = s.reliable ? c.gaps + c.outOfOrder + c.undelivered : c.outOfOrder

        benchPrint(
            "sends: \(benchFormat(sentPerSecond))/s (target \(benchFormat(targetSends))/s)  "
                + "MATCH_DATA delivered: \(benchFormat(deliveredPerSecond))/s "
                + "(delivered/expected \(benchFormat(ratio, 4)): \(c.deliveredOfWindowSends)/\(expected))")
        benchPrint("latency send->delivery ms: \(self.histogram.summary)")
        benchPrint(
            "order: \(c.gaps) missing (gaps), \(c.outOfOrder) duplicate or out of order, "
                + "\(c.undelivered) undelivered 1 s after the last send\(s.reliable ? "" : " (unreliable: gaps are drops)")  "
                + "ACK frames: \(benchFormat(Double(c.acksSentInWindow) / seconds))/s sent, "
                + "\(benchFormat(Double(c.acksReceivedInWindow) / seconds))/s received  "
                + "pings answered: \(c.client.pingsAnswered)")
        self.usage.print(threads: s.threads, deliveredPerSecond: deliveredPerSecond)

        var problems: [String] = []
        if c.client.connectionsLost > 0 { problems.append("\(c.client.connectionsLost) connections closed during the run") }
        if violations > 0 { problems.append("\(violations) delivery violations (must be 0)") }
        if c.unmatched > 0 { problems.append("\(c.unmatched) MATCH_DATA with a send time in the future") }
        if c.client.duplicateFramesDropped > 0 {
            problems.append("\(c.client.duplicateFramesDropped) duplicate RELIABLE frames dropped")
        }
        for (kind, count) in c.client.errors.sorted(by: { $0.key < $1.key }) { problems.append("\(count)× \(kind)") }
        if let serverCPU = self.usage.serverCPU, serverCPU > 90 {
            problems.append(
                "the server used \(benchFormat(serverCPU))% of one core; its native world runs on one event loop, "
                    + "so it is probably saturated and the latency above is mostly queueing")
        }
        if let clientCPU = self.usage.clientCPU, clientCPU > 85 * Double(s.threads) {
            problems.append("the client used \(benchFormat(clientCPU))% CPU: it may be the bottleneck (try --threads)")
        }
        if expected > 0, ratio < 0.95 {
            problems.append("only \(benchFormat(ratio * 100))% of the expected MATCH_DATA arrived")
        }
        if sentPerSecond < targetSends * 0.97 {
            problems.append("sends below target (client overloaded)")
        }
        for problem in problems { benchPrint("warning: \(problem)") }

        guard json else { return }
        var out = BenchJSON()
        out.add("bench", "native")
        out.add("matches", s.matches)
        out.add("players", s.players)
        out.add("rate", s.rate)
        out.add("duration", s.duration)
        out.add("warmup", s.warmup)
        out.add("reliable", s.reliable)
        out.add("ack_delay", s.ackDelay)
        out.add("payload_size", s.payloadSize)
        out.add("transport", s.webSocket ? "websocket" : "tcp")
        out.add("threads", s.threads)
        out.add("connections", self.connections)
        out.add("sends_target_per_s", targetSends)
        out.add("sends_per_s", sentPerSecond)
        out.add("sent", c.sent)
        out.add("skipped", c.skipped)
        out.add("delivered_per_s", deliveredPerSecond)
        out.add("delivered", c.delivered)
        out.add("delivered_of_window_sends", c.deliveredOfWindowSends)
        out.add("expected", expected)
        out.add("delivered_ratio", ratio)
        out.add("latency_ms", object: self.histogram.json)
        self.usage.add(to: &out, deliveredPerSecond: deliveredPerSecond)
        out.add("gaps", c.gaps)
        out.add("out_of_order", c.outOfOrder)
        out.add("undelivered", c.undelivered)
        out.add("violations", violations)
        out.add("acks_sent_per_s", Double(c.acksSentInWindow) / seconds)
        out.add("acks_received_per_s", Double(c.acksReceivedInWindow) / seconds)
        out.add("reliable_received", c.client.reliableReceived)
        out.add("duplicate_frames_dropped", c.client.duplicateFramesDropped)
        out.add("pings_answered", c.client.pingsAnswered)
        out.add("connections_lost", c.client.connectionsLost)
        out.add("unmatched", c.unmatched)
        out.add("errors", UInt64(c.client.errors.values.reduce(0, +)))
        benchPrint(out.line)
    }
}
