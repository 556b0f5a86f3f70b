import Foundation
import ArgumentParser
import NIOCore
import NIOPosix

/// `matchhost bench fourinarow`: G concurrent Four in a Row games of two players each, every
/// player moving a think time after its turn starts, games started again when they end. For
/// every move it measures the time from the mover's MOVE to the MOVED that acknowledges it
/// (the server sends MOVED only once the move is committed) and to the opponent's MOVED.
/// Issue 5: with 1,000 concurrent games, acknowledging costs under 2 ms at p99.
struct BenchFourInARowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fourinarow",
        abstract: "Play Four in a Row games over the native protocol and measure how long a move takes to be acknowledged.")

    @OptionGroup(title: "Server and load generator")
    var target: NativeBenchTarget

    @Option(help: "Concurrent games (G), two players each.")
    var games = 1000

    @Option(
        help: "Mean seconds from a player's turn start (the MOVED or STATE that gives it the turn) to its MOVE; each wait is drawn uniformly from 0.5 to 1.5 times this. With G games about G / (think + latency) moves a second are made.")
    var think: Double = 1

    @Option(help: "Seconds measured, after the warmup.")
    var seconds: Double = 20

    @Option(help: "Seconds of play before the measured window.")
    var warmup: Double = 3

    @Option(name: .customLong("create-spread"), help: "Seconds over which the games are created, so their turns do not fall together.")
    var createSpread: Double = 1

    @Flag(
        name: .customLong("kill-server"),
        help: "At the window's end, kill the server (SIGKILL to --server-pid) with the games still moving, instead of saying GOODBYE: then check that every move in --moved-file is stored.")
    var killServer = false

    @Option(
        name: .customLong("moved-file"),
        help: "Write, for each match, a line `<match id> <move number>`: the highest move any of its players got MOVED for (so moves 1 to it are committed).")
    var movedFile: String?

    func validate() throws {
        guard self.games >= 1 else { throw ValidationError("--games must be at least 1") }
        guard self.think >= 0.001, self.think <= 20 else { throw ValidationError("--think must be 0.001-20 seconds") }
        guard self.seconds > 0, self.seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard self.createSpread >= 0, self.createSpread <= 30 else { throw ValidationError("--create-spread must be 0-30") }
        guard !self.killServer || self.target.serverPID != nil else { throw ValidationError("--kill-server needs --server-pid") }
    }

    func run() async throws {
        let settings = FourInARowBenchSettings(
            host: self.target.host, port: self.target.port, address: try benchResolve(host: self.target.host, port: self.target.port), games: self.games,
            think: self.think, seconds: self.seconds, warmup: self.warmup, createSpread: self.createSpread, gameID: self.target.gameID,
            serverPID: self.target.serverPID.map { String($0) }, threads: self.target.threads, connectBatch: self.target.connectBatch,
            runID: benchRunID(), killServer: self.killServer)
        let fileLimit = raiseOpenFileLimit()
        let connectionCount = settings.games * 2
        if fileLimit > 0, UInt64(connectionCount) + 64 > fileLimit {
            benchPrintError("warning: \(connectionCount) connections but the open file limit is \(fileLimit)")
        }
        if let serverPID = settings.serverPID, BenchProc.cpuTicks(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/stat: no such process?")
            throw ExitCode.failure
        }

        benchPrint(
            "games=\(settings.games) think=\(benchFormatCompact(settings.think))s (0.5-1.5x) seconds=\(benchFormatCompact(settings.seconds)) "
                + "warmup=\(benchFormatCompact(settings.warmup))s create-spread=\(benchFormatCompact(settings.createSpread))s "
                + "threads=\(settings.threads) connections=\(connectionCount) server=\(settings.host):\(settings.port)")

        let report = try await runBenchReport(threads: settings.threads, json: self.target.json) { group in
            try await FourInARowBenchRun(settings: settings, group: group).run()
        }
        if let movedFile = self.movedFile {
            let lines = report.highestMoved.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
            do {
                try lines.write(toFile: movedFile, atomically: true, encoding: .utf8)
            } catch {
                benchPrintError("error: cannot write --moved-file \(movedFile): \(error)")
                throw ExitCode.failure
            }
        }
        if !report.isClean { throw ExitCode.failure }
    }
}

/// Everything a Four in a Row run needs, copied out of the command so tasks and loops can share it.
struct FourInARowBenchSettings: Sendable {
    var host: String
    var port: Int
    var address: SocketAddress
    var games: Int
    var think: Double
    var seconds: Double
    var warmup: Double
    var createSpread: Double
    var gameID: String
    var serverPID: String?
    var threads: Int
    var connectBatch: Int
    var runID: String
    /// `--kill-server`.
    var killServer = false

    /// The bound on the acknowledgement at p99: 2 ms.
    static let targetP99: UInt64 = 2_000_000

    func deviceID(game: Int, seat: Int) -> String { "bench-\(self.runID)-fourinarow-\(game)-\(seat)" }

    /// A think time: uniform in 0.5 to 1.5 × `think`, in nanoseconds.
    func randomThink() -> Int64 {
        Int64((self.think * Double.random(in: 0.5..<1.5) * 1e9).rounded())
    }
}
