import ArgumentParser
import MatchHostClient
import NIOPosix

/// `matchhost bot fourinarow`: K games of two bots, or one bot joining a given match.
struct BotFourInARowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fourinarow",
        abstract: "Play Four in a Row with bots against a running server; prints each game's result.",
        discussion: """
            Each bot is a new player (a device of its own) on the native port. Without --match \
            or --code, each of --games games is two bots: the first creates a private match, the \
            second joins it by its invite code. With --match or --code, one bot joins that match \
            (a human's, say: `matchhost play fourinarow` shows the code). A bot wins when it \
            can, blocks the opponent's immediate win, and otherwise picks a column at random, \
            favoring the center (--seed replays the same choices). Exits 0 when every game \
            finished, 1 on an error or a timeout.
            """)

    @OptionGroup var server: FourInARowServerOptions

    @Option(help: "Games of two bots played at the same time (K); 1 with --match or --code.")
    var games = 1

    @Option(help: "Seed of the bots' random choices (default: random, printed).")
    var seed: UInt64?

    @Option(help: "Seconds a bot waits before each move (default: 0.5 with --match or --code, else 0).")
    var delay: Double?

    @Option(help: "Seconds a bot may wait for anything from the server before the run fails.")
    var timeout: Double = 90

    private var options: FourInARowBot.Options {
        var options = FourInARowBot.Options()
        options.host = self.server.host
        options.port = self.server.port
        options.tls = self.server.tls.clientTLS
        options.matchID = self.server.matchID
        options.inviteCode = self.server.code
        options.games = self.games
        if let seed = self.seed { options.seed = seed }
        let delay = self.delay ?? (self.server.joinsGivenMatch ? 0.5 : 0)
        if delay.isFinite, delay >= 0 { options.moveDelay = .seconds(delay) }
        if self.timeout.isFinite, self.timeout > 0 { options.idleTimeout = .seconds(self.timeout) }
        return options
    }

    func validate() throws {
        if let delay = self.delay {
            guard delay.isFinite, delay >= 0 else { throw ValidationError("--delay must not be negative") }
        }
        guard self.timeout.isFinite, self.timeout > 0 else { throw ValidationError("--timeout must be positive") }
        do {
            try self.options.validate()
        } catch let error as FourInARowBotError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let options = self.options
        let what: String
        if let matchID = options.matchID {
            what = "1 bot joining match \(matchID)"
        } else if let code = options.inviteCode {
            what = "1 bot joining the match with code \(code)"
        } else {
            what = "\(options.games) game(s) of 2 bots"
        }
        benchPrint("\(what), seed \(options.seed), server \(options.host):\(options.port)")
        let results: [FourInARowBot.GameResult]
        do {
            results = try await FourInARowBot.run(options, group: MultiThreadedEventLoopGroup.singleton) { result in
                benchPrint(result.description)
            }
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        let xWins = results.filter { $0.winnerSeat == 0 }.count
        let oWins = results.filter { $0.winnerSeat == 1 }.count
        let draws = results.filter(\.isDraw).count
        benchPrint("done: \(results.count) game(s) finished; X won \(xWins), O won \(oWins), draws \(draws)")
    }
}
