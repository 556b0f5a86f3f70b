import Foundation
import MatchHostProcessTesting
import MatchHostClient
import MatchHostCore
import MatchHostSQLite
import MatchHostWire
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension CrashRestartTests {
    @Test func theSameClientsAuthenticateAgainAfterSIGKILLAndTheGameGoesOn() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let setup = try await GameBeforeRestart.start(data: data)
        let (first, port, game) = (setup.server, setup.server.nativePort, setup.game)
        let (alice, bob, aliceAuth, bobAuth) = (setup.alice, setup.bob, setup.aliceAuth, setup.bobAuth)
        let (aliceEvents, bobEvents, bobStates) = (setup.aliceEvents, setup.bobEvents, setup.bobStates)
        // Alice also waits for an opponent in a second game: not stored until one joins.
        let waiting = try await alice.createMatch(mode: "fourinarow").matchID

        await first.stop(with: SIGKILL)
        _ = try await bobStates.next("bob reconnecting") { if case .reconnecting = $0 { true } else { false } }
        // While the server is down Bob plays move 4 in column 2 and asks for his profile:
        // neither reaches the server, and neither may be resent into the new session.
        let lostMove = FourInARowClientMessage.move(FourInARowMove(moveNumber: 4, column: 2)).encoded()
        try await bob.sendInput(lostMove, in: game)
        let profile = try await requestMadeNow(of: bob) { try await bob.profile() }

        let second = try await ServeProcess.start(data: data, nativePort: port)

        // Bob's client comes back by itself: a new session, then his game, in that order.
        let restarted = try await nextInOrder(bobEvents, "bob's session restarted") {
            if case .sessionRestarted = $0 { true } else { false }
        }
        guard case .sessionRestarted(let restart) = restarted else { return }
        #expect(restart.cause.code == .sessionNotFound)
        #expect(restart.lostSession == bobAuth)
        #expect(restart.newSession.playerID == bobAuth.playerID)
        #expect(restart.newSession.sessionID != bobAuth.sessionID)
        #expect(restart.newSession.deviceSecret.isEmpty)
        #expect(restart.unacknowledged.count == 2)
        #expect(restart.unacknowledged.first == .matchInput(matchID: game, input: lostMove))
        if case .request(_, .getProfile(playerID: "")) = restart.unacknowledged.last {
        } else {
            Issue.record("the profile request is not handed back: \(restart.unacknowledged)")
        }
        await #expect(throws: MatchHostClientError.sessionLost(restart.cause)) { _ = try await profile.value }
        #expect(await bob.authenticated == restart.newSession)
        #expect(await bob.state == .connected)

        // Then MATCH_RESUMED and moves 1 to 3, not the move Bob sent while the server was down.
        try await expectResumedAfterMoveThree(bobEvents, game: game)

        // Alice's client too, with nothing of hers lost.
        try await expectRestartedWithNothingLost(aliceEvents, "alice", player: aliceAuth.playerID, game: game)
        // The waiting game is gone with the crash: her client says so (the saved one goes on).
        let ended = try await aliceEvents.next("the waiting game's end") { if case .matchEnded = $0 { true } else { false } }
        #expect(ended == .matchEnded(matchID: waiting, reason: "abandoned(session lost)"))

        // The same client objects play on: Bob's move 4 (column 1 this time), Alice's move 5.
        try await play(4, column: 1, by: bob, events: bobEvents, in: game)
        try await play(5, column: 0, by: alice, events: aliceEvents, in: game)
        _ = try await bobEvents.next("MOVED 5") {
            if case .moved(let moved)? = $0.fourInARow(in: game) { moved.moveNumber == 5 } else { false }
        }

        await alice.close()
        await bob.close()
        await second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        // Each move once, move 4 in the column Bob played after the restart.
        let store = try await openStoreExpectingMoves(data, game: game, columns: [0, 1, 0, 1, 0])
        try await store.close()
    }
}
