import Foundation
import MatchHostAdmin
import MatchHostProcessTesting
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost rename` against a running `matchhost serve`, and the admin endpoint it calls, as
/// an operator uses them on an alias that must not be shown.
@Suite struct ServeRenameTests {
    @Test func theOperatorReplacesAPlayersAliasUnderTheServersRulesLocksItAndCanGiveItsFirstOneBack() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-rename-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        // The test's players answer no PING while the commands run (each a process of its own,
        // seconds apiece on a loaded machine): the idle timeout must outlast them all.
        let server = try await ServeProcess.start(data: data, arguments: ["--max-alias-length", "7", "--idle-timeout", "300"])
        defer { server.stopBlocking(with: SIGKILL) }
        let admin = try #require(server.adminPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (player, issued) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "rude-device")
        let (other, _) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "other-device")
        #expect(try await player.ask(.setAlias("Rude")) == .success(.done))
        func shownAlias() async throws -> String {
            guard case .success(.profile(let profile)) = try await other.ask(.getProfile(playerID: issued.playerID)) else {
                throw TestClientError.unexpected("no profile")
            }
            return profile.alias
        }
        #expect(try await shownAlias() == "Rude")
        func rename(_ arguments: [String]) async throws -> FinishedProcess {
            try await runMatchHostToExit(["rename"] + arguments + ["--data", data.path, "--admin-port", "\(admin)"])
        }

        // By the start of its id, as `matchhost player` takes it; stored before the command returns.
        let renamed = try await rename([String(issued.playerID.prefix(10)), "Pl 7"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(renamed.stdout == "renamed \(issued.playerID): Pl 7\n")
        #expect(try await shownAlias() == "Pl 7")
        #expect(try await runMatchHostToExit(["player", issued.playerID, "--data", data.path]).stdout.contains("Pl 7"))

        // The rules SET_ALIAS applies, with this server's --max-alias-length; nothing changes.
        let tooLong = try await rename([issued.playerID, "Eight Ch"])
        #expect(tooLong.status == 1)
        #expect(
            tooLong.stderr == "matchhost: the server refused: an alias is at most 7 characters (Unicode scalars); this one has 8\n",
            "\(tooLong.stderr)")
        let blank = try await rename([issued.playerID, " Padded"])
        #expect(blank.status == 1, "\(blank.stderr)")
        let invisible = try await rename([issued.playerID, "Ann\u{200B}e"])
        #expect(invisible.status == 1, "\(invisible.stderr)")
        #expect(try await shownAlias() == "Pl 7")

        // --reset: the first alias, the start of its id (8 characters), whatever the length limit.
        let reset = try await rename([issued.playerID, "--reset"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout == "renamed \(issued.playerID): \(issued.playerID.prefix(8))\n")
        #expect(try await shownAlias() == String(issued.playerID.prefix(8)))
        #expect(try await rename([issued.playerID]).status == 64)
        #expect(try await rename([issued.playerID, "Both", "--reset"]).status == 64)
        #expect(try await rename([issued.playerID, "--lock", "--unlock"]).status == 64)

        // A player who keeps choosing what must not be shown: renamed and locked in one write.
        #expect(try await player.ask(.setAlias("Rude 2")) == .success(.done))
        let locked = try await rename([issued.playerID, "Pl 8", "--lock"])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(locked.stdout == "renamed \(issued.playerID): Pl 8\nthe alias of \(issued.playerID), Pl 8, is locked: the player cannot change it\n")
        #expect(try await player.ask(.setAlias("Rude 3")) == .failure(NativeError(.aliasLocked, "the server's operator fixed your alias; it cannot be changed")))
        #expect(try await shownAlias() == "Pl 8")
        #expect(try await runMatchHostToExit(["player", issued.playerID, "--data", data.path]).stdout.contains("alias      Pl 8 (locked by the operator"))
        // A reset keeps the lock (a column of the player's row: SQLiteOpeningTests reopens it).
        #expect(try await rename([issued.playerID, "--reset"]).status == 0)
        #expect(try await player.ask(.setAlias("Rude 4")).failure?.code == .aliasLocked)
        #expect(try await shownAlias() == String(issued.playerID.prefix(8)))

        // Unlocked, the player plays on, and may choose again.
        let unlocked = try await rename([issued.playerID, "--unlock"])
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(unlocked.stdout == "the alias of \(issued.playerID), \(issued.playerID.prefix(8)), is unlocked: the player may change it\n")
        #expect(try await player.ask(.setAlias("Nice")) == .success(.done))
        #expect(try await shownAlias() == "Nice")

        // Over HTTP: the key is needed, the body checked, the player looked for.
        let key = try String(contentsOfFile: data.appendingPathComponent("admin.key").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let path = "/api/players/\(issued.playerID)/alias"
        let authorized = ["Authorization: Bearer \(key)"]
        #expect(try await httpRequest("PUT", path, port: admin, group: group, body: "{\"alias\":\"Hacked\"}").status == 401)
        #expect(try await httpRequest("DELETE", path, port: admin, group: group).status == 401)
        #expect(try await httpRequest("PUT", path, port: admin, group: group, headers: authorized, body: "{\"name\":\"x\"}").status == 400)
        #expect(try await httpRequest("PUT", path, port: admin, group: group, headers: authorized, body: "{\"alias\":\"\"}").status == 400)
        for body in ["{}", "{\"alias\":\"Both\",\"reset\":true}", "{\"reset\":false}"] {
            #expect(try await httpRequest("PUT", path, port: admin, group: group, headers: authorized, body: body).status == 400, "\(body)")
        }
        let nobody = try await httpRequest(
            "PUT", "/api/players/nobody/alias", port: admin, group: group, headers: authorized, body: "{\"alias\":\"Someone\"}")
        #expect(nobody.status == 404)
        #expect(try await shownAlias() == "Nice")
        let put = try await httpRequest("PUT", path, port: admin, group: group, headers: authorized, body: "{\"alias\":\"Ann 🐈\"}")
        #expect(put.status == 200)
        let answer = try JSONDecoder().decode(PlayerAliasEndpoints.AliasState.self, from: Data(put.body.utf8))
        #expect(answer == PlayerAliasEndpoints.AliasState(player: issued.playerID, alias: "Ann 🐈", locked: false))
        #expect(try await shownAlias() == "Ann 🐈")
        let lockedOverHTTP = try await httpRequest("PUT", path, port: admin, group: group, headers: authorized, body: "{\"locked\":true}")
        #expect(
            try JSONDecoder().decode(PlayerAliasEndpoints.AliasState.self, from: Data(lockedOverHTTP.body.utf8))
                == PlayerAliasEndpoints.AliasState(player: issued.playerID, alias: "Ann 🐈", locked: true))
        let resetOverHTTP = try await httpRequest("DELETE", path, port: admin, group: group, headers: authorized)
        #expect(
            try JSONDecoder().decode(PlayerAliasEndpoints.AliasState.self, from: Data(resetOverHTTP.body.utf8))
                == PlayerAliasEndpoints.AliasState(player: issued.playerID, alias: String(issued.playerID.prefix(8)), locked: true))
        #expect(try await player.ask(.setAlias("Rude 5")).failure?.code == .aliasLocked)

        let unknown = try await rename(["nobody-at-all", "Someone"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no player with id"))
        // A Cat Race tutorial client sends its alias each time it connects: renaming it would not last.
        let racer = try await TestCatRaceClient.connect(port: server.catRacePort, group: group, id: "G:Griefer")
        #expect(try await racer.next() == .notInMatch)
        let tutorial = try await rename(["G:Griefer", "Someone"])
        #expect(tutorial.status == 1)
        #expect(
            tutorial.stderr
                == "matchhost: G:Griefer is a Cat Race tutorial playerId: that port has no authentication, so its client sends its own alias each time it connects\n"
        )
        await racer.close()
        try await group.shutdownGracefully()
    }
}
