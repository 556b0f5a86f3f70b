import Foundation
import MatchHostCore
import MatchHostSQLite
@testable import MatchHostServer
import MatchHostStoreTesting
import MatchHostWire
import Testing

/// SET_ALIAS over a real socket: what a player calls itself, stored before it is acknowledged,
/// shown to every other player, and refused (on a connection that goes on) when it breaks the
/// server's rules.
@Suite struct NativeAliasTests {
    @Test func anAliasIsCommittedBeforeDoneAndShowsInProfilesAndLeaderboards() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-alias-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let server = try await RunningNativeServer.start { $0.store = store }
        let (first, second, matchID, players, _) = try await fourInARowPair(server, "alias-a", "alias-b")
        guard case .success(.profile(let before)) = try await first.ask(.getProfile(playerID: "")) else {
            throw TestClientError.unexpected("no profile")
        }
        #expect(before.alias == String(players[0].prefix(8)), "a new player's alias is the start of its id")

        #expect(try await first.ask(.setAlias("Ann 🐈")) == .success(.done))
        #expect(try await store.player(id: players[0])?.alias == "Ann 🐈", "committed before DONE")
        guard case .success(.profile(let seen)) = try await second.ask(.getProfile(playerID: players[0])) else {
            throw TestClientError.unexpected("no profile")
        }
        #expect(seen.alias == "Ann 🐈")

        // Two in a row: the later one stays. An emoji sequence with a zero-width joiner is fine.
        let family = "Ann 👩\u{200D}👧"
        let firstSet = try await first.request(.setAlias("Ann the First"))
        let secondSet = try await first.request(.setAlias(family))
        for id in [firstSet, secondSet] {
            let answer = try await first.nextMessage(matching: "the answer to \(id)") { if case .response(id, _) = $0 { true } else { false } }
            #expect(answer == .response(id: id, .done))
        }
        #expect(try await store.player(id: players[0])?.alias == family)

        // Both players' aliases in one answer, in the order asked, each once; an unknown id is left out.
        let bothAliases = try await second.ask(.getAliases(playerIDs: [players[1], "0123456789abcdef0123456789abcdef", players[0], players[1]]))
        #expect(
            bothAliases
                == .success(
                    .aliases([
                        NativePlayerAlias(playerID: players[1], alias: String(players[1].prefix(8))),
                        NativePlayerAlias(playerID: players[0], alias: family),
                    ])))
        let tooMany = try await second.ask(.getAliases(playerIDs: (0...100).map { String(format: "%032x", $0) }))
        #expect(tooMany == .failure(NativeError(.badArgument, "GET_ALIASES names at most 100 players; this one names 101")))
        // What the player just set, without waiting for DONE: the read comes after the write.
        let renaming = try await first.request(.setAlias("Ann again"))
        let asked = try await first.request(.getAliases(playerIDs: [players[0]]))
        #expect(try await first.response(to: renaming) == .success(.done))
        #expect(try await first.response(to: asked) == .success(.aliases([NativePlayerAlias(playerID: players[0], alias: "Ann again")])))
        #expect(try await first.ask(.setAlias(family)) == .success(.done))

        // Seat 0 stacks column 0, seat 1 column 1: seat 0 wins at move 7, and leads the board.
        for number in UInt16(1)...7 {
            try await (number % 2 == 1 ? first : second).playFourInARow(number, column: number % 2 == 1 ? 0 : 1, in: matchID)
        }
        _ = try await second.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        guard case .success(.leaderboard(_, let entries)) = try await second.ask(.getLeaderboard(game: "fourinarow", around: "", limit: 0)) else {
            throw TestClientError.unexpected("no leaderboard")
        }
        #expect(entries.map(\.alias) == [family, String(players[1].prefix(8))])
        try await server.stop()
        try await store.close()

        // It outlives the server.
        let reopened = try await SQLiteGameStore.open(directory: directory.path)
        #expect(try await reopened.player(id: players[0])?.alias == family)
        try await reopened.close()
    }

    @Test(arguments: [
        ("", "may not be empty"),
        (String(repeating: "a", count: 33), "at most 32 characters (Unicode scalars); this one has 33"),
        (String(repeating: "🐈", count: 33), "at most 32 characters"),
        (" Ann", "may not begin or end with a space"),
        ("Ann\u{3000}", "may not begin or end with a space"),
        ("\u{202E}nnA", "U+202E"),
        ("An\u{200B}n", "U+200B"),
        ("Ann\u{2028}", "U+2028"),
    ])
    func anAliasTheRulesRefuseIsABadArgumentAndTheConnectionGoesOn(alias: String, reason: String) async throws {
        let store = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (client, auth) = try await server.login("alias-refused")
        let answer = try await client.ask(.setAlias(alias))
        guard case .failure(let error) = answer else { throw TestClientError.unexpected("\(answer) for \(alias.debugDescription)") }
        #expect(error.code == .badArgument)
        #expect(error.message.contains(reason), "\(error.message)")
        #expect(await store.player(id: auth.playerID)?.alias == String(auth.playerID.prefix(8)), "nothing stored")
        #expect(try await client.ask(.setAlias("Ann")) == .success(.done))
        try await server.stop()
    }

    @Test func theLongestAliasIsTheServersToSet() async throws {
        let server = try await RunningNativeServer.start { $0.maxAliasLength = 4 }
        let (client, _) = try await server.login("alias-short")
        #expect(try await client.ask(.setAlias("Anne")) == .success(.done))
        guard case .failure(let error) = try await client.ask(.setAlias("Annie")) else { throw TestClientError.unexpected("accepted") }
        #expect(error.code == .badArgument)
        #expect(error.message.contains("at most 4 characters"))
        try await server.stop()
    }

    @Test func aliasesCountAgainstTheNetworksWrittenBytes() async throws {
        let server = try await RunningNativeServer.start { $0.maxValueBytesPerMinute = 10 }
        let (client, _) = try await server.login("alias-budget")
        // A refused alias writes nothing, and costs nothing.
        guard case .failure(let refused) = try await client.ask(.setAlias(" Ann the Fourth ")) else { throw TestClientError.unexpected("accepted") }
        #expect(refused.code == .badArgument)
        #expect(try await client.ask(.setAlias("Ann 🐈")) == .success(.done))  // 8 bytes
        guard case .failure(let error) = try await client.ask(.setAlias("Ann")) else { throw TestClientError.unexpected("accepted") }
        #expect(error.code == .rateLimited)
        #expect(error.message.contains("--max-value-bytes-per-minute"))
        try await server.stop()
    }

    /// Holds the write of one alias until released; everything else goes straight through.
    private struct HeldAliasStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let heldAlias: String
        let reached = Gate()
        let release = Gate()
        func setAlias(playerID: PlayerID, alias: String) async throws {
            if alias == self.heldAlias {
                await self.reached.open()
                await self.release.wait()
            }
            try await self.inner.setAlias(playerID: playerID, alias: alias)
        }
    }

    @Test func theOperatorsRenameLandsAfterASetAliasTheServerHadAlreadyTaken() async throws {
        let store = HeldAliasStore(heldAlias: "Mine")
        let server = try await RunningNativeServer.start { $0.store = store }
        let (player, issued) = try await server.login("held-rename")
        let asked = try await player.request(.setAlias("Mine"))
        await store.reached.wait()
        #expect(try await server.listener.storeCallsQueued(forPlayer: issued.playerID) == 1)
        // The operator renames and locks while the player's write is still going: it waits its turn.
        let renamed = Task { try await server.listener.changeAlias(of: issued.playerID, OperatorAliasChange(alias: .given("Operator"), locked: true)) }
        let deadline = ContinuousClock.now + .seconds(10)
        while try await server.listener.storeCallsQueued(forPlayer: issued.playerID) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        await store.release.open()
        let changed = try await renamed.value
        #expect(changed.alias == "Operator" && changed.aliasLocked)
        #expect(try await player.response(to: asked) == .success(.done), "taken before the lock")
        #expect(try await store.player(id: issued.playerID)?.alias == "Operator", "the operator's, made last, stays")

        // Locked: the player's next choice is refused, and changes nothing.
        guard case .failure(let refused) = try await player.ask(.setAlias("Mine again")) else { throw TestClientError.unexpected("accepted") }
        #expect(refused == NativeError(.aliasLocked, "the server's operator fixed your alias; it cannot be changed"))
        #expect(try await store.player(id: issued.playerID)?.alias == "Operator")
        // Unlocked, the alias stays until the player chooses.
        let unlocked = try await server.listener.changeAlias(of: issued.playerID, OperatorAliasChange(alias: .unchanged, locked: false))
        #expect(unlocked.alias == "Operator" && !unlocked.aliasLocked)
        #expect(try await player.ask(.setAlias("Mine again")) == .success(.done))
        #expect(try await store.player(id: issued.playerID)?.alias == "Mine again")
        try await server.stop()
    }

    /// A racer that joins a Cat Race right after SET_ALIAS, without waiting for DONE, is shown
    /// by the new alias: the line-up's read waits for the write the server took before.
    @Test func aCatRaceLineUpShowsTheAliasSetJustBeforeTheJoin() async throws {
        let store = HeldAliasStore(heldAlias: "Quick Cat")
        let server = try await RunningNativeServer.start { $0.store = store }
        let (host, _) = try await server.login("held-host")
        let (racer, issued) = try await server.login("held-racer")
        let created = try #require(try await host.ask(.createMatch(mode: "catrace", maxPlayers: 2, label: "")).joined)
        let asked = try await racer.request(.setAlias("Quick Cat"))
        let joining = try await racer.request(.joinMatch(created.matchID))
        _ = try #require(try await racer.response(to: joining).joined)
        await store.reached.wait()
        let first = try await racer.nextLineUp(in: created.matchID) { $0.racers.count == 2 }
        #expect(first.racers.last?.alias == String(issued.playerID.prefix(8)), "until the alias is read")
        await store.release.open()
        // DONE once committed, then the line-up that the read queued behind the write sends.
        #expect(try await racer.response(to: asked) == .success(.done))
        let named = try await racer.nextLineUp(in: created.matchID) { $0.racers.count == 2 }
        #expect(named.racers.last?.alias == "Quick Cat")
        try await server.stop()
    }
}
