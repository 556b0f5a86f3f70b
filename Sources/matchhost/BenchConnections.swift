import ArgumentParser
import MatchHostWire
import NIOCore
import NIOPosix
import NIOSSL

/// `matchhost bench connections`: opens N connections, each saying hello and waiting for the
/// server's answer (Cat Race: PLAYER_CONNECTED, NOT_IN_MATCH; `--native`: HELLO, WELCOME, after
/// a TLS handshake with `--tls`); reports successes, failures by kind, time to all accepted,
/// the server's CPU per connection and its memory per idle connection.
struct BenchConnectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connections",
        abstract: "Open many idle connections and measure accept time, server CPU and memory per connection.",
        discussion: """
            Cat Race connections by default; --native opens native ones (HELLO, WELCOME: no \
            player is made), and --tls or --tls-ca makes each a TLS handshake first, to weigh \
            what TLS costs a connection. The server closes a native connection that has not \
            authenticated within its --idle-timeout, so keep --settle and --hold under it.
            """)

    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "Server port (default: 1955, or 7355 with --native).")
    var port: Int?

    @Flag(help: "Open native connections (HELLO, WELCOME) instead of Cat Race ones.")
    var native = false

    @OptionGroup(title: "TLS (with --native: a server started with --tls-certificate)")
    var tls: ClientTLSOptions

    @Option(
        name: .customLong("server-pid"),
        help: "Server process id, to report its RSS per connection (Linux /proc). Use a freshly started server: memory freed by earlier connections is reused, not returned.")
    var serverPID: Int32?

    @Option(help: "Number of connections.")
    var count = 10000

    @Flag(help: "Start every connect at once instead of in batches.")
    var burst = false

    @Option(help: "Connections in flight at once when not --burst.")
    var batch = 500

    @Option(help: "Seconds to wait, all connections idle, before measuring the server's RSS.")
    var settle: Double = 2

    @Option(help: "Seconds to hold the connections open after measuring.")
    var hold: Double = 0

    @Option(help: "Client event loop threads.")
    var threads = 1

    @Option(help: "Seconds allowed for one connect, and again for its NOT_IN_MATCH.")
    var timeout: Double = 30

    @Flag(help: "Also print one JSON line with all numbers.")
    var json = false

    func validate() throws {
        guard (0...65535).contains(self.serverPort) else { throw ValidationError("--port must be 0-65535") }
        guard self.native || self.tls.clientTLS == nil else { throw ValidationError("--tls and --tls-ca need --native") }
        guard self.count >= 1 else { throw ValidationError("--count must be at least 1") }
        guard self.batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        guard self.settle >= 0, self.settle.isFinite else { throw ValidationError("--settle must not be negative") }
        guard self.hold >= 0, self.hold.isFinite else { throw ValidationError("--hold must not be negative") }
        guard self.threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard self.timeout > 0, self.timeout.isFinite else { throw ValidationError("--timeout must be positive") }
    }

    private var serverPort: Int { self.port ?? (self.native ? 7355 : 1955) }

    /// What each connection says and waits for.
    private var greeting: BenchIdleConnection.Greeting {
        self.native ? .native : .catRace
    }

    func run() async throws {
        let tlsContext = try self.tls.clientTLS?.makeContext()
        let fileLimit = raiseOpenFileLimit()
        if fileLimit > 0, UInt64(self.count) + 64 > fileLimit {
            benchPrintError("warning: \(self.count) connections but the open file limit is \(fileLimit)")
        }
        let address = try benchResolve(host: self.host, port: self.serverPort)
        let serverPID = self.serverPID.map { String($0) }
        if let serverPID, BenchProc.residentKiB(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/status: no such process?")
            throw ExitCode.failure
        }
        let inFlight = self.burst ? self.count : min(self.batch, self.count)
        let timeout = TimeAmount.nanoseconds(Int64((self.timeout * 1e9).rounded()))
        let runID = benchRunID()
        let protocolName = self.native ? (tlsContext == nil ? "native" : "native+tls") : "catrace"
        benchPrint(
            "connections=\(self.count) protocol=\(protocolName) mode=\(self.burst ? "burst" : "batched(\(inFlight))") threads=\(self.threads) "
                + "server=\(self.host):\(self.serverPort)")

        let group = MultiThreadedEventLoopGroup(numberOfThreads: self.threads)
        let loops = Array(group.makeIterator())
        let rssBefore = serverPID.flatMap { BenchProc.residentKiB(pid: $0) }
        let serverCPUStart = serverPID.flatMap { BenchCPUSample(pid: $0) }
        let clientCPUStart = BenchCPUSample(pid: "self")

        // Open everything, at most `inFlight` at a time.
        let start = benchNow()
        var channels: [any Channel] = []
        var failures: [String: Int] = [:]
        var setupTimes: [UInt64] = []
        var lastAccepted = start
        channels.reserveCapacity(self.count)
        setupTimes.reserveCapacity(self.count)
        let total = self.count
        await withTaskGroup(of: BenchConnectOutcome.self) { tasks in
            var next = 0
            func startNext() {
                let index = next
                next += 1
                tasks.addTask {
                    await Self.open(
                        index: index, loop: loops[index % loops.count], address: address, host: self.host, tls: tlsContext,
                        greeting: self.greeting, playerID: "conn-\(runID)-\(index)", timeout: timeout)
                }
            }
            while next < inFlight { startNext() }
            while let outcome = await tasks.next() {
                switch outcome {
                case .opened(let channel, let took, let at):
                    channels.append(channel)
                    setupTimes.append(took)
                    lastAccepted = max(lastAccepted, at)
                case .failed(let kind):
                    failures[kind, default: 0] += 1
                }
                if next < total { startNext() }
            }
        }
        let finished = benchNow()
        let serverCPUEnd = serverPID.flatMap { BenchCPUSample(pid: $0) }
        let clientCPUEnd = BenchCPUSample(pid: "self")

        let succeeded = channels.count
        let failed = failures.values.reduce(0, +)
        let acceptSeconds = Double(lastAccepted - start) / 1e9
        let allSeconds = Double(finished - start) / 1e9
        setupTimes.sort()
        func quantile(_ q: Double) -> UInt64? {
            guard !setupTimes.isEmpty else { return nil }
            let rank = max(1, Int((q * Double(setupTimes.count)).rounded(.up)))
            return setupTimes[min(setupTimes.count, rank) - 1]
        }
        benchPrint(
            "opened: \(succeeded) ok, \(failed) failed; all accepted in \(benchFormat(acceptSeconds, 3))s "
                + "(\(benchFormat(acceptSeconds > 0 ? Double(succeeded) / acceptSeconds : .nan, 0))/s), "
                + "attempts done in \(benchFormat(allSeconds, 3))s")
        benchPrint(
            "connect\(tlsContext == nil ? "" : "+TLS")+\(self.greeting.answerName) ms: p50=\(benchFormatMs(quantile(0.5))) p99=\(benchFormatMs(quantile(0.99))) "
                + "max=\(benchFormatMs(setupTimes.last))")
        for (kind, number) in failures.sorted(by: { $0.value > $1.value }) {
            benchPrint("failed: \(number)× \(kind)")
        }
        var serverCPU: Double?
        if let serverCPUStart, let serverCPUEnd { serverCPU = serverCPUStart.percent(until: serverCPUEnd) }
        var clientCPU: Double?
        if let clientCPUStart, let clientCPUEnd { clientCPU = clientCPUStart.percent(until: clientCPUEnd) }
        // Everything the server did while they connected, per connection: with TLS, mostly the handshakes.
        var serverMicrosecondsPerConnection: Double?
        if let serverCPU {
            serverMicrosecondsPerConnection = succeeded > 0 ? serverCPU / 100 * allSeconds * 1e6 / Double(succeeded) : nil
            benchPrint(
                "server cpu while connecting: \(benchFormat(serverCPU))% of one core, "
                    + "\(serverMicrosecondsPerConnection.map { benchFormat($0, 0) } ?? "n/a") µs per connection")
        }
        benchPrint("client cpu while connecting: \(clientCPU.map { benchFormat($0) } ?? "n/a")% of one core")

        // Let everything go idle, then weigh the server.
        var rssAfter: UInt64?
        var perConnectionKiB: Double?
        if succeeded > 0, self.settle > 0 {
            try? await Task.sleep(nanoseconds: UInt64(self.settle * 1e9))
        }
        if let serverPID, let rssBefore {
            rssAfter = BenchProc.residentKiB(pid: serverPID)
            if let rssAfter, succeeded > 0 {
                perConnectionKiB = (Double(rssAfter) - Double(rssBefore)) / Double(succeeded)
            }
            benchPrint(
                "server rss: before=\(benchFormat(Double(rssBefore) / 1024)) MiB "
                    + "after=\(rssAfter.map { benchFormat(Double($0) / 1024) } ?? "n/a") MiB "
                    + "(settle \(benchFormat(self.settle, 1))s) => "
                    + "\(perConnectionKiB.map { benchFormat($0, 2) } ?? "n/a") KiB per idle connection")
        }

        if self.hold > 0 {
            try? await Task.sleep(nanoseconds: UInt64(self.hold * 1e9))
        }
        let stillOpen = channels.filter { $0.isActive }.count
        if stillOpen < succeeded {
            benchPrint("warning: \(succeeded - stillOpen) connections were closed by the server while idle")
        }
        let closes = channels.map { $0.close() }
        for close in closes { try? await close.get() }
        benchPrint("closed \(channels.count) connections")
        try? await group.shutdownGracefully()

        if self.json {
            var out = BenchJSON()
            out.add("bench", "connections")
            out.add("protocol", protocolName)
            out.add("count", self.count)
            out.add("burst", self.burst)
            out.add("in_flight", inFlight)
            out.add("threads", self.threads)
            out.add("succeeded", succeeded)
            out.add("failed", failed)
            var kinds = BenchJSON()
            for (kind, number) in failures.sorted(by: { $0.key < $1.key }) { kinds.add(kind, number) }
            out.add("failures", object: kinds)
            out.add("accept_seconds", acceptSeconds)
            out.add("accept_per_s", acceptSeconds > 0 ? Double(succeeded) / acceptSeconds : nil)
            out.add("setup_ms_p50", quantile(0.5).map { Double($0) / 1e6 })
            out.add("setup_ms_p99", quantile(0.99).map { Double($0) / 1e6 })
            out.add("setup_ms_max", setupTimes.last.map { Double($0) / 1e6 })
            out.add("server_cpu_pct_connecting", serverCPU)
            out.add("client_cpu_pct_connecting", clientCPU)
            out.add("server_cpu_us_per_connection", serverMicrosecondsPerConnection)
            out.add("server_rss_before_kib", rssBefore.map { Double($0) })
            out.add("server_rss_after_kib", rssAfter.map { Double($0) })
            out.add("kib_per_idle_connection", perConnectionKiB)
            out.add("closed_while_idle", succeeded - stillOpen)
            benchPrint(out.line)
        }

        if succeeded == 0 {
            benchPrintError("error: no connection to \(self.host):\(self.serverPort) succeeded")
            throw ExitCode.failure
        }
    }

    /// Connects (through a TLS handshake with `tls`), says its greeting and waits for the
    /// answer. Never throws: failures are counted.
    private static func open(
        index: Int, loop: any EventLoop, address: SocketAddress, host: String, tls: NIOSSLContext?,
        greeting: BenchIdleConnection.Greeting, playerID: String, timeout: TimeAmount
    ) async -> BenchConnectOutcome {
        let start = benchNow()
        let hello = loop.makePromise(of: Void.self)
        let connect = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(benchTLSHandler(context: tls, host: host)) }
                    try channel.pipeline.syncOperations.addHandler(BenchIdleConnection(greeting: greeting, playerID: playerID, hello: hello))
                }
            }
            .connect(to: address)
        connect.whenFailure { hello.fail($0) }
        let channel: any Channel
        do {
            channel = try await connect.get()
        } catch {
            return .failed(benchErrorKind(error))
        }
        channel.eventLoop.scheduleTask(in: timeout) {
            hello.fail(BenchError("no \(greeting.answerName) within the timeout"))
        }
        do {
            try await hello.futureResult.get()
        } catch {
            channel.close(promise: nil)
            return .failed(benchErrorKind(error))
        }
        let now = benchNow()
        return .opened(channel, took: now - start, at: now)
    }
}

/// How one connection attempt ended.
enum BenchConnectOutcome: Sendable {
    case opened(any Channel, took: UInt64, at: UInt64)
    case failed(String)
}

/// An idle client: hello, wait for the answer, then nothing.
final class BenchIdleConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What a connection says first, and what answer it waits for.
    enum Greeting: Sendable {
        /// PLAYER_CONNECTED, NOT_IN_MATCH.
        case catRace
        /// HELLO, WELCOME.
        case native

        var answerName: String {
            switch self {
            case .catRace: "NOT_IN_MATCH"
            case .native: "WELCOME"
            }
        }

        func encoded(playerID: String, allocator: ByteBufferAllocator) -> ByteBuffer {
            switch self {
            case .catRace:
                var buffer = allocator.buffer(capacity: 64)
                PlayerConnected(playerID: playerID, alias: "idle", continueMatch: true).encodeFrame(into: &buffer)
                return buffer
            case .native:
                return NativeFrame.hello(version: NativeFrame.protocolVersion, gameID: "matchhost").encodedFrame(allocator: allocator)
            }
        }

        func isAnswer(_ body: ByteBuffer) throws -> Bool {
            switch self {
            case .catRace:
                if case .notInMatch = try CatRaceServerMessage(frameBody: body) { return true }
            case .native:
                switch try NativeFrame(frameBody: body) {
                case .welcome: return true
                case .error(let error): throw BenchError("the server refused: \(error)")
                default: break
                }
            }
            return false
        }
    }

    private let greeting: Greeting
    private let playerID: String
    private let hello: EventLoopPromise<Void>
    private var frames = FrameAccumulator()
    private var answered = false

    init(greeting: Greeting, playerID: String, hello: EventLoopPromise<Void>) {
        self.greeting = greeting
        self.playerID = playerID
        self.hello = hello
    }

    func channelActive(context: ChannelHandlerContext) {
        // Behind a TLS handler this is written once its handshake is done.
        let buffer = self.greeting.encoded(playerID: self.playerID, allocator: context.channel.allocator)
        context.writeAndFlush(Self.wrapOutboundOut(buffer), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.answered else { return }
        var incoming = Self.unwrapInboundIn(data)
        self.frames.append(&incoming)
        do {
            while !self.answered, let body = try self.frames.nextFrame() {
                if try self.greeting.isAnswer(body) {
                    self.answered = true
                    self.hello.succeed()
                }
            }
        } catch {
            self.fail(BenchError("bad frame from server: \(error)"))
            context.close(promise: nil)
        }
        if self.answered { self.frames.reset() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.fail(BenchError("connection closed before \(self.greeting.answerName)"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.fail(error)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        guard !self.answered else { return }
        self.answered = true
        self.hello.fail(error)
    }
}
