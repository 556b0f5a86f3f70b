import Foundation
import MatchHostProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost play catrace` as a person runs it, against `matchhost bot catrace`: on the
/// tutorial's port, where it waits for the bot to start a race with it, and natively, where it
/// creates a match the bot joins by the id on its screen. Either way the person taps SPACE to
/// the finish line ahead of the bot, and the win is stored for the player the screen named.
@Suite(.serialized, .enabled(if: tmuxAvailable, "needs tmux"))
struct PlayCatRaceTerminalTests {
    @Test func aTerminalRacerOnTheTutorialPortOutrunsABotAndTheWinIsStored() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-catrace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.catRacePort)"]
        try await TerminalSessions.using { terminals in
            try await terminals.start("racer", matchhost: ["play", "catrace", "--id", "G:terminal", "--alias", "Hugo"] + address)
            try await terminals.waitForScreen("racer", containing: "Waiting for someone to start a race with your id G:terminal.")

            // The bot starts the race with the racer.
            let botRun = Self.slowBot(["--racers", "1", "--with", "G:terminal"] + address)
            try await Self.winAndQuit(in: terminals, lane: "> Hugo (you) ", against: botRun, winner: "winner seat 2 Hugo (G:terminal)")
        }
        // Stored under the tutorial id, with the alias the racer chose.
        let stored = try await Self.storedAfterStopping(server, player: "G:terminal", data: data)
        #expect(stored.contains("alias      Hugo"))
    }

    @Test func aNativeTerminalRacerCreatesAMatchABotJoinsByItsIdAndTheWinIsStored() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-catrace-native-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.nativePort)"]
        let device = data.appendingPathComponent("device").path
        var player = ""
        try await TerminalSessions.using { terminals in
            // Named (SET_ALIAS), so every racer's screen shows that name, the bot's too.
            try await terminals.start(
                "racer", matchhost: ["play", "catrace", "--native", "--device-file", device, "--alias", "Tabby"] + address)
            let waiting = try await terminals.waitForScreen("racer", containing: "Waiting for racers: 1 of 2 here.")
            let matchID = try #require(screenWord(after: " in match ", in: waiting).flatMap { UInt64($0) })
            #expect(waiting.contains("Others join with --native --match \(matchID)."))
            // "MatchHost Cat Race - Tabby (546b74b627cf264dac278d2e3d7f098f) in match 1 …"
            let short = try #require(screenWord(after: "MatchHost Cat Race - ", in: waiting))
            player = try #require(screenWord(after: "\(short) (", in: waiting)?.dropLast().description)
            #expect(short == "Tabby")
            #expect(player.count == 32)

            let botRun = Self.slowBot(["--native", "--match", "\(matchID)", "--racers", "1"] + address)
            try await Self.winAndQuit(in: terminals, lane: "> \(short) (you) ", against: botRun, winner: "winner seat 1 \(short) (\(player))")
        }
        let stored = try await Self.storedAfterStopping(server, player: player, data: data)
        #expect(stored.contains("alias      Tabby"), "\(stored)")
    }

    /// A bot that taps once a second: 42 s to the line, against the racer's 42 taps. Read
    /// whole from a pipe; its --timeout bounds it should the test fail first.
    private static func slowBot(_ arguments: [String]) -> Task<FinishedProcess, any Error> {
        Task { try await runMatchHostToExit(["bot", "catrace", "--tap-rate", "1", "--timeout", "90"] + arguments) }
    }

    /// Races to the line (``tapToTheFinish(in:lane:)``), checks that the bot saw the racer win
    /// (its line for race 1, round 1 ends with `winner`), and quits the racer's window.
    private static func winAndQuit(
        in terminals: TerminalSessions, lane: String, against botRun: Task<FinishedProcess, any Error>, winner: String
    ) async throws {
        try await Self.tapToTheFinish(in: terminals, lane: lane)
        let bot = try await botRun.value
        #expect(bot.status == 0, "bot: \(bot.stdout)\(bot.stderr)")
        #expect(bot.stdout.contains("race 1 round 1: \(winner)"), "bot: \(bot.stdout)")
        try await terminals.send("q", to: "racer")
        #expect(try await terminals.waitForExit("racer") == 0)
        await terminals.close()
    }

    /// Stops the server, then checks with `matchhost player` that `player` has the one race won
    /// in its stats; returns what the command printed.
    private static func storedAfterStopping(_ server: ServeProcess, player: String, data: URL) async throws -> String {
        await server.stop(with: SIGTERM)
        let stored = try await runMatchHostToExit(["player", player, "--data", data.path])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("catrace    played 1, won 1, lost 0"), "\(stored.stdout)")
        return stored.stdout
    }

    /// Waits for GO!, then taps SPACE from the start (x = 25) to the line (x = 445), each tap
    /// one step of 10 drawn before the next is typed, and waits for the win on the screen. The
    /// racer paces its taps as a person does: the terminal client ignores taps less than 60 ms
    /// apart (key repeat must not outrun the server's tap rate).
    private static func tapToTheFinish(in terminals: TerminalSessions, lane: String) async throws {
        var screen = try await terminals.waitForScreen("racer", containing: "GO! Tap SPACE to run.")
        var position = try #require(Self.position(in: screen, lane: lane))
        #expect(position == 25)
        while position < 445 {
            try await Task.sleep(for: .milliseconds(80))
            try await terminals.send("Space", to: "racer")
            screen = try await terminals.waitForScreen("racer", "a step from x = \(position)") {
                (Self.position(in: $0, lane: lane) ?? 0) > position
            }
            let stepped = try #require(Self.position(in: screen, lane: lane))
            #expect(stepped == position + 10)
            position = stepped
        }
        try await terminals.waitForScreen("racer", "the racer's win") {
            $0.contains("You WON!") && screenHasLine(in: $0, startingWith: lane, containing: ["| 445 WINNER"])
        }
    }

    /// The racer's position: the number after its lane, on the row `> Hugo (you) |...|  85`.
    private static func position(in screen: String, lane: String) -> Int? {
        guard let row = screen.split(separator: "\n").first(where: { $0.hasPrefix(lane) }), let end = row.lastIndex(of: "|") else {
            return nil
        }
        return row[row.index(after: end)...].split(separator: " ").first.flatMap { Int($0) }
    }
}
