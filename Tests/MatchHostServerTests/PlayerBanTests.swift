import Foundation
import MatchHostCore
import MatchHostServer
import MatchHostSQLite
import MatchHostWire
import NIOCore
import Testing

/// Bans as the server applies them (`NativeListener.setBan`), over real sockets and a real
/// SQLite file; the admin endpoint and `matchhost ban` in front of it are in `ServeBanTests`.
@Suite struct PlayerBanTests {
    @Test func aBannedPlayersSessionEndsItsMatchSeesItLeaveAndItsSignInsAreRefusedUntilLifted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-bans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = [UInt8](repeating: 9, count: 32)
        var store = try await SQLiteGameStore.open(directory: directory.path)
        var server = try await RunningNativeServer.start {
            $0.tokenSigningKey = key
            $0.store = store
        }
        let (alice, _) = try await server.login("alice-device")
        let (cheater, issued) = try await server.login("cheater-device")
        let created = try await alice.request(.createMatch(mode: "relay", maxPlayers: 4, label: "ban", isPrivate: false))
        let matchID = try #require(try await alice.response(to: created).joined).matchID
        let joined = try await cheater.request(.joinMatch(matchID))
        #expect(try await cheater.response(to: joined).joined != nil)
        #expect(try await alice.nextMessage() == .presence(matchID: matchID, playerID: issued.playerID, change: .joined, reason: .none))

        let ban = try #require(try await server.listener.setBan(reason: "aimbot", of: issued.playerID))
        #expect(ban.reason == "aimbot")
        // Committed before it returned.
        #expect(try await store.player(id: issued.playerID)?.ban == ban)
        #expect(try await cheater.closingError() == NativeError(.playerBanned, "this player is banned: aimbot"))
        #expect(try await alice.nextMessage() == .presence(matchID: matchID, playerID: issued.playerID, change: .left, reason: .sessionEnded))
        #expect(try await server.listener.counts().sessions == 1)

        // Neither its device nor its token signs it in; others still sign in.
        let byDevice = try await server.handshake()
        try await byDevice.send(.authenticate(.device(id: "cheater-device", secret: issued.deviceSecret)))
        #expect(try await byDevice.closingError().code == .playerBanned)
        let byToken = try await server.handshake()
        try await byToken.send(.authenticate(.token(issued.sessionToken)))
        #expect(try await byToken.closingError() == NativeError(.playerBanned, "this player is banned: aimbot"))
        _ = try await server.login("someone-else")

        // Unknown players are refused by the store, and nothing is banned.
        await #expect(throws: GameStoreError.unknownPlayer("nobody")) { try await server.listener.setBan(reason: "x", of: "nobody") }

        // The ban outlives a restart.
        try await server.stop()
        try await store.close()
        store = try await SQLiteGameStore.open(directory: directory.path)
        server = try await RunningNativeServer.start {
            $0.tokenSigningKey = key
            $0.store = store
        }
        let afterRestart = try await server.handshake()
        try await afterRestart.send(.authenticate(.token(issued.sessionToken)))
        #expect(try await afterRestart.closingError().code == .playerBanned)

        // Lifted, the same token signs the same player in.
        #expect(try await server.listener.setBan(reason: nil, of: issued.playerID) == nil)
        #expect(try await store.bannedPlayers().isEmpty)
        let back = try await server.handshake()
        try await back.send(.authenticate(.token(issued.sessionToken)))
        guard case .authenticated(let authenticated) = try await back.next() else {
            Issue.record("no AUTHENTICATED after the ban was lifted")
            return
        }
        #expect(authenticated.playerID == issued.playerID)
        try await server.stop()
        try await store.close()
    }

    @Test func aBanWithoutAReasonSaysOnlyThatThePlayerIsBanned() async throws {
        let server = try await RunningNativeServer.start()
        let (first, issued) = try await server.login("quiet-device")
        await first.close()
        try await server.listener.setBan(reason: "", of: issued.playerID)
        let again = try await server.handshake()
        try await again.send(.authenticate(.device(id: "quiet-device", secret: issued.deviceSecret)))
        #expect(try await again.closingError() == NativeError(.playerBanned, "this player is banned"))
        try await server.stop()
    }
}
