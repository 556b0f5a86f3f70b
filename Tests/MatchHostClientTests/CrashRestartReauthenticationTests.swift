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

extension CrashRestartTests {
    @Test func theSameClientsAuthenticateAgainAfterSIGKILLAndTheGameGoesOn() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try ServeProcess.start(data: data)
        let port = first.nativePort
        let alice = makeClient(port: port) { $0.reconnectPolicy = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)) }
        let bob = makeClient(port: port) { $0.reconnectPolicy = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)) }
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

        first.stop(with: SIGKILL)
        _ = try await bobStates.next("bob reconnecting") { if case .reconnecting = $0 { true } else { false } }
        // While the server is down Bob plays move 4 in column 2 and asks for his profile:
        // neither reaches the server, and neither may be resent into the new session.
        let lostMove = FourInARowClientMessage.move(FourInARowMove(moveNumber: 4, column: 2)).encoded()
        try await bob.sendInput(lostMove, in: game)
        let profile = Task { try await bob.profile() }

        let second = try ServeProcess.start(data: data, nativePort: port)

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

        let resumed = try await nextInOrder(bobEvents, "MATCH_RESUMED") { !$0.isPresenceEvent }
        guard case .matchResumed(let info) = resumed else {
            Issue.record("expected MATCH_RESUMED right after the restart, got \(resumed)")
            return
        }
        #expect(info.matchID == game)
        let stateEvent = try await nextInOrder(bobEvents, "STATE") { !$0.isPresenceEvent }
        guard case .state(let state)? = stateEvent.fourInARow(in: game) else {
            Issue.record("expected STATE after MATCH_RESUMED, got \(stateEvent)")
            return
        }
        // Moves 1 to 3, and not the move Bob sent while the server was down.
        #expect(state.phase == .playing)
        #expect(state.moveNumber == 4)
        #expect(state.seatToMove == 1)
        #expect(state.board.filter { $0 == 1 }.count == 2)
        #expect(state.board.filter { $0 == 2 }.count == 1)

        // Alice's client too, with nothing of hers lost.
        let aliceRestarted = try await aliceEvents.next("alice's session restarted") {
            if case .sessionRestarted = $0 { true } else { false }
        }
        guard case .sessionRestarted(let aliceRestart) = aliceRestarted else { return }
        #expect(aliceRestart.newSession.playerID == aliceAuth.playerID)
        #expect(aliceRestart.unacknowledged == [])
        _ = try await aliceEvents.next("alice's MATCH_RESUMED") {
            if case .matchResumed(let info) = $0 { info.matchID == game } else { false }
        }

        // The same client objects play on: Bob's move 4 (column 1 this time), Alice's move 5.
        try await play(4, column: 1, by: bob, events: bobEvents, in: game)
        try await play(5, column: 0, by: alice, events: aliceEvents, in: game)
        _ = try await bobEvents.next("MOVED 5") {
            if case .moved(let moved)? = $0.fourInARow(in: game) { moved.moveNumber == 5 } else { false }
        }

        await alice.close()
        await bob.close()
        second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        // Each move once, move 4 in the column Bob played after the restart.
        let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
        let log = try await store.moveLog(matchID: game)
        #expect(log.map(\.moveNumber) == Array(1...5))
        #expect(log.map { Array($0.move) } == [0, 1, 0, 1, 0].enumerated().map { number, column in
            Array(FourInARowClientMessage.move(FourInARowMove(moveNumber: UInt16(number + 1), column: UInt8(column))).encoded().readableBytesView)
        })
        try await store.close()
    }
}
