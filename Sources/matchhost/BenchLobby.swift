import ArgumentParser
import NIOCore
import NIOPosix

/// `matchhost bench lobby`: S sessions subscribed to one mode's lobby while a driver makes
/// lobby changes at a fixed rate (relay matches created, joined by a second player, left by
/// it, ended); every subscriber measures, per change it is told of, the time from the
/// driver's request to its LOBBY_UPDATE. Issue 4: 10,000 subscribers, each change within 100 ms.
struct BenchLobbyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lobby",
        abstract: "Subscribe many sessions to one lobby, change it at a fixed rate, and measure change-to-update latency.",
        discussion: "With --threads N the subscribers are spread over N event loops; the driver runs on the first.")

    @OptionGroup(title: "Server and load generator")
    var target: NativeBenchTarget

    @Option(help: "Sessions subscribed to the lobby.")
    var subscribers = 1000

    @Option(name: .customLong("changes-per-second"), help: "Lobby changes the driver makes per second (each is one request).")
    var changesPerSecond: Double = 20

    @Option(help: "Seconds measured, after the warmup.")
    var seconds: Double = 20

    @Option(help: "Seconds of changes before the measured window.")
    var warmup: Double = 2

    @Option(help: "Game mode whose lobby is watched; its matches must take 2 players and end when both leave.")
    var mode = "relay"

    @Option(
        name: .customLong("step-interval"),
        help: "Least seconds between two changes to the same match; well above the server's --lobby-interval, so that no two are coalesced into one update.")
    var stepInterval: Double = 0.25

    @Option(
        name: .customLong("lobby-interval"),
        help: "The server's --lobby-interval in seconds (only printed with the results: latency includes up to one of it).")
    var lobbyInterval: Double = 0.05

    func validate() throws {
        guard self.subscribers >= 1 else { throw ValidationError("--subscribers must be at least 1") }
        guard self.changesPerSecond > 0, self.changesPerSecond <= 10_000 else {
            throw ValidationError("--changes-per-second must be above 0 and at most 10000")
        }
        guard self.seconds > 0, self.seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        guard self.warmup >= 0, self.warmup.isFinite else { throw ValidationError("--warmup must not be negative") }
        guard self.stepInterval >= 0.01, self.stepInterval <= 60 else { throw ValidationError("--step-interval must be 0.01-60") }
        guard self.lobbyInterval > 0, self.lobbyInterval <= 10 else { throw ValidationError("--lobby-interval must be 0-10") }
        guard !self.mode.isEmpty, self.mode.utf8.count <= 64 else { throw ValidationError("--mode must be 1-64 bytes") }
    }

    func run() async throws {
        let settings = LobbyBenchSettings(
            host: self.target.host, port: self.target.port, address: try benchResolve(host: self.target.host, port: self.target.port),
            subscribers: self.subscribers, changesPerSecond: self.changesPerSecond, seconds: self.seconds,
            warmup: self.warmup, mode: self.mode, stepInterval: self.stepInterval, lobbyInterval: self.lobbyInterval,
            gameID: self.target.gameID, serverPID: self.target.serverPID.map { String($0) }, threads: self.target.threads,
            connectBatch: self.target.connectBatch, runID: benchRunID())
        let fileLimit = raiseOpenFileLimit()
        let connectionCount = settings.subscribers + 2 * settings.slots
        if fileLimit > 0, UInt64(connectionCount) + 64 > fileLimit {
            benchPrintError("warning: \(connectionCount) connections but the open file limit is \(fileLimit)")
        }
        if let serverPID = settings.serverPID, BenchProc.cpuTicks(pid: serverPID) == nil {
            benchPrintError("error: cannot read /proc/\(serverPID)/stat: no such process?")
            throw ExitCode.failure
        }

        benchPrint(
            "subscribers=\(settings.subscribers) changes=\(benchFormatCompact(settings.changesPerSecond))/s "
                + "seconds=\(benchFormatCompact(settings.seconds)) warmup=\(benchFormatCompact(settings.warmup))s "
                + "mode=\(settings.mode) driver=\(settings.slots) matches at a time (\(2 * settings.slots) sessions, "
                + "a change to each every \(benchFormat(settings.slotPeriodSeconds * 1000, 0)) ms) "
                + "lobby-interval=\(benchFormatCompact(settings.lobbyInterval * 1000))ms threads=\(settings.threads) "
                + "server=\(settings.host):\(settings.port)")

        try await runBenchReport(threads: settings.threads, json: self.target.json) { group in
            try await LobbyBenchRun(settings: settings, group: group).run()
        }
    }
}

/// Everything a lobby run needs, copied out of the command so tasks and loops can share it.
struct LobbyBenchSettings: Sendable {
    var host: String
    var port: Int
    var address: SocketAddress
    var subscribers: Int
    var changesPerSecond: Double
    var seconds: Double
    var warmup: Double
    var mode: String
    var stepInterval: Double
    var lobbyInterval: Double
    var gameID: String
    var serverPID: String?
    var threads: Int
    var connectBatch: Int
    var runID: String

    /// Matches the driver keeps going at once: each takes a change every `slotPeriodSeconds`
    /// (at least the step interval), so that together they make `changesPerSecond`.
    var slots: Int { max(1, Int((self.changesPerSecond * self.stepInterval).rounded(.up))) }

    /// Seconds between two changes to one match.
    var slotPeriodSeconds: Double { Double(self.slots) / self.changesPerSecond }

    func subscriberDeviceID(_ index: Int) -> String { "bench-\(self.runID)-sub-\(index)" }

    func driverDeviceID(slot: Int, guest: Bool) -> String { "bench-\(self.runID)-\(guest ? "guest" : "host")-\(slot)" }
}
