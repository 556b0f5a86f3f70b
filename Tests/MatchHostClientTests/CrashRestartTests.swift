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

/// `kill -9` in the middle of a Four in a Row game, and a restart on the same data.
@Suite(.serialized) struct CrashRestartTests {
    @Test func aTurnBasedGameContinuesFromItsLastAcknowledgedMoveAfterSIGKILL() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }

        // Before the crash: a game three moves in, and a real-time match waiting for players.
        let first = try await ServeProcess.start(data: data)
        let aliceDevice = newDeviceID()
        let bobDevice = newDeviceID()
        let alice = makeClient(port: first.nativePort, credentials: .device(id: aliceDevice, secret: ""))
        let bob = makeClient(port: first.nativePort, credentials: .device(id: bobDevice, secret: ""))
        let aliceAuth = try await alice.connect()
        let bobAuth = try await bob.connect()
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let game = try await alice.createMatch(mode: "fourinarow").matchID
        _ = try await bob.joinMatch(game)
        let disks = try await alice.createMatch(mode: "disks").matchID
        try await play(1, column: 0, by: alice, events: aliceEvents, in: game)
        try await play(2, column: 1, by: bob, events: bobEvents, in: game)
        try await play(3, column: 0, by: alice, events: aliceEvents, in: game)
        // Move 3 is acknowledged: it must survive.
        await first.stop(with: SIGKILL)
        #expect(first.process.terminationReason == .uncaughtSignal)
        await alice.close()
        await bob.close()
        // Down for a moment: a turn timer that went on from before the crash would show it.
        try await Task.sleep(for: .seconds(1))

        // After the restart a turn is 3 s: a turn timer that started with the server would run
        // out while bob, whose turn it is, is not back yet.
        let turnMilliseconds: UInt32 = 3_000
        let second = try await ServeProcess.start(data: data, arguments: ["--turn-time", "3"])
        // Alice comes back first, with her session token, which outlived the crash.
        let aliceAgain = makeClient(port: second.nativePort, credentials: .token(aliceAuth.sessionToken))
        let aliceAgainEvents = Recorder(aliceAgain.events)
        #expect(try await aliceAgain.connect().playerID == aliceAuth.playerID)
        let resumed = try await aliceAgainEvents.next("MATCH_RESUMED") { if case .matchResumed = $0 { true } else { false } }
        guard case .matchResumed(let info) = resumed else { return }
        #expect(info.matchID == game)
        #expect(info.players.map(\.playerID) == [aliceAuth.playerID, bobAuth.playerID])
        let waiting = try await aliceAgainEvents.next("STATE") { if case .state? = $0.fourInARow(in: game) { true } else { false } }
        guard case .state(let waitingState)? = waiting.fourInARow(in: game) else { return }
        #expect(waitingState.phase == .playing)
        #expect(waitingState.moveNumber == 4)
        #expect(waitingState.seatToMove == 1)
        // Two discs of seat 0 (1 on the wire) and one of seat 1 (2): moves 1 to 3, none twice.
        #expect(waitingState.board.filter { $0 == 1 }.count == 2)
        #expect(waitingState.board.filter { $0 == 2 }.count == 1)
        #expect(waitingState.turnTimeLeftMilliseconds == FourInARowSnapshot.turnWaitsForArrival, "bob's turn waits for bob")
        // The real-time match she was in did not survive, and she is told so.
        #expect(
            try await aliceAgainEvents.next("MATCH_ENDED of the disks match") { if case .matchEnded(disks, _) = $0 { true } else { false } }
                == .matchEnded(matchID: disks, reason: "abandoned(server restarted)"))

        // Bob's phone takes longer than a turn to reconnect; his turn has not begun meanwhile.
        try await Task.sleep(for: .milliseconds(Int(turnMilliseconds) + 500))
        let bobAgain = makeClient(port: second.nativePort, credentials: .device(id: bobDevice, secret: bobAuth.deviceSecret))
        let bobAgainEvents = Recorder(bobAgain.events)
        let arrivedAt = ContinuousClock.now
        #expect(try await bobAgain.connect().playerID == bobAuth.playerID)
        _ = try await bobAgainEvents.next("MATCH_RESUMED") { if case .matchResumed(let info) = $0 { info.matchID == game } else { false } }
        let stateEvent = try await bobAgainEvents.next("STATE") { if case .state? = $0.fourInARow(in: game) { true } else { false } }
        let sinceArrival = ContinuousClock.now - arrivedAt
        guard case .state(let state)? = stateEvent.fourInARow(in: game) else { return }
        #expect(state.moveNumber == 4)
        #expect(state.seatToMove == 1)
        // A full turn from his arrival: at most the time since he connected has gone.
        let sinceArrivalMilliseconds = sinceArrival.components.seconds * 1000 + sinceArrival.components.attoseconds / 1_000_000_000_000_000
        #expect(state.turnTimeLeftMilliseconds <= turnMilliseconds)
        #expect(Int64(state.turnTimeLeftMilliseconds) >= Int64(turnMilliseconds) - sinceArrivalMilliseconds - 1)
        // Alice sees his turn start.
        let started = try await aliceAgainEvents.next("STATE with bob's turn running") { event in
            if case .state(let state)? = event.fourInARow(in: game) { state.turnTimeLeftMilliseconds <= turnMilliseconds } else { false }
        }
        guard case .state(let aliceView)? = started.fourInARow(in: game) else { return }
        #expect(aliceView.seatToMove == 1)

        // The game goes on from move 4; alice completes column 0 at move 7.
        try await play(4, column: 1, by: bobAgain, events: bobAgainEvents, in: game)
        try await play(5, column: 0, by: aliceAgain, events: aliceAgainEvents, in: game)
        try await play(6, column: 1, by: bobAgain, events: bobAgainEvents, in: game)
        try await play(7, column: 0, by: aliceAgain, events: aliceAgainEvents, in: game)
        let over = try await bobAgainEvents.next("GAME_OVER") { if case .gameOver? = $0.fourInARow(in: game) { true } else { false } }
        guard case .gameOver(let result)? = over.fourInARow(in: game) else { return }
        #expect(result.winnerSeat == 0)
        await aliceAgain.close()
        await bobAgain.close()
        await second.stop(with: SIGTERM)
        #expect(second.process.terminationStatus == 0)

        // The database holds each move once, in order, and the result.
        let store = try await openStoreExpectingMoves(data, game: game, columns: [0, 1, 0, 1, 0, 1, 0])
        let stored = try await finishedResult(of: game, in: store)
        #expect(stored?.players.map(\.playerID) == [aliceAuth.playerID, bobAuth.playerID])
        #expect(stored?.players.map(\.outcome) == [.won, .lost])
        #expect(try await store.match(id: disks)?.state == .abandoned(reason: "server restarted"))
        try await store.close()
    }

    /// Forty games moving fast when the server is killed (`matchhost bench fourinarow
    /// --kill-server`): every move any player got MOVED for is in the log a restarted server
    /// reads, and at most one more per game (committed as the server died, never
    /// acknowledged); the games still running are there to continue.
    @Test func everyMoveAPlayerGotMovedForOutlivesASIGKILLInFullPlay() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-crash-load-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let movedFile = data.path + ".moved"
        defer { try? FileManager.default.removeItem(atPath: movedFile) }
        let limits = [
            "--max-new-players-per-minute", "1000000", "--max-new-matches-per-minute", "1000000", "--max-connections-per-address", "1000",
        ]
        let server = try await ServeProcess.start(data: data, arguments: limits)
        let bench = try await runMatchHostToExit([
            "bench", "fourinarow", "--port", "\(server.nativePort)", "--games", "40", "--think", "0.01", "--seconds", "1.5", "--warmup", "0.5",
            "--create-spread", "0.2", "--server-pid", "\(server.process.processIdentifier)", "--kill-server", "--moved-file", movedFile,
        ])
        #expect(bench.status == 0, "\(bench.stdout)\(bench.stderr)")
        await server.stop(with: SIGKILL)
        #expect(server.process.terminationReason == .uncaughtSignal, "the bench killed it")

        let seen = try String(contentsOfFile: movedFile, encoding: .utf8).split(separator: "\n").map { line in
            let fields = line.split(separator: " ").compactMap { Int($0) }
            return (match: MatchID(fields[0]), highest: fields[1])
        }
        #expect(seen.count >= 40, "every game made moves")
        let store = try await SQLiteGameStore.open(directory: data.path)
        for (match, highest) in seen {
            let log = try await store.moveLog(matchID: match).map(\.moveNumber)
            #expect(Array(log.prefix(highest)) == Array(1...highest), "match \(match): MOVED for move \(highest)")
            #expect(log.count <= highest + 1, "match \(match)")
        }
        #expect(try await !store.activeTurnGames().isEmpty)
        try await store.close()
        let again = try await ServeProcess.start(data: data, arguments: limits)
        await again.stop(with: SIGTERM)
        #expect(again.process.terminationStatus == 0)
    }
}
