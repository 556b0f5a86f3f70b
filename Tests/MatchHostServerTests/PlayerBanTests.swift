import Foundation
import MatchHostCore
import MatchHostSQLite
import MatchHostStoreTesting
import MatchHostWire
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import MatchHostServer

/// Bans as the server applies them (`NativeListener.setBan`), over real sockets and a real
/// SQLite file; the admin endpoint and `matchhost ban` in front of it are in `ServeBanTests`.
@Suite struct PlayerBanTests {
    @Test func aBannedPlayersSessionEndsItsMatchSeesItLeaveAndItsSignInsAreRefusedUntilLifted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-bans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = [UInt8](repeating: 9, count: 32)
        var (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key)
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
        (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key)
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

    /// Counts `touch` calls per player, and fails `setBan` while `failsBans`.
    private struct WatchedStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let touches = NIOLockedValueBox([PlayerID: Int]())
        let failsBans = NIOLockedValueBox(false)
        func touch(playerID: PlayerID, at: UnixMillis) async throws {
            self.touches.withLockedValue { $0[playerID, default: 0] += 1 }
            try await self.inner.touch(playerID: playerID, at: at)
        }
        func setBan(playerID: PlayerID, ban: PlayerBan?, at: UnixMillis) async throws {
            if self.failsBans.withLockedValue({ $0 }) { throw GameStoreError.storageFailed(reason: "disk on fire") }
            try await self.inner.setBan(playerID: playerID, ban: ban, at: at)
        }
        func touchCount(_ player: PlayerID) -> Int { self.touches.withLockedValue { $0[player] ?? 0 } }
    }

    @Test func aBannedPlayersRefusedSignInsAreNotMarkedSeenAndItsSessionCannotBeResumed() async throws {
        let store = WatchedStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (banned, issued) = try await server.login("away-device")
        let (_, other) = try await server.login("other-device")
        // The banned player's session waits for a resume: its connection is gone.
        await banned.close()
        try await server.listener.setBan(reason: "spam", of: issued.playerID)
        let resume = try await server.handshake()
        try await resume.send(.resume(sessionID: issued.sessionID, resumeToken: issued.resumeToken, lastReceived: 0))
        #expect(try await resume.closingError().code == .sessionNotFound)
        let touchedBefore = store.touchCount(issued.playerID)
        for _ in 0..<3 {
            let retry = try await server.handshake()
            try await retry.send(.authenticate(.token(issued.sessionToken)))
            #expect(try await retry.closingError().code == .playerBanned)
        }
        // Another player's token login after those: once it is marked seen, theirs would have been.
        let byToken = try await server.handshake()
        try await byToken.send(.authenticate(.token(other.sessionToken)))
        guard case .authenticated = try await byToken.next() else {
            Issue.record("no AUTHENTICATED for the other player")
            return
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while store.touchCount(other.playerID) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(store.touchCount(other.playerID) == 1)
        #expect(store.touchCount(issued.playerID) == touchedBefore, "a refused sign-in wrote last seen")
        try await server.stop()
    }

    @Test func aBanTheDatabaseFailsChangesNothing() async throws {
        let store = WatchedStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (connection, issued) = try await server.login("lucky-device")
        store.failsBans.withLockedValue { $0 = true }
        await #expect(throws: GameStoreError.storageFailed(reason: "disk on fire")) {
            try await server.listener.setBan(reason: "x", of: issued.playerID)
        }
        // Still in session, and still signs in.
        try await connection.sendReliable(.request(id: 1, .listMatches(NativeLobbyQuery(mode: "relay"))))
        #expect(try await connection.response(to: 1).failure == nil)
        _ = try await server.login("lucky-device", secret: issued.deviceSecret)
        try await server.stop()
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

    @Test func aTimedBanEndsByItselfAndAnEndedOneIsNotLoadedAgain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-timed-ban-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = [UInt8](repeating: 7, count: 32)
        let clock = WallClock()
        var (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key, clock: clock)
        let (spammer, issued) = try await server.login("spammer-device")
        let ban = try #require(try await server.listener.setBan(reason: "spam", lasting: .seconds(3600), of: issued.playerID))
        // Its end is rounded up to the second the player is told.
        let until = try #require(ban.until)
        #expect((3_600_000..<3_601_000).contains(until.milliseconds - ban.since.milliseconds))
        #expect(until.milliseconds % 1000 == 0)
        let refusal = try await spammer.closingError()
        #expect(refusal.code == .playerBanned)
        #expect(refusal.message.wholeMatch(of: /this player is banned until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: spam/) != nil, "\(refusal)")
        #expect(try await store.player(id: issued.playerID)?.ban == ban)

        func signIn(_ credentials: NativeCredentials) async throws -> NativeFrame {
            let connection = try await server.handshake()
            try await connection.send(.authenticate(credentials))
            let answer = try await connection.next()
            await connection.close()
            return answer
        }
        // A minute before its end, still refused.
        let left = until.milliseconds - clock.now().milliseconds
        clock.advance(by: .milliseconds(left - 60_000))
        #expect(try await signIn(.token(issued.sessionToken)) == .error(refusal))
        // At its end both the token and the device sign the player in, though nobody lifted it.
        clock.advance(by: .seconds(60))
        guard case .authenticated(let byToken) = try await signIn(.token(issued.sessionToken)) else {
            Issue.record("no AUTHENTICATED at the ban's end")
            return
        }
        #expect(byToken.playerID == issued.playerID)
        guard case .authenticated = try await signIn(.device(id: "spammer-device", secret: issued.deviceSecret)) else {
            Issue.record("the device was refused after the ban's end")
            return
        }
        // The ended ban stays in the player's record, not in the server's memory.
        #expect(try await store.bannedPlayers() == [issued.playerID: ban])
        #expect(try await server.listener.bansHeld().isEmpty)

        // A server started after the end refuses nothing either.
        try await server.stop()
        try await store.close()
        (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key, clock: clock)
        #expect(try await server.listener.bansHeld().isEmpty, "an ended ban was loaded at start")
        guard case .authenticated = try await signIn(.token(byToken.sessionToken)) else {
            Issue.record("an ended ban refused a sign-in after a restart")
            return
        }
        try await server.stop()
        try await store.close()
    }

    @Test func aBanThatHasAlreadyEndedIsStoredButEndsNoSessionAndReplacesOneInForce() async throws {
        let store: any GameStore = InMemoryGameStore()
        let server = try await RunningNativeServer.start { $0.store = store }
        let (connection, issued) = try await server.login("past-device")
        let ended = try #require(try await server.listener.setBan(reason: "long ago", lasting: .seconds(-1), of: issued.playerID))
        #expect(!ended.isInForce(at: ended.since))
        #expect(try await store.player(id: issued.playerID)?.ban == ended)
        #expect(try await server.listener.bansHeld().isEmpty)
        try await connection.sendReliable(.request(id: 1, .listMatches(NativeLobbyQuery(mode: "relay"))))
        #expect(try await connection.response(to: 1).failure == nil)

        // A ban in force, replaced by one already ended: the player is let in again.
        try await server.listener.setBan(reason: "now", of: issued.playerID)
        #expect(try await connection.closingError().code == .playerBanned)
        #expect(try await server.listener.bansHeld().keys.sorted() == [issued.playerID])
        try await server.listener.setBan(reason: "now over", lasting: .seconds(-1), of: issued.playerID)
        #expect(try await server.listener.bansHeld().isEmpty)
        _ = try await server.login("past-device", secret: issued.deviceSecret)
        try await server.stop()
    }
}
