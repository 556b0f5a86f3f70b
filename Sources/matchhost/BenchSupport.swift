import ArgumentParser
import MatchHostCore
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Shared pieces of the `matchhost bench` load generators: clock, latency histogram,
// /proc readings, error names and output formatting.

/// The monotonic clock the benches use, in nanoseconds (the same clock as `NIODeadline`).
@inline(__always)
func benchNow() -> UInt64 {
    NIODeadline.now().uptimeNanoseconds
}

/// A bench could not run; `description` is printed as is.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Resolves the server's address, or prints why not and fails the command.
func benchResolve(host: String, port: Int) throws -> SocketAddress {
    do {
        return try SocketAddress.makeAddressResolvingHost(host, port: port)
    } catch {
        benchPrintError("error: cannot resolve \(host): \(error)")
        throw ExitCode.failure
    }
}

// MARK: - Latency histogram

/// A log-linear histogram of nanosecond values: exact below 1024 ns, then 512 buckets per
/// power of two (under 0.2 % relative error, about 1 µs wide at 1 ms). Fixed size (28,672
/// counters), so recording never allocates; histograms of several event loops merge by adding.
struct BenchLatencyHistogram: Sendable {
    private static let subBucketBits = 9
    private static let subBuckets = 1 << subBucketBits  // 512
    private static let linearLimit = 2 << subBucketBits  // 1024
    private static let bucketCount = linearLimit + (64 - subBucketBits - 1) * subBuckets

    private(set) var counts: [UInt64]
    private(set) var count: UInt64 = 0
    private(set) var sum: UInt64 = 0
    private(set) var maxValue: UInt64 = 0

    init() {
        self.counts = Array(repeating: 0, count: Self.bucketCount)
    }

    @inline(__always)
    private static func index(of value: UInt64) -> Int {
        if value < UInt64(linearLimit) { return Int(value) }
        let msb = 63 - value.leadingZeroBitCount
        let shift = msb - subBucketBits
        return linearLimit + (shift - 1) * subBuckets + Int(value >> UInt64(shift)) - subBuckets
    }

    private static func range(of index: Int) -> (lower: UInt64, width: UInt64) {
        if index < linearLimit { return (UInt64(index), 1) }
        let k = index - linearLimit
        let shift = k / subBuckets + 1
        let mantissa = UInt64(k % subBuckets + subBuckets)
        return (mantissa << UInt64(shift), UInt64(1) << UInt64(shift))
    }

    /// Records one value in nanoseconds.
    @inline(__always)
    mutating func record(_ nanoseconds: UInt64) {
        self.counts[Self.index(of: nanoseconds)] &+= 1
        self.count &+= 1
        self.sum &+= nanoseconds
        if nanoseconds > self.maxValue { self.maxValue = nanoseconds }
    }

    /// Adds another histogram's values to this one.
    mutating func merge(_ other: BenchLatencyHistogram) {
        for index in other.counts.indices where other.counts[index] != 0 {
            self.counts[index] &+= other.counts[index]
        }
        self.count &+= other.count
        self.sum &+= other.sum
        self.maxValue = max(self.maxValue, other.maxValue)
    }

    /// The value at quantile `q` (0...1) in nanoseconds (bucket midpoint), nil when empty.
    func quantile(_ q: Double) -> UInt64? {
        guard self.count > 0 else { return nil }
        let rank = max(1, UInt64((q * Double(self.count)).rounded(.up)))
        var seen: UInt64 = 0
        for index in self.counts.indices where self.counts[index] != 0 {
            seen += self.counts[index]
            if seen >= rank {
                let (lower, width) = Self.range(of: index)
                return min(lower + width / 2, self.maxValue)
            }
        }
        return self.maxValue
    }

    /// The mean in nanoseconds, nil when empty.
    var mean: Double? {
        self.count > 0 ? Double(self.sum) / Double(self.count) : nil
    }
}

// MARK: - /proc readings

/// CPU time and memory of a process, read from /proc (Linux only).
enum BenchProc {
    /// Clock ticks per second of /proc/PID/stat times.
    static let clockTicksPerSecond: Double = {
        #if canImport(Glibc)
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        #else
        let ticks = sysconf(_SC_CLK_TCK)
        #endif
        return ticks > 0 ? Double(ticks) : 100
    }()

    /// utime + stime of `pid` ("self" for this process) in clock ticks: fields 14 and 15 of
    /// /proc/PID/stat, counted after the parenthesised command name (which may hold spaces).
    static func cpuTicks(pid: String) -> UInt64? {
        guard let text = self.read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Fields after ")" start with field 3 (state), so utime (14) is at offset 11.
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return user + system
    }

    /// VmRSS of `pid` in KiB, from /proc/PID/status.
    static func residentKiB(pid: String) -> UInt64? {
        guard let text = self.read("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let number = line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
            return number.flatMap { UInt64($0) }
        }
        return nil
    }

    /// Read and write syscalls made so far by `pid` (`syscr`, `syscw` of /proc/PID/io).
    static func syscalls(pid: String) -> (reads: UInt64, writes: UInt64)? {
        guard let text = self.read("/proc/\(pid)/io") else { return nil }
        var reads: UInt64?
        var writes: UInt64?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("syscr:") { reads = UInt64(line.dropFirst("syscr:".count).trimmingCharacters(in: .whitespaces)) }
            if line.hasPrefix("syscw:") { writes = UInt64(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces)) }
        }
        guard let reads, let writes else { return nil }
        return (reads, writes)
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A CPU-time reading of one process, for "percent of one core" over an interval.
struct BenchCPUSample: Sendable {
    var ticks: UInt64
    var at: UInt64
    /// Read and write syscalls so far, when /proc/PID/io is readable.
    var syscalls: (reads: UInt64, writes: UInt64)?

    init?(pid: String) {
        guard let ticks = BenchProc.cpuTicks(pid: pid) else { return nil }
        self.ticks = ticks
        self.at = benchNow()
        self.syscalls = BenchProc.syscalls(pid: pid)
    }

    /// Read and write syscalls per second between `self` and `later`.
    func syscallRates(until later: BenchCPUSample) -> (reads: Double, writes: Double)? {
        let seconds = Double(later.at &- self.at) / 1e9
        guard seconds > 0, let before = self.syscalls, let after = later.syscalls else { return nil }
        return (Double(after.reads &- before.reads) / seconds, Double(after.writes &- before.writes) / seconds)
    }

    /// CPU use between `self` and `later` as a percentage of one core.
    func percent(until later: BenchCPUSample) -> Double {
        let seconds = Double(later.at &- self.at) / 1e9
        guard seconds > 0 else { return 0 }
        return Double(later.ticks &- self.ticks) / BenchProc.clockTicksPerSecond / seconds * 100
    }
}

// MARK: - Errors and formatting

/// A short, stable name for a connect or I/O error, used to group failures.
func benchErrorKind(_ error: any Error) -> String {
    if let io = error as? IOError {
        return "\(String(cString: strerror(io.errnoCode))) (errno \(io.errnoCode))"
    }
    if let connection = error as? NIOConnectionError {
        if let first = connection.connectionErrors.first { return benchErrorKind(first.error) }
        if let dns = connection.dnsAError ?? connection.dnsAAAAError { return "name resolution: \(dns)" }
        return "\(connection)"
    }
    if let channel = error as? ChannelError {
        switch channel {
        case .connectTimeout: return "connect timeout"
        case .ioOnClosedChannel, .alreadyClosed, .eof: return "connection closed"
        default: return "\(channel)"
        }
    }
    return "\(error)"
}

/// `value` with `decimals` digits after the point.
func benchFormat(_ value: Double, _ decimals: Int = 1) -> String {
    guard value.isFinite else { return "n/a" }
    return String(format: "%.\(decimals)f", value)
}

/// A number of seconds or a rate without trailing zeros: 20, 0.5, 2.25.
func benchFormatCompact(_ value: Double) -> String {
    guard value.isFinite else { return "n/a" }
    if value == value.rounded() { return String(format: "%.0f", value) }
    var text = String(format: "%.3f", value)
    while text.hasSuffix("0") { text.removeLast() }
    return text
}

/// Nanoseconds as milliseconds, with enough digits for sub-millisecond values.
func benchFormatMs(_ nanoseconds: UInt64?) -> String {
    guard let nanoseconds else { return "n/a" }
    let ms = Double(nanoseconds) / 1e6
    return benchFormat(ms, ms < 10 ? 3 : 1)
}

/// Builds one JSON object line, keys in insertion order.
struct BenchJSON {
    private var fields: [String] = []

    mutating func add(_ key: String, _ value: Double?) {
        let text: String
        if let value, value.isFinite { text = String(format: "%.4f", value) } else { text = "null" }
        self.fields.append("\(Self.quote(key)):\(text)")
    }

    mutating func add(_ key: String, _ value: Int) { self.fields.append("\(Self.quote(key)):\(value)") }
    mutating func add(_ key: String, _ value: UInt64) { self.fields.append("\(Self.quote(key)):\(value)") }
    mutating func add(_ key: String, _ value: Bool) { self.fields.append("\(Self.quote(key)):\(value)") }
    mutating func add(_ key: String, _ value: String) { self.fields.append("\(Self.quote(key)):\(Self.quote(value))") }
    mutating func add(_ key: String, object: BenchJSON) { self.fields.append("\(Self.quote(key)):\(object.line)") }

    var line: String { "{" + self.fields.joined(separator: ",") + "}" }

    private static func quote(_ string: String) -> String { jsonStringLiteral(string) }
}

/// Prints a line to standard output and flushes it (stdout may be a pipe).
func benchPrint(_ line: String) {
    print(line)
    fflush(nil)
}

/// Prints a line to standard error.
func benchPrintError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// A random run id, so player ids of concurrent or successive runs never collide.
func benchRunID() -> String {
    String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
}

/// Sleeps until the monotonic time `deadline` (nanoseconds, `benchNow()` clock).
func benchSleep(until deadline: UInt64) async throws {
    let now = benchNow()
    if deadline > now {
        try await Task.sleep(nanoseconds: deadline - now)
    }
}

// MARK: - Measured window and periodic sends

/// The measured window of a run, in monotonic nanoseconds (`benchNow()` clock); empty until set.
struct BenchWindow: Sendable {
    var start = UInt64.max
    var end = UInt64.max

    @inline(__always)
    func contains(_ time: UInt64) -> Bool {
        time >= self.start && time < self.end
    }

    var seconds: Double { Double(self.end &- self.start) / 1e9 }

    /// A common start for every loop's senders (20 ms from now, so every loop gets the
    /// message in time) and the measured window: `warmup` seconds after it, `duration` long.
    static func afterWarmup(_ warmup: Double, duration: Double) -> (epoch: UInt64, window: BenchWindow) {
        let epoch = benchNow() + 20_000_000
        var window = BenchWindow()
        window.start = epoch + UInt64((warmup * 1e9).rounded())
        window.end = window.start + UInt64((duration * 1e9).rounded())
        return (epoch, window)
    }
}

/// One of the things a ``BenchSendSchedule`` fires periodically (a racer's tap, a player's send).
protocol BenchPeriodicSender: AnyObject {
    /// When the next send is due (monotonic ns); owned by the schedule.
    var nextDue: UInt64 { get set }
    /// Sends now if possible; false if skipped (not in a running match, say).
    func fire(now: UInt64) -> Bool
}

/// The periodic sends of one event loop: every sender fires once per `period`, with phases
/// spread evenly over the period (one random slot each), so the loop's sends are evenly spaced.
/// Every sender has the same period, so their order never changes: a cursor walks round the
/// ring and each tick fires what is due. Due times are absolute, so a late tick does not lower
/// the rate. Loop-confined.
final class BenchSendSchedule<Sender: BenchPeriodicSender> {
    let eventLoop: any EventLoop
    /// Sends made, and sends skipped, inside the window.
    private(set) var sentInWindow: UInt64 = 0
    private(set) var skippedInWindow: UInt64 = 0
    private var senders: [Sender] = []
    private var cursor = 0
    private var period: UInt64 = 0
    private var window = BenchWindow()
    private var stopAt = UInt64.max

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Starts firing `senders` at `epoch` plus a random phase each, every `period` ns, until
    /// `stopAt` (or ``stop()``); counts what falls in `window`.
    func start(_ senders: [Sender], epoch: UInt64, period: UInt64, window: BenchWindow, stopAt: UInt64) {
        self.period = period
        self.window = window
        self.stopAt = stopAt
        var shuffled = senders
        shuffled.shuffle()
        let slot = Double(period) / Double(max(1, shuffled.count))
        for (index, sender) in shuffled.enumerated() {
            sender.nextDue = epoch + UInt64((Double(index) + Double.random(in: 0..<1)) * slot)
        }
        self.senders = shuffled
        self.cursor = 0
        self.scheduleTick()
    }

    /// Stops firing.
    func stop() {
        self.senders.removeAll()
    }

    private func scheduleTick() {
        guard !self.senders.isEmpty else { return }
        let due = self.senders[self.cursor].nextDue
        self.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(due)) { self.tick() }
    }

    /// Fires every sender that is due (or due within 100 µs), then sleeps until the next one.
    private func tick() {
        var now = benchNow()
        if now >= self.stopAt {
            self.senders.removeAll()
            return
        }
        let count = self.senders.count
        var fired = 0
        // At most one round per tick, so an overloaded client still reads its sockets.
        while fired < count {
            let sender = self.senders[self.cursor]
            guard sender.nextDue <= now + 100_000 else { break }
            now = benchNow()
            let sent = sender.fire(now: now)
            if self.window.contains(now) {
                if sent { self.sentInWindow += 1 } else { self.skippedInWindow += 1 }
            }
            sender.nextDue += self.period
            self.cursor = self.cursor + 1 == count ? 0 : self.cursor + 1
            fired += 1
        }
        self.scheduleTick()
    }
}

// MARK: - Connections, measurement and reports

/// Opens `total` connections, `batch` at a time; `connect(index)` opens one and waits until
/// it is ready. Fails with the first error.
func benchConnectAll(
    total: Int, batch: Int, connect: @escaping @Sendable (Int) async throws -> any Channel
) async throws -> [any Channel] {
    let inFlight = min(total, batch)
    var channels: [any Channel] = []
    channels.reserveCapacity(total)
    try await withThrowingTaskGroup(of: (any Channel).self) { group in
        var next = 0
        while next < inFlight {
            let index = next
            group.addTask { try await connect(index) }
            next += 1
        }
        while let channel = try await group.next() {
            channels.append(channel)
            if next < total {
                let index = next
                group.addTask { try await connect(index) }
                next += 1
            }
        }
    }
    return channels
}

/// Closes every channel and waits for the closes.
/// Connects one bench player and waits up to 20 s for `ready`, which its handler completes
/// once the server has greeted it (NOT_IN_MATCH for Cat Race, AUTHENTICATED for native).
/// - Parameters:
///   - connect: the pending connect of the player's bootstrap.
///   - ready: the promise the handler completes; failed here if the connect fails or times out.
///   - readyMessage: what the server sends when the player is ready, for the timeout error.
///   - player: names the player in errors.
func benchAwaitReady(
    _ connect: EventLoopFuture<any Channel>, ready: EventLoopPromise<Void>, readyMessage: String,
    host: String, port: Int, player: @autoclosure () -> String
) async throws -> any Channel {
    connect.whenFailure { ready.fail($0) }
    let channel: any Channel
    do {
        channel = try await connect.get()
    } catch {
        throw BenchError("cannot connect to \(host):\(port): \(benchErrorKind(error))")
    }
    channel.eventLoop.scheduleTask(in: .seconds(20)) {
        ready.fail(BenchError("no \(readyMessage) within 20 s"))
    }
    do {
        try await ready.futureResult.get()
    } catch {
        channel.close(promise: nil)
        throw BenchError("\(player()): \(error)")
    }
    return channel
}

func benchClose(_ channels: [any Channel]) async {
    let closes = channels.map { $0.close() }
    for close in closes {
        try? await close.get()
    }
}

/// Server and client CPU over a window, and the server's RSS at its end.
struct BenchUsage: Sendable {
    var serverCPU: Double?
    var serverRSSKiB: UInt64?
    var clientCPU: Double?
    /// The server's read and write syscalls per second.
    var serverSyscalls: (reads: Double, writes: Double)?

    var serverRSSMiB: Double? { self.serverRSSKiB.map { Double($0) / 1024 } }

    /// Sleeps until `window.start`, then until `window.end`, reading CPU times at both ends.
    static func measure(serverPID: String?, over window: BenchWindow) async throws -> BenchUsage {
        try await benchSleep(until: window.start)
        let meter = BenchUsageMeter(serverPID: serverPID)
        try await benchSleep(until: window.end)
        return meter.read()
    }

    /// Server CPU time per delivered message, in microseconds.
    func serverMicrosecondsPerMessage(deliveredPerSecond: Double) -> Double? {
        guard let serverCPU = self.serverCPU, deliveredPerSecond > 0 else { return nil }
        return serverCPU / 100 * 1e6 / deliveredPerSecond
    }

    /// Prints the "server:" and "client:" lines of a report.
    func print(threads: Int, deliveredPerSecond: Double? = nil) {
        if let serverCPU = self.serverCPU {
            var perMessage = ""
            if let deliveredPerSecond, let micros = self.serverMicrosecondsPerMessage(deliveredPerSecond: deliveredPerSecond) {
                perMessage = " (\(benchFormat(micros, 2)) µs per delivered message)"
            }
            var syscalls = ""
            if let rates = self.serverSyscalls {
                syscalls = ", syscalls \(benchFormat(rates.reads, 0)) reads/s \(benchFormat(rates.writes, 0)) writes/s"
            }
            benchPrint(
                "server: cpu=\(benchFormat(serverCPU))% of one core\(perMessage), "
                    + "rss=\(self.serverRSSMiB.map { benchFormat($0) } ?? "n/a") MiB\(syscalls)")
        } else {
            benchPrint("server: cpu/rss not measured (pass --server-pid)")
        }
        benchPrint(
            "client: cpu=\(self.clientCPU.map { benchFormat($0) } ?? "n/a")% of one core "
                + "(\(threads) event loop thread\(threads == 1 ? "" : "s"))")
    }

    /// Adds the usage fields to a JSON line.
    func add(to json: inout BenchJSON, deliveredPerSecond: Double? = nil) {
        json.add("server_cpu_pct", self.serverCPU)
        json.add("server_rss_mib", self.serverRSSMiB)
        json.add("client_cpu_pct", self.clientCPU)
        json.add("server_read_syscalls_per_s", self.serverSyscalls?.reads)
        json.add("server_write_syscalls_per_s", self.serverSyscalls?.writes)
        if let deliveredPerSecond {
            json.add("server_cpu_us_per_delivered", self.serverMicrosecondsPerMessage(deliveredPerSecond: deliveredPerSecond))
        }
    }
}

/// CPU readings taken when created; ``read()`` gives the usage since.
struct BenchUsageMeter: Sendable {
    let serverPID: String?
    private let serverStart: BenchCPUSample?
    private let clientStart: BenchCPUSample?

    init(serverPID: String?) {
        self.serverPID = serverPID
        self.serverStart = serverPID.flatMap { BenchCPUSample(pid: $0) }
        self.clientStart = BenchCPUSample(pid: "self")
    }

    /// Server and client CPU since creation, and the server's RSS now.
    func read() -> BenchUsage {
        let serverEnd = self.serverPID.flatMap { BenchCPUSample(pid: $0) }
        let clientEnd = BenchCPUSample(pid: "self")
        var usage = BenchUsage()
        usage.serverRSSKiB = self.serverPID.flatMap { BenchProc.residentKiB(pid: $0) }
        if let serverStart = self.serverStart, let serverEnd {
            usage.serverCPU = serverStart.percent(until: serverEnd)
            usage.serverSyscalls = serverStart.syscallRates(until: serverEnd)
        }
        if let clientStart = self.clientStart, let clientEnd { usage.clientCPU = clientStart.percent(until: clientEnd) }
        return usage
    }
}

extension BenchLatencyHistogram {
    /// "p50=… p99=… p99.9=… max=… mean=… (n samples)", in milliseconds.
    var summary: String {
        "p50=\(benchFormatMs(self.quantile(0.5))) p99=\(benchFormatMs(self.quantile(0.99))) "
            + "p99.9=\(benchFormatMs(self.quantile(0.999))) max=\(benchFormatMs(self.count > 0 ? self.maxValue : nil)) "
            + "mean=\(benchFormatMs(self.mean.map { UInt64($0) })) (\(self.count) samples)"
    }

    /// The quantiles, max, mean (ms) and sample count as a JSON object.
    var json: BenchJSON {
        var latency = BenchJSON()
        latency.add("p50", self.quantile(0.5).map { Double($0) / 1e6 })
        latency.add("p99", self.quantile(0.99).map { Double($0) / 1e6 })
        latency.add("p999", self.quantile(0.999).map { Double($0) / 1e6 })
        latency.add("max", self.count > 0 ? Double(self.maxValue) / 1e6 : nil)
        latency.add("mean", self.mean.map { $0 / 1e6 })
        latency.add("samples", self.count)
        return latency
    }
}

/// A load generator's result, printed as a table or one JSON line.
protocol PrintableBenchReport: Sendable {
    /// Prints the report to standard output.
    func print(json: Bool)
}

/// Runs a load generator on its own event loop group (shut down afterwards, whatever
/// happens) and prints its report; on an error prints it and exits failing.
@discardableResult
func runBenchReport<Report: PrintableBenchReport>(
    threads: Int, json: Bool, _ run: (MultiThreadedEventLoopGroup) async throws -> Report
) async throws -> Report {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
    let outcome: Result<Report, any Error>
    do {
        outcome = .success(try await run(group))
    } catch {
        outcome = .failure(error)
    }
    try? await group.shutdownGracefully()
    switch outcome {
    case .success(let report):
        report.print(json: json)
        return report
    case .failure(let error):
        benchPrintError("error: \(error)")
        throw ExitCode.failure
    }
}

/// Places a bench's groups (races, matches, games) on the event loops round-robin, group g on
/// loop g % loops, and builds each loop's state on that loop.
/// - Parameter make: on its loop, the state for the given group numbers and one "started"
///   future per group.
/// - Returns: the per-loop states, in loop order, and every group's "started" future.
func benchPlaceGroups<State>(
    _ groups: Int, on loops: [any EventLoop],
    make: @escaping @Sendable (any EventLoop, [Int]) -> (State, [EventLoopFuture<Void>])
) async throws -> (states: [NIOLoopBound<State>], started: [EventLoopFuture<Void>]) {
    var states: [NIOLoopBound<State>] = []
    var started: [EventLoopFuture<Void>] = []
    for (loopIndex, loop) in loops.enumerated() {
        let numbers = Array(stride(from: loopIndex, to: groups, by: loops.count))
        let (state, futures) = try await loop.submit {
            let (state, futures) = make(loop, numbers)
            return (NIOLoopBound(state, eventLoop: loop), futures)
        }.get()
        states.append(state)
        started.append(contentsOf: futures)
    }
    return (states, started)
}
