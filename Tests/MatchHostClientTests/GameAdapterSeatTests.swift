import MatchHostClient
import MatchHostWire
import NIOCore
import Testing

/// What every game adapter does to take a seat: it needs a connected client, and a match of
/// another game is refused and left again.
@Suite struct GameAdapterSeatTests {
    @Test func aMatchOfAnotherGameIsRefusedAndLeftAgain() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let host = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        try await host.connect()
        try await guest.connect()
        let joins: [(String, (MatchIdentifier) async throws -> Void)] = [
            ("disks", { _ = try await DisksClient.joinMatch($0, on: guest) }),
            ("fourinarow", { _ = try await FourInARowClient.joinMatch($0, on: guest) }),
            ("catrace", { _ = try await CatRaceNativeClient.joinMatch($0, on: guest) }),
        ]
        for (game, join) in joins {
            // A match of its own for each (a player who left a match cannot take a seat in it again).
            let relay = try await host.createMatch(mode: "relay", maxPlayers: 4, label: "not a game").matchID
            await #expect(
                throws: MatchHostClientError.invalidArgument("match \(relay) is a \"relay\" match, not \"\(game)\"")
            ) { try await join(relay) }
            // Left again: the host is alone in it.
            let listed = try await host.listMatches(NativeLobbyQuery(mode: "relay")).entries.first { $0.matchID == relay }
            #expect(listed?.players == 1)
        }
        await host.close()
        await guest.close()
    }

    @Test func anAdapterNeedsAConnectedClient() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let client = makeClient(port: server.port)
        await #expect(throws: MatchHostClientError.notConnected) { _ = try await DisksClient.createMatch(on: client, players: 2) }
        await #expect(throws: MatchHostClientError.notConnected) { _ = try await FourInARowClient.createMatch(on: client) }
        await #expect(throws: MatchHostClientError.notConnected) { _ = try await CatRaceNativeClient.createMatch(on: client, racers: 2) }
    }
}
