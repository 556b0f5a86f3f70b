import Foundation
import MatchHostProcessTesting
import MatchHostCore
import MatchHostSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost leaderboard` and `matchhost player` against a database a running server holds open.
@Suite(.serialized) struct StoredDataCommandTests {
    /// Runs `matchhost` with `arguments` until it exits.
    private func matchhost(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try await runMatchHostToExit(arguments)
        return (run.status, run.stdout, run.stderr)
    }

    @Test func theCommandsReadTheServersDatabaseWhileItRuns() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-read-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let store = try await SQLiteGameStore.open(directory: data.path)
        try await store.createPlayer(id: "ada", alias: "Ada", createdAt: 1_767_225_600_000)
        try await store.createPlayerWithDevice(id: "bob", alias: "Bob", deviceID: "bob-phone", secretHash: [1], createdAt: 1_767_225_600_000)
        try await store.addDeviceIdentity(
            deviceID: "bob-tablet", secretHash: [2], playerID: "bob", linkedAt: 1_767_312_000_000, maximumDevices: 10)
        try await store.createPlayer(id: "0da3ef31aa", alias: "0da3ef31", createdAt: 1_767_225_600_000)
        try await store.createPlayer(id: "0da3ff00", alias: "0da3ff00", createdAt: 1_767_225_600_000)
        for (id, winner, loser) in [(1, "ada", "bob"), (2, "ada", "bob"), (3, "bob", "cat")] as [(MatchID, String, String)] {
            try await store.recordMatchStarted(id: id, game: "fourinarow", mode: "", players: [winner, loser], startedAt: UnixMillis(milliseconds: 1_767_225_600_000 + Int64(id) * 60_000))
            try await store.recordMatchFinished(
                matchID: id, endedAt: UnixMillis(milliseconds: 1_767_225_630_000 + Int64(id) * 60_000),
                result: MatchResultRecord(players: [.init(playerID: winner, outcome: .won, summary: "four in a row"), .init(playerID: loser, outcome: .lost)]))
        }
        try await store.close()
        let server = try await ServeProcess.start(data: data)
        defer { server.stopBlocking(with: SIGKILL) }

        let top = try await self.matchhost(["leaderboard", "fourinarow", "--data", data.path])
        #expect(top.status == 0)
        let rows = top.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.map { $0.first.map(String.init) } == ["1", "2", "3"])
        #expect(rows.map { String($0[4]) } == ["ada", "bob", "cat"])
        #expect(rows.first.map { String($0[5]) } == "Ada")
        #expect(rows.last.map { String($0[5]) } == "-")  // no account: a Cat Race port player
        let around = try await self.matchhost(["leaderboard", "fourinarow", "--around", "cat", "--limit", "2", "--data", data.path])
        #expect(around.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ")[4] } == ["bob", "cat"])
        // --around names a player as `player` does: here by the start of its id.
        let aroundShort = try await self.matchhost(["leaderboard", "fourinarow", "--around", "0da3e", "--data", data.path])
        #expect(aroundShort.stdout == "0da3e has no results in fourinarow\n")
        let aroundNobody = try await self.matchhost(["leaderboard", "fourinarow", "--around", "nobody", "--data", data.path])
        #expect(aroundNobody.status == 1)
        #expect(try await self.matchhost(["leaderboard", "disks", "--data", data.path]).stdout == "no results in disks yet\n")
        let typo = try await self.matchhost(["leaderboard", "disk", "--data", data.path])
        #expect(typo.status == 1)
        #expect(typo.stderr == "matchhost: no results in disk: the built-in games are catrace, disks, fourinarow\n")

        let ada = try await self.matchhost(["player", "ada", "--data", data.path])
        #expect(ada.status == 0)
        #expect(ada.stdout.contains("alias      Ada"))
        #expect(ada.stdout.contains("created    2026-01-01 00:00:00 UTC"))
        #expect(ada.stdout.contains("fourinarow played 2, won 2, lost 0, drawn 0, rating "))
        #expect(ada.stdout.contains("  2  fourinarow  2026-01-01 00:02:00 UTC  won (four in a row)"))
        #expect(!ada.stdout.contains("device"))
        let bob = try await self.matchhost(["player", "bob", "--data", data.path])
        #expect(bob.stdout.contains("device     bob-phone  linked 2026-01-01 00:00:00 UTC\ndevice     bob-tablet  linked 2026-01-02 00:00:00 UTC\n"))
        let nobody = try await self.matchhost(["player", "nobody", "--data", data.path])
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("no player with id, start of an id or Cat Race playerId nobody in "))
        #expect(!nobody.stderr.contains("too short"))
        // The first characters of an id, as a player's alias shows them, when only one id starts so.
        let short = try await self.matchhost(["player", "0da3e", "--data", data.path])
        #expect(short.status == 0)
        #expect(short.stdout.hasPrefix("player     0da3ef31aa\n"))
        let several = try await self.matchhost(["player", "0da3", "--data", data.path])
        #expect(several.status == 1)
        #expect(several.stderr.contains("0da3 is the start of several player ids (0da3ef31aa, 0da3ff00): give more of it"))
        // Too short to be taken as a start, and told so.
        let tooShort = try await self.matchhost(["player", "0da", "--data", data.path])
        #expect(tooShort.status == 1)
        #expect(tooShort.stderr.hasSuffix(" (too short for the start of an id: 4 characters or more)\n"))
    }

    @Test func aMissingDatabaseIsOneClearLine() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-none-\(UUID().uuidString)")
        let run = try await self.matchhost(["leaderboard", "fourinarow", "--data", data.path])
        #expect(run.status == 2)
        #expect(run.stderr == "matchhost: cannot open database \(data.appendingPathComponent(SQLiteGameStore.fileName).path): the directory does not exist\n")
        #expect(!FileManager.default.fileExists(atPath: data.path))
    }
}
