import ArgumentParser
import MatchHostClient
import NIOPosix

/// `matchhost bot disks`: K matches of P bots hitting disks, each to its GAME_OVER.
struct BotDisksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disks",
        abstract: "Play disks matches with bots against a running server; prints each match's winner and scores.",
        discussion: """
            Each bot is a new player (a device of its own) on the native port. In each match the \
            first bot creates a disks match for the match's bots, or joins --match, and the \
            others join it. Every bot taps each disk it sees after a reaction time drawn within \
            ±--spread of --reaction, so the bots race for every disk. Exits 0 when every match \
            reached GAME_OVER, 1 on an error or a timeout.

            To play a bot yourself: `matchhost play disks` in one terminal (it shows a match id), \
            then `matchhost bot disks --match ID --bots 1` in another.
            """)

    @OptionGroup var server: DisksServerOptions

    @Option(help: "Matches played at the same time (K).")
    var matches = 1

    @Option(help: "Bots per match (P).")
    var bots = 2

    @Option(help: "Milliseconds from seeing a disk to tapping it, on average.")
    var reaction: Double = 350

    @Option(help: "How much each reaction varies, as a fraction of --reaction (0-1).")
    var spread = 0.5

    @Option(name: .customLong("tap-rate"), help: "The most taps per second of each bot.")
    var tapRate: Double = 8

    @Option(help: "Seconds a match may take, from the bots' arrival to GAME_OVER, before the run fails.")
    var timeout: Double = 120

    private var options: DisksBot.Options {
        var options = DisksBot.Options()
        options.host = self.server.host
        options.port = self.server.port
        options.tls = self.server.tls.clientTLS
        options.matchID = self.server.matchID
        options.matches = self.matches
        options.botsPerMatch = self.bots
        if self.reaction.isFinite, self.reaction >= 0 { options.reactionTime = .milliseconds(self.reaction) }
        options.reactionSpread = self.spread
        options.tapRate = self.tapRate
        if self.timeout.isFinite, self.timeout > 0 { options.matchTimeout = .seconds(self.timeout) }
        return options
    }

    func validate() throws {
        guard self.reaction.isFinite, self.reaction >= 0 else { throw ValidationError("--reaction must not be negative") }
        guard self.timeout.isFinite, self.timeout > 0 else { throw ValidationError("--timeout must be positive") }
        do {
            try self.options.validate()
        } catch let error as DisksBotError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let options = self.options
        let what =
            options.matchID.map { "\(options.botsPerMatch) bot(s) joining disks match \($0)" }
            ?? "\(options.matches) disks match(es) of \(options.botsPerMatch) bots"
        benchPrint(
            "\(what), reaction \(benchFormatCompact(self.reaction)) ms ±\(benchFormatCompact(options.reactionSpread * 100)) %, "
                + "server \(options.host):\(options.port)")
        let results: [DisksBot.MatchResult]
        do {
            results = try await DisksBot.run(options, group: MultiThreadedEventLoopGroup.singleton) { result in
                benchPrint(result.description)
            }
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        var wins: [String: Int] = [:]
        for result in results {
            for id in result.winnerIDs {
                wins[String(id.prefix(8)), default: 0] += 1
            }
        }
        let table = wins.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }
        benchPrint("done: \(results.count) match(es) finished; wins: \(table.isEmpty ? "none" : table.joined(separator: ", "))")
    }
}
