import ArgumentParser
import MatchHostClient
import NIOPosix

/// `matchhost bot`: headless players.
struct BotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bot", abstract: "Headless players for a running server.",
        subcommands: [BotCatRaceCommand.self, BotDisksCommand.self, BotFourInARowCommand.self])
}

/// `matchhost bot catrace`: K races of P bots tapping R times a second, N rounds each.
struct BotCatRaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catrace",
        abstract: "Play Cat Races with bots against a running server; prints each race's winner.",
        discussion: """
            In each race one bot sends START_MATCH for all of its bots (and the --with players), \
            every bot taps until GAME_OVER, and the first bot restarts the race until --rounds \
            rounds are done. Exits 0 when every round of every race finished, 1 on an error or a \
            timeout.

            With --native the races are catrace matches on the native port: each bot is a new \
            player (a device of its own), the first bot of a race creates a match for the \
            race's bots, or joins --match, and the others join it; the bots tap once every \
            seat is taken, and the first bot leaves the match (ending it) after the last round.

            To race a bot yourself: `matchhost play catrace --id me` in one terminal, then \
            `matchhost bot catrace --racers 1 --with me` in another; natively, \
            `matchhost play catrace --native` (it shows a match id), then \
            `matchhost bot catrace --native --match ID --racers 1`.
            """)

    @OptionGroup var server: CatRaceServerOptions

    @Option(help: "Races played at the same time (K).")
    var races = 1

    @Option(help: "Bots per race (P).")
    var racers = 2

    @Option(
        name: .customLong("with"), parsing: .singleValue,
        help: "Cat Race port only: other player ids seated in the race after the bots (comma-separated, or repeat the option); only with --races 1.")
    var with: [String] = []

    @Option(name: .customLong("tap-rate"), help: "Taps per second of each bot (R).")
    var tapRate: Double = 5

    @Option(help: "Rounds per race (N): the first, then one RESTART_MATCH after each GAME_OVER.")
    var rounds = 1

    @Option(help: "Seconds between a GAME_OVER and the next round's RESTART_MATCH.")
    var pause: Double = 0

    @Option(help: "Seconds a round may take before the run fails.")
    var timeout: Double = 60

    private var options: CatRaceBot.Options {
        var options = CatRaceBot.Options()
        options.host = self.server.host
        options.port = self.server.resolvedPort
        options.native = self.server.native
        options.tls = self.server.tls.clientTLS
        options.matchID = self.server.matchID
        options.races = self.races
        options.botsPerRace = self.racers
        options.extraPlayerIDs = playerIDList(self.with)
        options.tapRate = self.tapRate
        options.rounds = self.rounds
        if self.pause.isFinite, self.pause >= 0 { options.restartPause = .seconds(self.pause) }
        if self.timeout.isFinite, self.timeout > 0 { options.roundTimeout = .seconds(self.timeout) }
        return options
    }

    func validate() throws {
        guard self.pause.isFinite, self.pause >= 0 else { throw ValidationError("--pause must not be negative") }
        guard self.timeout.isFinite, self.timeout > 0 else { throw ValidationError("--timeout must be positive") }
        do {
            try self.options.validate()
        } catch let error as CatRaceBotError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let options = self.options
        let players = options.botsPerRace + options.extraPlayerIDs.count
        let racers = options.matchID.map { "\(players) bot(s) joining native match \($0)" }
            ?? "\(options.races) race(s) of \(players) racers\(options.native ? " (native)" : "")"
        benchPrint(
            "\(racers), \(options.rounds) round(s), "
                + "\(benchFormatCompact(options.tapRate)) taps/s, server \(options.host):\(options.port)")
        let results: [CatRaceBot.RoundResult]
        do {
            results = try await CatRaceBot.run(options, group: MultiThreadedEventLoopGroup.singleton) { result in
                benchPrint(result.description)
            }
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        var wins: [String: Int] = [:]
        for result in results {
            wins[result.winnerAlias.isEmpty ? result.winnerID : result.winnerAlias, default: 0] += 1
        }
        let table = wins.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }
        benchPrint("done: \(results.count) round(s) finished; wins: \(table.joined(separator: ", "))")
    }
}
