import Foundation
import MatchHostSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost play fourinarow` as two people at two terminals play it: one creates a private
/// match, the other joins with the invite code shown, and they play to the end, through a
/// `kill -9` of the server and its restart on the same data in the middle of the game.
@Suite(.serialized, .enabled(if: tmuxAvailable, "needs tmux"))
struct PlayFourInARowTerminalTests {
    @Test func twoTerminalPlayersFinishTheirGameAcrossAServerCrash() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-play-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let terminals = TerminalSessions()
        let first = try await ServeProcess.start(data: data)
        let server = ["--host", "127.0.0.1", "--port", "\(first.nativePort)"]
        do {
            // X creates the match; its screen shows the invite code and the command to join.
            try await terminals.start("x", matchhost: ["play", "fourinarow", "--guest"] + server)
            let created = try await terminals.waitForScreen("x", containing: "Invite code: ")
            let code = try #require(screenWord(after: "Invite code: ", in: created))
            let matchID = try #require(screenWord(after: "Four in a Row - match ", in: created).flatMap { UInt64($0) })
            #expect(created.contains("matchhost play fourinarow --port \(first.nativePort) --code \(code)"))
            try await terminals.start("o", matchhost: ["play", "fourinarow", "--guest", "--code", code] + server)

            // X stacks column 4, O column 3; each waits for its turn as a player would.
            try await terminals.waitForScreen("x", containing: "Your turn (X)")
            try await terminals.send("4", to: "x")
            try await terminals.waitForScreen("o", containing: "Your turn (O)")
            try await terminals.send("3", to: "o")
            try await Self.waitForTurn("x", after: 2, in: terminals)
            try await terminals.send("4", to: "x")
            try await Self.waitForTurn("o", after: 3, in: terminals)
            let xID = try #require(screenWord(after: "You: X ", in: try await terminals.screen("x")))
            let oID = try #require(screenWord(after: "You: O ", in: try await terminals.screen("o")))

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
            #expect(result?.players.map { $0.playerID.hasPrefix(oID) } == [false, true])
            #expect(result?.players.map(\.outcome) == [.won, .lost])
            try await store.close()
        } catch {
            await terminals.close()
            throw error
        }
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
