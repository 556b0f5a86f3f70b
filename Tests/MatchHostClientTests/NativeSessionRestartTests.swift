import Foundation
import MatchHostClient
import MatchHostCore
import MatchHostServer
import MatchHostStoreTesting
import MatchHostWire
import NIOCore
import Testing

@Suite("Native client: a session the server lost, and a new one")
struct NativeSessionRestartTests {
    @Test("SESSION_NOT_FOUND: the client authenticates again; waiting requests fail, unacknowledged messages come back, not resent")
    func graceExpiredStartsANewSession() async throws {
        let server = try await TestServer.start { $0.sessionGrace = .milliseconds(200) }
        let proxy = try await TestProxy.start(to: server.port)
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: proxy.port) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        }
        try await alice.connect()
        let bobSession = try await bob.connect()
        let bobID = bobSession.playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let bobStates = Recorder(bob.stateChanges())
        let match = try await alice.createMatch()
        _ = try await bob.joinMatch(match.matchID)
        _ = try await aliceEvents.next("bob joined") { $0.isPresence(.joined, of: bobID) }

        try await proxy.setAccepting(false)
        await bob.dropConnection()
        _ = try await bobStates.next("reconnecting") { $0 == .reconnecting(attempt: 1) }
        try await bob.send(numbered(1), in: match.matchID)
        let waiting = try await requestMadeNow(of: bob) { try await bob.createMatch(label: "asked while away") }
        #expect(
            try await aliceEvents.next("bob's session ended") { $0.isPresence(.left, of: bobID) }
                == .presence(matchID: match.matchID, playerID: bobID, change: .left, reason: .sessionEnded))
        try await proxy.setAccepting(true)

        let restarted = try await bobEvents.next("the session restart") { if case .sessionRestarted = $0 { true } else { false } }
        guard case .sessionRestarted(let restart) = restarted else { return }
        #expect(restart.cause.code == .sessionNotFound)
        #expect(restart.lostSession == bobSession)
        #expect(restart.newSession.playerID == bobID)
        #expect(restart.newSession.sessionID != bobSession.sessionID)
        #expect(restart.unacknowledged.count == 2)
        #expect(restart.unacknowledged.first == .sendData(matchID: match.matchID, targets: [], payload: numbered(1)))
        if case .request(_, .createMatch(mode: "relay", maxPlayers: 0, label: "asked while away", isPrivate: false)) =
            restart.unacknowledged.last
        {
        } else {
            Issue.record("the waiting request is not handed back: \(restart.unacknowledged)")
        }
        await #expect(throws: MatchHostClientError.sessionLost(restart.cause)) { _ = try await waiting.value }
        // The match Bob was in goes on for Alice, without him: his client reports it over.
        let ended = try await bobEvents.next("the lost seat") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended == .matchEnded(matchID: match.matchID, reason: "abandoned(session lost)"))
        // resuming, refused, then a new session on a new connection.
        #expect(try await bobStates.next("bob's state before the drop") == .connected)
        var states: [MatchHostClient.ConnectionState] = []
        repeat {
            states.append(try await bobStates.next("bob's states up to connected"))
        } while states.last != .connected
        #expect(Array(states.suffix(5)) == [.resuming, .connecting, .handshaking, .authenticating, .connected])
        #expect(await bob.authenticated == restart.newSession)

        // The new session works (a left seat is not taken again: a new match)...
        let second = try await bob.createMatch(label: "made in the new session")
        _ = try await alice.joinMatch(second.matchID)
        try await bob.send(numbered(2), in: second.matchID)
        let first = try await aliceEvents.next("bob's first message") { if case .matchData(_, bobID, _, _) = $0 { true } else { false } }
        #expect(first.payload.flatMap(number(of:)) == 2)
        // ...and the request the old session never answered was not made again.
        #expect(try await alice.listMatches(NativeLobbyQuery(mode: "relay", labelContains: "asked while away")).entries == [])
        #expect(
            try await alice.listMatches(NativeLobbyQuery(mode: "relay", labelContains: "made in the new session")).entries.map(\.matchID)
                == [second.matchID])
        #expect(await bobEvents.ending == nil)

        await alice.close()
        await bob.close()
        await proxy.stop()
        await server.stop()
    }

    @Test("an expired session token: the client falls back to its device, with the secret the server issued")
    func expiredTokenFallsBackToTheDevice() async throws {
        let server = try await TestServer.start {
            $0.sessionGrace = .milliseconds(100)
            $0.tokenLifetime = .seconds(1)
        }
        let proxy = try await TestProxy.start(to: server.port)
        // First contact: the configured secret is empty, so only the issued one can work later.
        let bob = makeClient(port: proxy.port, credentials: .device(id: newDeviceID(), secret: "")) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        }
        let bobSession = try await bob.connect()
        #expect(!bobSession.deviceSecret.isEmpty)
        let bobEvents = Recorder(bob.events)
        let bobStates = Recorder(bob.stateChanges())

        try await proxy.setAccepting(false)
        await bob.dropConnection()
        _ = try await bobStates.next("reconnecting") { $0 == .reconnecting(attempt: 1) }
        // Past the token's expiry (whole seconds on the server's clock), and the session's grace.
        let expiresIn = Double(bobSession.tokenExpiresAt) - Date().timeIntervalSince1970
        try await Task.sleep(for: .milliseconds(Int(max(0, expiresIn) * 1000) + 200))
        try await proxy.setAccepting(true)

        let restarted = try await bobEvents.next("the session restart") { if case .sessionRestarted = $0 { true } else { false } }
        guard case .sessionRestarted(let restart) = restarted else { return }
        #expect(restart.cause.code == .sessionNotFound)
        #expect(restart.newSession.playerID == bobSession.playerID)
        // A known device: no new secret.
        #expect(restart.newSession.deviceSecret.isEmpty)
        #expect(restart.newSession.sessionToken != bobSession.sessionToken)
        #expect(await bob.state == .connected)
        _ = try await bob.createMatch()

        await bob.close()
        await proxy.stop()
        await server.stop()
    }

    @Test("a MATCH_ENDED the server tells again (it crashed before dropping its copy) is reported once")
    func aRepeatedMatchEndedIsReportedOnce() async throws {
        let store = EndNoticesKeptStore()
        let first = try await TestServer.start { $0.store = store }
        let proxy = try await TestProxy.start(to: first.port)
        let client = makeClient(port: proxy.port)
        defer { Task { await client.close() } }
        let events = Recorder(client.events)
        let player = try await client.connect().playerID

        // Each stop leaves what a crash would: a real-time match running, which the next server
        // ends (abandoned by the restart) and tells the player of as it signs in again.
        var servers = [first]
        for match: MatchID in [41, 42] {
            await servers.last!.stop()
            try await store.recordMatchStarted(id: match, game: "disks", mode: "", players: [player, "someone"], startedAt: 5)
            let next = try await TestServer.start { $0.store = store }
            servers.append(next)
            try await proxy.retarget(to: next.port)
            _ = try await events.next("session restarted") { if case .sessionRestarted = $0 { true } else { false } }
            // 41 is told again by the third server (the second's delete of its copy never
            // happened), before 42.
            let ended = try await events.next("MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
            #expect(ended == .matchEnded(matchID: MatchIdentifier(match), reason: "abandoned(server restarted)"))
            // A request, whose RELIABLE frame acknowledges the MATCH_ENDED.
            _ = try await client.listMatches(NativeLobbyQuery(mode: "relay"))
        }
        #expect(await events.takeAll().allSatisfy { if case .matchEnded = $0 { false } else { true } }, "41 reported once")
        await client.close()
        await proxy.stop()
        await servers.last!.stop()  // which waits for its writes
        // Each server asked to drop the notices once told (a no-op here); when it asks is
        // AwayPlayerEndTests' to check.
        #expect(await store.endNoticesDeleted.flatMap { $0 } == [41, 41, 42])
    }
}

extension NativeSessionRestartTests {
    @Test("a client that closes right after reading a MATCH_ENDED acknowledges it first: the server does not keep it")
    func closingAcknowledgesWhatWasRead() async throws {
        let store = InMemoryGameStore()
        let device = newDeviceID()
        let first = try await TestServer.start { $0.store = store }
        let before = makeClient(port: first.port, credentials: .device(id: device, secret: ""))
        let issued = try await before.connect()
        await before.close()
        await first.stop()
        // What a crash leaves: a match running, which the next start abandons, keeping its end for the player.
        try await store.recordMatchStarted(id: 41, game: "disks", mode: "", players: [issued.playerID, "someone"], startedAt: 5)
        let second = try await TestServer.start { $0.store = store }
        #expect(await store.endNotices().map(\.matchID) == [41])
        let client = makeClient(port: second.port, credentials: .device(id: device, secret: issued.deviceSecret))
        let events = Recorder(client.events)
        try await client.connect()
        let ended = try await events.next("MATCH_ENDED") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended == .matchEnded(matchID: 41, reason: "abandoned(server restarted)"))
        // At once: well within the client's 200 ms acknowledgement delay.
        await client.close()
        await second.stop()  // which waits for its writes
        #expect(await store.endNotices().isEmpty, "acknowledged before GOODBYE, so not told again")
    }
}

/// A store that never deletes an end notice a client acknowledged, as if each server crashed
/// before that delete committed; it records what it was asked to delete.
private final class EndNoticesKeptStore: ForwardingGameStore, Sendable {
    let inner: any GameStore = InMemoryGameStore()
    private let asked = Asked()

    var endNoticesDeleted: [[MatchID]] { get async { await self.asked.value } }

    func deleteEndNotices(playerID: PlayerID, matchIDs: [MatchID]) async throws {
        await self.asked.append(matchIDs)
    }

    private actor Asked {
        var value: [[MatchID]] = []
        func append(_ matches: [MatchID]) { self.value.append(matches) }
    }
}
