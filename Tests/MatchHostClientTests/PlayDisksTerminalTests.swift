import Foundation
import MatchHostProcessTesting
import MatchHostSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost play disks`, `matchhost lobby disks` and `matchhost bot disks` together, as a
/// person runs them: the lobby in one terminal shows the match the player creates in another,
/// a bot joins it, the player taps disks by their letters, quits, and the bot wins.
@Suite(.serialized, .enabled(if: tmuxAvailable, "needs tmux"))
struct PlayDisksTerminalTests {
    /// A match still waiting for players when the server stops is ended by the stop: back on
    /// the restarted server, the screen says so instead of waiting for players who cannot come.
    @Test func aWaitingMatchTheServerStopEndedIsShownOverOnceBack() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-disks-stop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(first.nativePort)"]
        try await TerminalSessions.using { terminals in
            let device = data.appendingPathComponent("device").path
            // Under the name it took (the screen shows what the server then answers for it).
            try await terminals.start("player", matchhost: ["play", "disks", "--device-file", device, "--alias", "Dot Hunter"] + address)
            try await terminals.waitForScreen("player", containing: "Waiting for players: 1 of 2 here.")
            try await terminals.waitForScreen("player", containing: "MatchHost Disks - Dot Hunter in match ")
            await first.stop(with: SIGTERM)
            let second = try await ServeProcess.start(data: data, nativePort: first.nativePort)
            let back = try await terminals.waitForScreen("player", containing: "The match has ended")
            #expect(back.contains("The match has ended (abandoned(server shutting down)). Press Q to quit."), "\(back)")
            #expect(!back.contains("Others join"))
            try await terminals.send("q", to: "player")
            #expect(try await terminals.waitForExit("player") == 0)
            await terminals.close()
            await second.stop(with: SIGTERM)
        }
    }

    /// On a narrow terminal, lines that wrap take more rows: the board is made smaller for
    /// them, so the whole screen fits, down to the instructions' last word.
    @Test func aNarrowTerminalShowsTheWholeScreen() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-disks-narrow-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.nativePort)"]
        try await TerminalSessions.using { terminals in
            let device = data.appendingPathComponent("device").path
            try await terminals.start(
                "player", matchhost: ["play", "disks", "--device-file", device, "--alias", "Narrow Screen Player"] + address,
                columns: 36, rows: 24)
            let waiting = try await terminals.waitForScreen("player", "the waiting screen with the player") {
                $0.contains("Waiting for players: 1 of 2 here.") && $0.contains("Narrow Screen Player (you)")
            }
            let matchID = try #require(screenWord(after: " in match ", in: waiting).flatMap { UInt64($0) })
            // A bot too slow to take a disk (20 s to react) fills the match: two score lines.
            let botRun = Task {
                try await runMatchHostToExit(
                    ["bot", "disks", "--match", "\(matchID)", "--bots", "1", "--reaction", "20000", "--spread", "0", "--timeout", "30"]
                        + address)
            }
            let screen = try await terminals.waitForScreen("player", "the match under way") {
                $0.contains("GO!") && $0.contains("Time left")
            }
            let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(rows.first?.hasPrefix("MatchHost Disks - Narrow Screen") == true, "\(screen)")
            // "Type a disk's letter to tap it.  Q quits." takes two rows of 36.
            #expect(rows.contains { $0.hasPrefix("Type a disk's letter to tap it.") }, "\(screen)")
            #expect(rows.last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } == "quits.", "\(screen)")
            try await terminals.send("q", to: "player")
            #expect(try await terminals.waitForExit("player") == 0)
            #expect(try await botRun.value.status == 0)
            await terminals.close()
            await server.stop(with: SIGTERM)
        }
    }

    @Test func aTerminalPlayerSeesItsMatchInTheLobbyAndHitsDisksByTheirLetters() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-disks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.nativePort)"]
        try await TerminalSessions.using { terminals in
            try await terminals.start("lobby", matchhost: ["lobby", "disks"] + address)
            try await terminals.waitForScreen("lobby", containing: "disks lobby on 127.0.0.1:\(server.nativePort): 0 open")

            let device = data.appendingPathComponent("device").path
            try await terminals.start(
                "player", matchhost: ["play", "disks", "--device-file", device, "--label", "room for two"] + address)
            let waiting = try await terminals.waitForScreen("player", containing: "Waiting for players: 1 of 2 here.")
            let me = try #require(screenWord(after: "MatchHost Disks - ", in: waiting))
            let matchID = try #require(screenWord(after: " in match ", in: waiting).flatMap { UInt64($0) })
            #expect(waiting.contains("matchhost bot disks --port \(server.nativePort) --match \(matchID) --bots 1"))
            try await terminals.waitForScreen("lobby", "the open match") {
                screenHasLine(in: $0, startingWith: "+ \(matchID) ", containing: ["1/2", "joinable", "room for two"])
            }

            // A bot too slow to take a disk from the player (20 s to react) joins the match. Not
            // in a window: its output is read whole from a pipe. Its own --timeout bounds it
            // should the test fail before the match ends.
            let botRun = Task {
                try await runMatchHostToExit(
                    ["bot", "disks", "--match", "\(matchID)", "--bots", "1", "--reaction", "20000", "--spread", "0", "--timeout", "30"]
                        + address)
            }
            try await terminals.waitForScreen("player", containing: "GO!")
            try await terminals.waitForScreen("lobby", "the match full") {
                screenHasLine(in: $0, startingWith: "~ \(matchID) ", containing: ["2/2", "full"])
            }

            // Three disks hit by typing the letter drawn on them; each hit is listed and scored.
            for hits in 1...3 {
                let board = try await terminals.waitForScreen("player", "a disk to tap") { Self.diskLetter(in: $0) != nil }
                let letter = try #require(Self.diskLetter(in: board))
                try await terminals.send(String(letter), to: "player")
                try await terminals.waitForScreen("player", "hit number \(hits), of disk \(letter)") {
                    $0.contains("you hit \(letter)") && screenHasLine(in: $0, startingWith: "> \(me) (you)", containing: [" \(hits)"])
                }
            }

            // Quitting leaves the bot the winner; the lobby shows the match gone.
            try await terminals.send("q", to: "player")
            #expect(try await terminals.waitForExit("player") == 0)
            let bot = try await botRun.value
            #expect(bot.status == 0, "bot: \(bot.stdout)\(bot.stderr)")
            #expect(bot.stdout.contains("match 1 (id \(matchID)): opponents left"))
            #expect(bot.stdout.contains("winner seat 2"))
            #expect(bot.stdout.contains("scores \(me) 3,"))
            try await terminals.waitForScreen("lobby", "the match removed") {
                screenHasLine(in: $0, startingWith: "- \(matchID) ", containing: ["(0 open)"])
            }
            await terminals.close()

            await server.stop(with: SIGTERM)
            let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
            let result = try await finishedResult(of: matchID, in: store)
            #expect(result?.players.map { $0.playerID.hasPrefix(me) } == [true, false])
            #expect(result?.players.map(\.outcome) == [.lost, .won])
            try await store.close()
        }
    }

    /// A letter drawn on the board (inside its frame, rows `|...|`): a disk that can be tapped.
    /// Hit disks show their hitter's seat number instead, and `q` is never a disk's.
    private static func diskLetter(in screen: String) -> Character? {
        for row in screen.split(separator: "\n") where row.hasPrefix("|") && row.dropFirst().contains("|") {
            if let letter = row.dropFirst().first(where: { $0.isLetter && $0.isLowercase && $0 != "q" }) { return letter }
        }
        return nil
    }
}
