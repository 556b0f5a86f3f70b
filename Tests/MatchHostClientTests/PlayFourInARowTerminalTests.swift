import Foundation
import MatchHostClient
import MatchHostProcessTesting
import MatchHostSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost play fourinarow` as people at terminals play it: one creates a private match, the
/// other (a person, or `matchhost bot fourinarow`) joins with the invite code shown, and they
/// play to the end; between two people, through a `kill -9` of the server and its restart on
/// the same data in the middle of the game.
@Suite(.serialized, .enabled(if: tmuxAvailable, "needs tmux"))
struct PlayFourInARowTerminalTests {
    @Test func twoTerminalPlayersFinishTheirGameAcrossAServerCrash() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await ServeProcess.start(data: data)
        let server = ["--host", "127.0.0.1", "--port", "\(first.nativePort)"]
        try await TerminalSessions.using { terminals in
            // X creates the match; its screen shows the invite code and the command to join.
            let (created, code, matchID) = try await Self.createPrivateMatch(in: terminals, address: server)
            #expect(created.contains("matchhost play fourinarow --port \(first.nativePort) --code \(code)"))
            // O names itself; X's screen shows it by that name (asked of the server), and X,
            // which did not, by the start of its id.
            try await terminals.start("o", matchhost: ["play", "fourinarow", "--guest", "--alias", "Olive Oyl", "--code", code] + server)

            try await Self.playOpening(in: terminals)
            try await terminals.send("4", to: "x")
            try await Self.waitForTurn("o", after: 3, in: terminals)
            try await terminals.waitForScreen("x", containing: "Opponent: O Olive Oyl")
            try await terminals.waitForScreen("o", containing: "You: O Olive Oyl")
            let xID = try #require(screenWord(after: "You: X ", in: try await terminals.screen("x")))

            // The server dies with move 3 acknowledged (O's screen shows it) and comes back.
            await first.stop(with: SIGKILL)
            let second = try await ServeProcess.start(data: data, nativePort: first.nativePort)
            let back = try await Self.waitUntilReconnected("o", in: terminals)
            #expect(Self.discs(in: back) == ["X": 2, "O": 1])
            #expect(back.contains("Your turn (O)"))
            try await Self.waitUntilReconnected("x", in: terminals)

            // The game goes on from move 4: X completes column 4 at move 7.
            try await terminals.send("3", to: "o")
            try await Self.waitForTurn("x", after: 4, in: terminals)
            try await terminals.send("4", to: "x")
            try await Self.waitForTurn("o", after: 5, in: terminals)
            try await terminals.send("3", to: "o")
            try await Self.waitForTurn("x", after: 6, in: terminals)
            try await terminals.send("4", to: "x")
            let won = try await terminals.waitForScreen("x", containing: "You WIN (four in a row)!")
            #expect(Self.discs(in: won) == ["X": 4, "O": 3])
            try await terminals.waitForScreen("o", containing: "You lose (four in a row)")
            try await terminals.send("q", to: "x")
            try await terminals.send("q", to: "o")
            #expect(try await terminals.waitForExit("x") == 0)
            #expect(try await terminals.waitForExit("o") == 0)
            await terminals.close()

            // Each move stored once, in order, across the crash; and the result.
            await second.stop(with: SIGTERM)
            let store = try await openStoreExpectingMoves(data, game: matchID, columns: [3, 2, 3, 2, 3, 2, 3])
            let result = try await finishedResult(of: matchID, in: store)
            #expect(result?.players.map { $0.playerID.hasPrefix(xID) } == [true, false])
            #expect(try await store.player(id: try #require(result?.players.last?.playerID))?.alias == "Olive Oyl")
            #expect(result?.players.map(\.outcome) == [.won, .lost])
            try await store.close()
        }
    }

    /// A player whose game is on another device (here a client library's) links this terminal
    /// with the code that device got: the terminal then plays as that player, and its device
    /// file signs in without the code from then on.
    @Test func aLinkCodeMakesTheTerminalADeviceOfAnExistingPlayer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-link-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.nativePort)"]
        let phone = makeClient(port: server.nativePort)
        let player = try await phone.connect().playerID
        let (code, _) = try await phone.createLinkCode()
        await phone.close()
        let device = data.appendingPathComponent("laptop-device").path

        // A wrong code: refused before any screen, and the device file made for it removed.
        let wrong = try await runMatchHostToExit(["play", "fourinarow", "--device-file", device, "--link-code", "WRONG234"] + address)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("did not link this device (LINK_REFUSED: "), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("\(device) was removed again."))
        #expect(!FileManager.default.fileExists(atPath: device))

        // The right code (typed in lower case, as people type codes) while the server cannot be
        // reached: the device stays in the file, waiting to be linked with that code.
        let unreached = try await runMatchHostToExit(
            ["play", "fourinarow", "--device-file", device, "--link-code", code.lowercased(), "--host", "127.0.0.1", "--port", "1"])
        #expect(unreached.status == 1)
        #expect(try String(contentsOfFile: device, encoding: .utf8).contains("link=\(code.lowercased())"))

        try await TerminalSessions.using { terminals in
            // Started again without the code: the waiting device is linked with the stored
            // one, not made a new player.
            try await terminals.start("laptop", matchhost: ["play", "fourinarow", "--device-file", device] + address)
            let linked = try await terminals.waitForScreen("laptop", "its player") { $0.contains("Invite code: ") && $0.contains("You: X ") }
            #expect(screenWord(after: "You: X ", in: linked).map { player.hasPrefix($0) } == true, "\(linked)")
            try await terminals.send("q", to: "laptop")
            #expect(try await terminals.waitForExit("laptop") == 0)
            let file = try String(contentsOfFile: device, encoding: .utf8)
            #expect(file.contains("id=matchhost-cli-") && !file.contains("link="), "linked: the code is no longer needed")

            // The device file alone signs in as the same player.
            try await terminals.start("again", matchhost: ["play", "fourinarow", "--device-file", device] + address)
            let again = try await terminals.waitForScreen("again", "its player") { $0.contains("Invite code: ") && $0.contains("You: X ") }
            #expect(screenWord(after: "You: X ", in: again).map { player.hasPrefix($0) } == true, "\(again)")
            try await terminals.send("q", to: "again")
            #expect(try await terminals.waitForExit("again") == 0)
            await terminals.close()
        }

        // The code links one device: another is refused, and its new file removed.
        let other = data.appendingPathComponent("other-device").path
        let twice = try await runMatchHostToExit(["play", "fourinarow", "--device-file", other, "--link-code", code] + address)
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("did not link this device (LINK_REFUSED: "), "\(twice.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other))
        let stored = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(readOnly: true))
        #expect(try await stored.devices(playerID: player).count == 2)
        try await stored.close()
        await server.stop(with: SIGTERM)
    }

    /// The operator bans a player at its terminal: the screen shows why, the whole message
    /// (wrapped: it is longer than a line), and the game exits when asked.
    @Test func aBannedPlayersScreenShowsTheWholeReason() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-ban-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.nativePort)"]
        let device = data.appendingPathComponent("device").path
        let reason = "repeatedly dropping the connection on purpose to avoid losing rated games, see the report of 23 November"
        try await TerminalSessions.using { terminals in
            try await terminals.start("x", matchhost: ["play", "fourinarow", "--device-file", device] + address)
            let created = try await terminals.waitForScreen("x", "its player") { $0.contains("Invite code: ") && $0.contains("You: X ") }
            let player = try #require(screenWord(after: "You: X ", in: created))
            let banned = try await runMatchHostToExit([
                "ban", player, "--reason", reason, "--data", data.path, "--admin-port", "\(try #require(server.adminPort))",
            ])
            #expect(banned.status == 0, "\(banned.stderr)")
            let screen = try await terminals.waitForScreen("x", containing: "Press Q to quit.")
            let joined = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            #expect(joined.contains("this player is banned: \(reason). Press Q to quit."), "\(screen)")
            try await terminals.send("q", to: "x")
            _ = try await terminals.waitForExit("x")
            await terminals.close()
        }
        await server.stop(with: SIGTERM)
    }

    @Test func aTerminalPlayerPlaysAgainstTheBotThatJoinedByItsCode() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-bot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(server.nativePort)"]
        try await TerminalSessions.using { terminals in
            let (created, code, matchID) = try await Self.createPrivateMatch(in: terminals, address: address)
            #expect(created.contains("matchhost bot fourinarow --port \(server.nativePort) --code \(code)"))
            // The command the screen shows, as a plain process (its output read whole from a
            // pipe); its --timeout bounds it should the test fail first.
            let botRun = Task {
                try await runMatchHostToExit(["bot", "fourinarow", "--code", code, "--delay", "0", "--timeout", "30"] + address)
            }

            // X drops into the leftmost column with room, each turn, until the game is over.
            var moves = 0
            while true {
                let screen = try await terminals.waitForScreen("x", "its turn after \(moves) moves of its own, or the end") { screen in
                    screen.contains("The match is over")
                        || (screen.contains("Your turn (X)") && Self.discs(in: screen).values.reduce(0, +) == 2 * moves)
                }
                if screen.contains("The match is over") { break }
                let column = try #require(Self.firstColumnWithRoom(in: screen))
                try await terminals.send("\(column)", to: "x")
                moves += 1
            }
            let over = try await terminals.screen("x")
            try await terminals.send("q", to: "x")
            #expect(try await terminals.waitForExit("x") == 0)
            let bot = try await botRun.value
            #expect(bot.status == 0, "bot: \(bot.stdout)\(bot.stderr)")
            await terminals.close()

            // The stored result is the one X's screen showed.
            await server.stop(with: SIGTERM)
            let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
            let outcomes = try await finishedResult(of: matchID, in: store)?.players.map(\.outcome)
            if over.contains("You WIN") {
                #expect(outcomes == [.won, .lost])
            } else if over.contains("You lose") {
                #expect(outcomes == [.lost, .won])
            } else {
                #expect(outcomes == [.draw, .draw], "X's last screen:\n\(over)")
            }
            #expect(try await store.moveLog(matchID: matchID).count >= 7)
            try await store.close()
        }
    }

    /// A match still waiting for its opponent when the server stops is ended by the stop (it
    /// was never stored): back on the restarted server, the screen says so, and no longer shows
    /// an invite code nobody can use.
    @Test func aWaitingMatchTheServerStopEndedIsShownOverOnceBack() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-waiting-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(first.nativePort)"]
        try await TerminalSessions.using { terminals in
            _ = try await Self.createPrivateMatch(in: terminals, address: address)
            await first.stop(with: SIGTERM)
            let second = try await ServeProcess.start(data: data, nativePort: first.nativePort)
            // Back on the new server (the status shows connection trouble until then).
            let back = try await terminals.waitForScreen("x", containing: "The match has ended")
            #expect(back.contains("The match has ended (abandoned(server shutting down)). Press Q to quit."), "\(back)")
            #expect(!back.contains("Invite code"))
            #expect(!back.contains("Waiting for an opponent"))
            try await terminals.send("q", to: "x")
            #expect(try await terminals.waitForExit("x") == 0)
            await terminals.close()
            await second.stop(with: SIGTERM)
        }
    }

    /// The server and both players' terminals go down mid-game (a power cut). On the restarted
    /// server each player runs `matchhost play fourinarow` again with its device file, one
    /// plainly, one with --match: both are back in the saved game, not in a new one (nor refused
    /// as already in it, which used to end the game), and it goes on.
    @Test func playersWhoseTerminalsDiedTooAreBackInTheirSavedGameAfterARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-saved-\(UUID().uuidString)")
        let devices = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-devices-\(UUID().uuidString)")
        defer { for url in [data, devices] { try? FileManager.default.removeItem(at: url) } }
        let (xDevice, oDevice) = (devices.appendingPathComponent("x").path, devices.appendingPathComponent("o").path)
        let first = try await ServeProcess.start(data: data)
        let address = ["--host", "127.0.0.1", "--port", "\(first.nativePort)"]
        var matchID: UInt64 = 0
        try await TerminalSessions.using { terminals in
            let (_, code, id) = try await Self.createPrivateMatch(in: terminals, address: address, identity: ["--device-file", xDevice])
            matchID = id
            try await terminals.start("o", matchhost: ["play", "fourinarow", "--device-file", oDevice, "--code", code] + address)
            try await Self.playOpening(in: terminals)
            // The server first, so that no goodbye reaches it; then the terminals.
            await first.stop(with: SIGKILL)
            await terminals.close()
        }

        let second = try await ServeProcess.start(data: data, nativePort: first.nativePort)
        try await TerminalSessions.using { terminals in
            try await terminals.start("x", matchhost: ["play", "fourinarow", "--device-file", xDevice] + address)
            try await terminals.start("o", matchhost: ["play", "fourinarow", "--device-file", oDevice, "--match", "\(matchID)"] + address)
            try await Self.waitForTurn("x", after: 2, in: terminals)
            for player in ["x", "o"] {
                try await terminals.waitForScreen(player, "match \(matchID) with its two discs") {
                    $0.contains("Four in a Row - match \(matchID)") && Self.discs(in: $0) == ["X": 1, "O": 1]
                }
            }
            try await terminals.send("4", to: "x")
            try await Self.waitForTurn("o", after: 3, in: terminals)
            // Again the server first: closing a terminal says goodbye, which forfeits the game.
            await second.stop(with: SIGKILL)
            await terminals.close()
        }
        let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(readOnly: true))
        #expect(try await store.moveLog(matchID: matchID).count == 3)
        let saved = try #require(try await store.match(id: matchID))
        #expect(saved.state == .running)
        for player in saved.players {
            #expect(try await store.matchHistory(playerID: player, limit: 10).map(\.id) == [matchID], "no second match was created")
        }
        try await store.close()
    }

    /// Starts X (`play fourinarow` as `identity`: a throwaway player by default) in window "x",
    /// which creates a private match; returns its screen once the invite code shows, the code,
    /// and the match id.
    private static func createPrivateMatch(
        in terminals: TerminalSessions, address: [String], identity: [String] = ["--guest"]
    ) async throws -> (screen: String, code: String, matchID: UInt64) {
        try await terminals.start("x", matchhost: ["play", "fourinarow"] + identity + address)
        let created = try await terminals.waitForScreen("x", containing: "Invite code: ")
        let code = try #require(screenWord(after: "Invite code: ", in: created))
        let matchID = try #require(screenWord(after: "Four in a Row - match ", in: created).flatMap { UInt64($0) })
        return (created, code, matchID)
    }

    /// X stacks column 4, O column 3, each waiting for its turn as a player would; returns with
    /// X to move after those two.
    private static func playOpening(in terminals: TerminalSessions) async throws {
        try await terminals.waitForScreen("x", containing: "Your turn (X)")
        try await terminals.send("4", to: "x")
        try await terminals.waitForScreen("o", containing: "Your turn (O)")
        try await terminals.send("3", to: "o")
        try await Self.waitForTurn("x", after: 2, in: terminals)
    }

    /// The first column (1-7) whose top cell is empty on the drawn board.
    private static func firstColumnWithRoom(in screen: String) -> Int? {
        guard let top = screen.split(separator: "\n").first(where: { $0.hasPrefix("  |") }) else { return nil }
        let cells = top.split(separator: "|", omittingEmptySubsequences: false).dropFirst().prefix(7)
        return cells.firstIndex { $0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0 - cells.startIndex + 1 }
    }

    /// Waits until `player`'s screen shows it connected again after the crash: its last notice
    /// is its own reconnection, or, when the opponent came back after it, the opponent's
    /// return (which only a connected client is told). Returns that screen.
    @discardableResult
    private static func waitUntilReconnected(_ player: String, in terminals: TerminalSessions) async throws -> String {
        try await terminals.waitForScreen(player, "reconnected") {
            $0.contains("Reconnected; the board is as the server has it.") || $0.contains("Your opponent is back.")
        }
    }

    /// Waits until `player`'s screen says it is its turn, with `count` discs on the board.
    private static func waitForTurn(_ player: String, after count: Int, in terminals: TerminalSessions) async throws {
        try await terminals.waitForScreen(player, "its turn after \(count) moves") { screen in
            screen.contains("Your turn") && Self.discs(in: screen).values.reduce(0, +) == count
        }
    }

    /// The discs drawn on the board: cells are `| X |`, the last move `|(X)|`, a winning line `|[X]|`.
    private static func discs(in screen: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in screen.split(separator: "\n") where line.hasPrefix("  |") {
            for cell in line.split(separator: "|") {
                let disc = cell.trimmingCharacters(in: CharacterSet(charactersIn: " ()[]"))
                if disc == "X" || disc == "O" { counts[disc, default: 0] += 1 }
            }
        }
        return counts
    }
}
