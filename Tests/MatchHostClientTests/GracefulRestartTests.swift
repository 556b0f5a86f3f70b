import Foundation
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
        let first = try ServeProcess.start(data: data)
        let port = first.nativePort
        let alice = makeClient(port: port) { $0.reconnectPolicy = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)) }
        let bob = makeClient(port: port) { $0.reconnectPolicy = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)) }
        // Clients that outlive a failed expectation must not go on reconnecting.
        defer { Task { await alice.close(); await bob.close() } }
        let aliceAuth = try await alice.connect()
        let bobAuth = try await bob.connect()
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let bobStates = Recorder(bob.stateChanges())
        let game = try await alice.createMatch(mode: "fourinarow").matchID
        _ = try await bob.joinMatch(game)
        try await play(1, column: 0, by: alice, events: aliceEvents, in: game)
        try await play(2, column: 1, by: bob, events: bobEvents, in: game)
        try await play(3, column: 0, by: alice, events: aliceEvents, in: game)

        first.stop(with: SIGTERM)
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

        let second = try ServeProcess.start(data: data, nativePort: port)

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

        let resumed = try await nextInOrder(bobEvents, "bob's MATCH_RESUMED") { !$0.isPresenceEvent }
        guard case .matchResumed(let info) = resumed else {
            Issue.record("expected MATCH_RESUMED right after the restart, got \(resumed)")
            return
        }
        #expect(info.matchID == game)
        #expect(info.players.map(\.playerID) == [aliceAuth.playerID, bobAuth.playerID])
        let stateEvent = try await nextInOrder(bobEvents, "STATE") { !$0.isPresenceEvent }
        guard case .state(let state)? = stateEvent.fourInARow(in: game) else {
            Issue.record("expected STATE after MATCH_RESUMED, got \(stateEvent)")
            return
        }
        // The board as it was after move 3, and Bob (seat 1) to move.
        #expect(state.phase == .playing)
        #expect(state.moveNumber == 4)
        #expect(state.seatToMove == 1)
        #expect(state.board.filter { $0 == 1 }.count == 2)
        #expect(state.board.filter { $0 == 2 }.count == 1)

        // Alice's client the same way, with nothing of hers lost.
        _ = try await aliceEvents.next("alice's shutdown notice") { if case .serverShuttingDown = $0 { true } else { false } }
        let aliceRestarted = try await aliceEvents.next("alice's session restarted") {
            if case .sessionRestarted = $0 { true } else { false }
        }
        guard case .sessionRestarted(let aliceRestart) = aliceRestarted else { return }
        #expect(aliceRestart.newSession.playerID == aliceAuth.playerID)
        #expect(aliceRestart.unacknowledged == [])
        _ = try await aliceEvents.next("alice's MATCH_RESUMED") {
            if case .matchResumed(let info) = $0 { info.matchID == game } else { false }
        }

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
        second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        // Each move once, in order, move 4 in the column Bob played after the restart.
        let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
        let log = try await store.moveLog(matchID: game)
        #expect(log.map(\.moveNumber) == Array(1...7))
        #expect(log.map { Array($0.move) } == [0, 1, 0, 1, 0, 1, 0].enumerated().map { number, column in
            Array(FourInARowClientMessage.move(FourInARowMove(moveNumber: UInt16(number + 1), column: UInt8(column))).encoded().readableBytesView)
        })
        let record = try #require(try await store.match(id: game))
        guard case .finished(let stored) = record.state else {
            Issue.record("the game is stored finished, not \(record.state)")
            return
        }
        #expect(stored.players.map(\.outcome) == [.won, .lost])
        try await store.close()
    }
}
