import MatchHostClient
import MatchHostCore
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

@Suite("Native client: profiles, history, leaderboards and player values")
struct NativeStoredRequestTests {
    @Test("a finished game shows in both players' profiles, histories and the game's leaderboard")
    func profileHistoryAndLeaderboard() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        let carol = makeClient(port: server.port)
        let aliceID = try await alice.connect().playerID
        let bobID = try await bob.connect().playerID
        let carolID = try await carol.connect().playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let carolEvents = Recorder(carol.events)
        let first = try await playQuickWin(alice, aliceEvents, over: bob, bobEvents)
        let second = try await playQuickWin(alice, aliceEvents, over: carol, carolEvents)

        let own = try await alice.profile()
        #expect(own.playerID == aliceID)
        #expect(own.alias == String(aliceID.prefix(8)))
        #expect(own.lastSeenAt >= own.createdAt)
        #expect(own.stats.map(\.game) == ["fourinarow"])
        #expect(own.stats.first.map { [$0.played, $0.won, $0.lost, $0.drawn] } == [2, 2, 0, 0])
        #expect((own.stats.first?.rating ?? 0) > 1500)
        let bobs = try await alice.profile(of: bobID)
        #expect(bobs.stats.first.map { [$0.played, $0.won, $0.lost] } == [1, 0, 1])

        let history = try await alice.matchHistory()
        #expect(history.map(\.matchID) == [second, first])
        #expect(history.map(\.state) == [.finished, .finished])
        #expect(history.map(\.outcome) == [.won, .won])
        #expect(history.first?.players == [aliceID, carolID])
        #expect(try await alice.matchHistory(limit: 1).map(\.matchID) == [second])
        #expect(try await carol.matchHistory().map(\.outcome) == [.lost])

        let board = try await bob.leaderboard(game: "fourinarow")
        #expect(board.map(\.playerID).first == aliceID)
        #expect(board.map(\.rank) == [1, 2, 3])
        #expect(Set(board.map(\.playerID)) == [aliceID, bobID, carolID])
        #expect(board.first?.alias == String(aliceID.prefix(8)))
        #expect(board.first.map { [$0.won, $0.played] } == [2, 2])
        let around = try await bob.leaderboard(game: "fourinarow", around: aliceID, limit: 2)
        #expect(around.map(\.rank) == [1, 2])
        #expect(try await bob.leaderboard(game: "disks").isEmpty)

        // A game in progress is in alice's own history, not in what others read of hers.
        let running = try await alice.createMatch(mode: "fourinarow", maxPlayers: 2).matchID
        _ = try await bob.joinMatch(running)
        #expect(try await alice.matchHistory().map(\.matchID) == [running, second, first])
        #expect(try await alice.matchHistory().first?.state == .running)
        #expect(try await bob.matchHistory(of: aliceID).map(\.matchID) == [second, first])
        #expect(try await carol.matchHistory(of: aliceID, limit: 1).map(\.matchID) == [second])

        await expectNativeError(.noSuchPlayer) { _ = try await alice.profile(of: "nobody") }
        await expectNativeError(.noSuchPlayer) { _ = try await alice.matchHistory(of: "nobody") }
        for client in [alice, bob, carol] { await client.close() }
        await server.stop()
    }

    @Test("a private game shows in another player's history only to its own players")
    func privateGamesInHistory() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        let carol = makeClient(port: server.port)
        let aliceID = try await alice.connect().playerID
        _ = try await bob.connect().playerID
        _ = try await carol.connect().playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let carolEvents = Recorder(carol.events)
        let open = try await playQuickWin(alice, aliceEvents, over: bob, bobEvents)
        let invited = try await playQuickWin(alice, aliceEvents, over: carol, carolEvents, isPrivate: true)

        #expect(try await alice.matchHistory().map(\.matchID) == [invited, open])
        #expect(try await carol.matchHistory(of: aliceID).map(\.matchID) == [invited, open])
        #expect(try await bob.matchHistory(of: aliceID).map(\.matchID) == [open])
        #expect(try await bob.matchHistory(of: aliceID, limit: 1).map(\.matchID) == [open])
        // Its result still counts: privacy hides the match, not the player's record.
        #expect(try await bob.profile(of: aliceID).stats.first?.won == 2)
        for client in [alice, bob, carol] { await client.close() }
        await server.stop()
    }

    @Test("a player's alias is set through the client, and refused with the server's reason")
    func alias() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        let aliceID = try await alice.connect().playerID
        try await bob.connect()
        try await alice.setAlias("Alice")
        #expect(try await bob.profile(of: aliceID).alias == "Alice")
        await expectNativeError(.badArgument) { try await alice.setAlias("Alice\u{202E}") }
        // Over the field's 255 bytes: refused by the client, before it would cost the connection.
        await #expect(throws: MatchHostClientError.self) { try await alice.setAlias(String(repeating: "a", count: 256)) }
        // A control character would go as a space: refused, not changed.
        await #expect(throws: MatchHostClientError.self) { try await alice.setAlias("Ann\nBo") }
        #expect(try await alice.profile().alias == "Alice")

        // Many at once: over the server's 100 a request, the client asks in batches; ids the
        // server does not know are left out, and one named twice is answered once.
        let bobID = try await bob.profile().playerID
        let unknown = (0..<150).map { String(format: "%032x", $0) }
        let aliases = try await bob.aliases(of: [aliceID] + unknown + [bobID, aliceID])
        #expect(aliases == [aliceID: "Alice", bobID: String(bobID.prefix(8))])
        #expect(try await bob.aliases(of: []) == [:])
        await alice.close()
        await bob.close()
        await server.stop()
    }

    @Test("a player's values are its own, stored within the limits")
    func values() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        try await alice.connect()
        try await bob.connect()
        #expect(try await alice.readValue(key: "settings") == nil)
        try await alice.writeValue([1, 2, 3], key: "settings")
        #expect(try await alice.readValue(key: "settings") == [1, 2, 3])
        #expect(try await bob.readValue(key: "settings") == nil)
        try await alice.writeValue([], key: "settings")
        #expect(try await alice.readValue(key: "settings") == [])
        try await alice.deleteValue(key: "settings")
        #expect(try await alice.readValue(key: "settings") == nil)
        try await alice.deleteValue(key: "settings")

        await expectNativeError(.invalidKey) { _ = try await alice.readValue(key: "") }
        await expectNativeError(.invalidKey) { try await alice.writeValue([1], key: "") }
        await expectNativeError(.invalidKey) { try await alice.writeValue([1], key: String(repeating: "k", count: 129)) }
        await expectNativeError(.valueTooLarge) { try await alice.writeValue([UInt8](repeating: 7, count: 16 * 1024 + 1), key: "big") }
        try await alice.writeValue([UInt8](repeating: 7, count: 16 * 1024), key: "big")
        for index in 1..<64 { try await bob.writeValue([UInt8(index)], key: "key-\(index)") }
        try await bob.writeValue([0], key: "key-64")
        await expectNativeError(.tooManyKeys) { try await bob.writeValue([0], key: "key-65") }
        // Replacing a key the player holds is still allowed at the limit.
        try await bob.writeValue([9], key: "key-64")
        #expect(try await bob.readValue(key: "key-64") == [9])
        await alice.close()
        await bob.close()
        await server.stop()
    }

    @Test("answers larger than the server's --max-frame are read (PROTOCOL.md's frame sizes)")
    func answersLargerThanTheFrameLimit() async throws {
        let store = InMemoryGameStore()
        let server = try await TestServer.start {
            $0.maxFrameBytes = 1024
            $0.store = store
        }
        let alice = makeClient(port: server.port) { $0.maximumFrameBytes = 1024 }
        let aliceID = try await alice.connect().playerID
        // 16 KiB fits no frame Alice may send, but a VALUE answer carries it.
        let big = [UInt8](repeating: 7, count: 16 * 1024)
        try await store.writeValue(playerID: aliceID, key: "big", value: big)
        #expect(try await alice.readValue(key: "big") == big)
        #expect(await alice.authenticated?.playerID == aliceID, "still connected, same session")
        await alice.close()
        await server.stop()
    }
}
