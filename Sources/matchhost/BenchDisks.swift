import ArgumentParser
import NIOCore
import NIOPosix

/// `matchhost bench disks`: K Disks matches of P players; every player decodes the match's
/// events and measures, for every TICK, the time from the tick's due time on the server
/// (`serverTime`, the same monotonic clock as this process on one machine) to its arrival.
/// Issue 4: 500 matches of 16 at 30 ticks/s on one core, p99 under 10 ms.
struct BenchDisksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disks",
        abstract: "Play Disks matches over the native protocol and measure tick-to-delivery latency.")

    @OptionGroup(title: "Server and load generator")
    var target: NativeBenchTarget

    @Option(help: "Number of Disks matches (K).")
    var matches = 50

    @Option(help: "Players per match (P, 2-16).")
    var players = 16

    @Option(help: "Seconds measured, after the warmup. The server's Disks matches end after 60 s of play by default; the bench starts a new one when a match ends.")
    var seconds: Double = 20

    @Option(help: "Seconds of play before the measured window.")
    var warmup: Double = 3

    @Option(
        name: .customLong("tap-rate"),
        help: "Taps per second per player: on a live disk, or anywhere when none is up (0: none; with taps, matches end at the score limit and are restarted).")
    var tapRate: Double = 0

    @Option(
        name: .customLong("create-spread"),
        help: "Seconds over which the matches are created, so their ticks fall at different times within the tick interval; 0 creates them all at once (their ticks then fall together).")
    var createSpread: Double = 1

    @Option(name: .customLong("ticks-per-second"), help: "The server's Disks tick rate, to find ticks it skipped.")
    var ticksPerSecond = 30

    func validate() throws {
        guard self.matches >= 1 else { throw ValidationError("--matches must be at least 1") }
        guard (2...16).contains(self.players) else { throw ValidationError("--players must be 2-16") }
        guard self.seconds > 0, self.seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard self.tapRate >= 0, self.tapRate <= 1000 else { throw ValidationError("--tap-rate must be 0-1000") }
        guard self.createSpread >= 0, self.createSpread <= 30 else { throw ValidationError("--create-spread must be 0-30") }
        guard (1...1000).contains(self.ticksPerSecond) else { throw ValidationError("--ticks-per-second must be 1-1000") }
    }

    func run() async throws {
        let settings = DisksBenchSettings(
            host: self.target.host, port: self.target.port, address: try benchResolve(host: self.target.host, port: self.target.port),
            matches: self.matches, players: self.players, seconds: self.seconds, warmup: self.warmup, tapRate: self.tapRate,
            createSpread: self.createSpread, ticksPerSecond: self.ticksPerSecond, gameID: self.target.gameID,
            serverPID: self.target.serverPID.map { String($0) }, threads: self.target.threads, connectBatch: self.target.connectBatch,
            runID: benchRunID())
        let fileLimit = raiseOpenFileLimit()
        let connectionCount = settings.matches * settings.players
        if fileLimit > 0, UInt64(connectionCount) + 64 > fileLimit {
            benchPrintError("warning: \(connectionCount) connections but the open file limit is \(fileLimit)")
        }
        if let serverPID = settings.serverPID, BenchProc.cpuTicks(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/stat: no such process?")
            throw ExitCode.failure
        }
        if settings.tapRate == 0, settings.warmup + settings.seconds > 55 {
            benchPrintError(
                "note: matches reach the server's 60 s Disks time limit inside the window; they are restarted, "
                    + "and the restarts (joins, STATE) are measured too")
        }

        benchPrint(
            "matches=\(settings.matches) players=\(settings.players) seconds=\(benchFormatCompact(settings.seconds)) "
                + "warmup=\(benchFormatCompact(settings.warmup))s create-spread=\(benchFormatCompact(settings.createSpread))s "
                + "taps=\(benchFormatCompact(settings.tapRate))/s per player "
                + "ticks=\(settings.ticksPerSecond)/s threads=\(settings.threads) connections=\(connectionCount) "
                + "server=\(settings.host):\(settings.port)")

        try await runBenchReport(threads: settings.threads, json: self.target.json) { group in
            try await DisksBenchRun(settings: settings, group: group).run()
        }
    }
}

/// Everything a Disks run needs, copied out of the command so tasks and loops can share it.
struct DisksBenchSettings: Sendable {
    var host: String
    var port: Int
    var address: SocketAddress
    var matches: Int
    var players: Int
    var seconds: Double
    var warmup: Double
    var tapRate: Double
    var createSpread: Double
    var ticksPerSecond: Int
    var gameID: String
    var serverPID: String?
    var threads: Int
    var connectBatch: Int
    var runID: String

    var tickInterval: UInt64 { 1_000_000_000 / UInt64(self.ticksPerSecond) }

    func deviceID(match: Int, seat: Int) -> String { "bench-\(self.runID)-disks-\(match)-\(seat)" }
}
