import ArgumentParser
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

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A CPU-time reading of one process, for "percent of one core" over an interval.
struct BenchCPUSample: Sendable {
    var ticks: UInt64
    var at: UInt64

    init?(pid: String) {
        guard let ticks = BenchProc.cpuTicks(pid: pid) else { return nil }
        self.ticks = ticks
        self.at = benchNow()
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

    private static func quote(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
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
