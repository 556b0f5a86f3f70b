import Foundation
import MatchHostProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost play catrace` as a person runs it on the tutorial's port: it waits for a race,
/// `matchhost bot catrace` starts one with it, the person taps SPACE to the finish line ahead
/// of the bot, and the win is stored under the tutorial id and alias the person chose.
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

            // The bot starts the race with the racer and taps once a second: 42 s to the line,
            // against the racer's 42 taps. Read whole from a pipe; --timeout bounds it.
            let botRun = Task {
                try await runMatchHostToExit(["bot", "catrace", "--racers", "1", "--with", "G:terminal", "--tap-rate", "1", "--timeout", "90"] + address)
            }
            var screen = try await terminals.waitForScreen("racer", containing: "GO! Tap SPACE to run.")
            var position = try #require(Self.position(in: screen))
            #expect(position == 25)
            // Each SPACE is one step of 10, drawn before the next is typed. The racer paces its
            // taps as a person does: the terminal client ignores taps less than 60 ms apart
            // (key repeat must not outrun the server's tap rate).
            while position < 445 {
                try await Task.sleep(for: .milliseconds(80))
                try await terminals.send("Space", to: "racer")
                screen = try await terminals.waitForScreen("racer", "a step from x = \(position)") {
                    (Self.position(in: $0) ?? 0) > position
                }
                let stepped = try #require(Self.position(in: screen))
                #expect(stepped == position + 10)
                position = stepped
            }
            try await terminals.waitForScreen("racer", "the racer's win") {
                $0.contains("You WON!") && screenHasLine(in: $0, startingWith: "> Hugo (you) ", containing: ["| 445 WINNER"])
            }
            let bot = try await botRun.value
            #expect(bot.status == 0, "bot: \(bot.stdout)\(bot.stderr)")
            #expect(bot.stdout.contains("race 1 round 1: winner seat 2 Hugo (G:terminal)"), "bot: \(bot.stdout)")

            try await terminals.send("q", to: "racer")
            #expect(try await terminals.waitForExit("racer") == 0)
            await terminals.close()
        }
        // Stored under the tutorial id, with the alias the racer chose, once the server is gone.
        await server.stop(with: SIGTERM)
        let stored = try await runMatchHostToExit(["player", "G:terminal", "--data", data.path])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("alias      Hugo"))
        #expect(stored.stdout.contains("catrace    played 1, won 1, lost 0"))
    }

    /// The racer's position: the number after its lane, on the row `> Hugo (you) |...|  85`.
    private static func position(in screen: String) -> Int? {
        guard let row = screen.split(separator: "\n").first(where: { $0.hasPrefix("> Hugo (you) ") }),
            let lane = row.lastIndex(of: "|")
        else { return nil }
        return row[row.index(after: lane)...].split(separator: " ").first.flatMap { Int($0) }
    }
}
