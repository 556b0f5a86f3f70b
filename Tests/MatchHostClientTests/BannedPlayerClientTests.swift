import MatchHostClient
import MatchHostWire
import Testing

@Suite("Native client: a banned player")
struct BannedPlayerClientTests {
    @Test("a ban closes the client with PLAYER_BANNED and it does not reconnect; its credentials then fail at once")
    func aBanClosesTheClientForGood() async throws {
        let server = try await TestServer.start()
        let credentials = NativeCredentials.device(id: newDeviceID(), secret: String(repeating: "b", count: 64))
        let client = makeClient(port: server.port, credentials: credentials)
        let session = try await client.connect()
        let states = Recorder(client.stateChanges())
        #expect(try await states.next("connected") == .connected)

        try await server.listener.setBan(reason: "botting", of: session.playerID)
        let closed = try await states.next("closed") { $0.isClosed }
        #expect(closed == .closed(.serverError(NativeError(.playerBanned, "this player is banned: botting"))))
        // Straight from connected to closed: a reconnect would only be refused again.
        #expect(await states.takeAll() == [])
        await #expect(throws: MatchHostClientError.closed(.serverError(NativeError(.playerBanned, "this player is banned: botting")))) {
            _ = try await client.profile()
        }

        // connect() throws what the server refused the credentials with.
        let again = makeClient(port: server.port, credentials: credentials)
        await #expect(throws: NativeError(.playerBanned, "this player is banned: botting")) { try await again.connect() }
        await server.stop()
    }
}
