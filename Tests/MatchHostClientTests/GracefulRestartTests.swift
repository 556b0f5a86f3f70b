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

/// SIGTERM in the middle of a Four in a Row game (a deploy), and a new server on the same port
/// and data: the same client objects ride through it as through a crash.
@Suite(.serialized) struct GracefulRestartTests {
    @Test func theSameClientsRideThroughASIGTERMRestartAndTheGameGoesOn() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-sigterm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let setup = try await GameBeforeRestart.start(data: data)
        let (first, port, game) = (setup.server, setup.server.nativePort, setup.game)
        let (alice, bob, aliceAuth, bobAuth) = (setup.alice, setup.bob, setup.aliceAuth, setup.bobAuth)
        let (aliceEvents, bobEvents, bobStates) = (setup.aliceEvents, setup.bobEvents, setup.bobStates)
        // Clients that outlive a failed expectation must not go on reconnecting.
        defer { Task { await alice.close(); await bob.close() } }

        await first.stop(with: SIGTERM)
        #expect(first.process.terminationReason == .exit)
        #expect(first.process.terminationStatus == 0)

        // What Bob's app sees: the notice (and no MATCH_ENDED: the game is not over), then his
        // client reconnecting.
        // (Alice's move 3 may still be on its way to Bob.)
        let notice = try await nextInOrder(bobEvents, "bob's shutdown notice") { !$0.isPresenceEvent && !$0.isMatchEvent }
        guard case .serverShuttingDown(let shutdown) = notice else {
            Issue.record("expected the shutdown notice first, got \(notice)")
            return
        }
        #expect(shutdown.code == .shuttingDown)
        _ = try await bobStates.next("bob reconnecting") { $0 == .reconnecting(attempt: 1) }
        // A move Bob makes while the server is down does not reach it, and must not be resent
        // into the new session (as after a crash).
        let lostMove = FourInARowClientMessage.move(FourInARowMove(moveNumber: 4, column: 2)).encoded()
        try await bob.sendInput(lostMove, in: game)

        let second = try await ServeProcess.start(data: data, nativePort: port)

        let restarted = try await nextInOrder(bobEvents, "bob's session restarted") { !$0.isPresenceEvent }
        guard case .sessionRestarted(let restart) = restarted else {
            Issue.record("expected the session restart after the shutdown notice, got \(restarted)")
            return
        }
        #expect(restart.cause.code == .sessionNotFound)
        #expect(restart.lostSession == bobAuth)
        #expect(restart.newSession.playerID == bobAuth.playerID)
        #expect(restart.newSession.sessionID != bobAuth.sessionID)
        #expect(restart.unacknowledged == [.matchInput(matchID: game, input: lostMove)])
        #expect(await bob.authenticated == restart.newSession)
        #expect(await bob.state == .connected)

        // Then MATCH_RESUMED and the board as it was after move 3, Bob (seat 1) to move.
        let info = try await expectResumedAfterMoveThree(bobEvents, game: game)
        #expect(info?.players.map(\.playerID) == [aliceAuth.playerID, bobAuth.playerID])

        // Alice's client the same way, with nothing of hers lost.
        _ = try await aliceEvents.next("alice's shutdown notice") { if case .serverShuttingDown = $0 { true } else { false } }
        try await expectRestartedWithNothingLost(aliceEvents, "alice", player: aliceAuth.playerID, game: game)

        // The same client objects play on to the end: Alice completes column 0 at move 7.
        try await play(4, column: 1, by: bob, events: bobEvents, in: game)
        try await play(5, column: 0, by: alice, events: aliceEvents, in: game)
        try await play(6, column: 1, by: bob, events: bobEvents, in: game)
        try await play(7, column: 0, by: alice, events: aliceEvents, in: game)
        let over = try await bobEvents.next("GAME_OVER") { if case .gameOver? = $0.fourInARow(in: game) { true } else { false } }
        guard case .gameOver(let result)? = over.fourInARow(in: game) else { return }
        #expect(result.winnerSeat == 0)
        #expect(await bobEvents.ending == nil)
        #expect(await aliceEvents.ending == nil)

        await alice.close()
        await bob.close()
        await second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        // Each move once, in order, move 4 in the column Bob played after the restart.
        let store = try await openStoreExpectingMoves(data, game: game, columns: [0, 1, 0, 1, 0, 1, 0])
        let stored = try await finishedResult(of: game, in: store)
        #expect(stored?.players.map(\.outcome) == [.won, .lost])
        try await store.close()
    }

    /// `matchhost bot fourinarow` across a graceful restart: the bot whose turn it is sends its
    /// move while the server is down (the restart takes longer than its move delay); that move
    /// is lost with the old session, and the bot must play its turn again from the STATE it gets
    /// after the restart, not wait for the turn timer. Every game ends on the board.
    @Test func botsPlayTheirGamesToAnEndOnTheBoardAcrossASIGTERMRestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-sigterm-bots-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await ServeProcess.start(data: data)
        let port = first.nativePort
        var options = FourInARowBot.Options()
        options.port = port
        options.games = 2
        options.seed = 7
        options.moveDelay = .milliseconds(100)
        options.idleTimeout = .seconds(60)
        let bots = Task { try await FourInARowBot.run(options) }

        // Stop the server once both games are under way: four moves stored in each.
        let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
        let deadline = ContinuousClock.now + .seconds(20)
        var stored = 0
        while stored < 8, ContinuousClock.now < deadline {
            stored = 0
            for game in [1, 2] as [MatchIdentifier] { stored += min(4, (try? await store.moveLog(matchID: game).count) ?? 0) }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await store.close()
        #expect(stored == 8, "both games under way before the stop")
        await first.stop(with: SIGTERM)
        #expect(first.process.terminationStatus == 0)
        // Down for longer than a bot's move delay, as a real restart is.
        try await Task.sleep(for: .milliseconds(300))
        let second = try await ServeProcess.start(data: data, nativePort: port)

        let results = try await bots.value
        #expect(results.count == 2)
        for result in results {
            #expect(result.reason != .turnTimeout, "game \(result.game) ended by the turn timer: a bot waited on a lost move")
            #expect(result.moves > 4)
        }
        await second.stop(with: SIGTERM)
    }
}
