import Foundation
import MatchHostProcessTesting
import MatchHostClient
import MatchHostCore
import MatchHostSQLite
import MatchHostWire
import Testing

// What the restart tests (crash, graceful stop) check the same way.

/// Waits for `who`'s `.sessionRestarted` (the same player, nothing handed back: everything it
/// sent had been acknowledged), then its MATCH_RESUMED for `game`.
func expectRestartedWithNothingLost(
    _ events: Recorder<MatchHostClient.Event>, _ who: String, player: String, game: MatchIdentifier
) async throws {
    let restarted = try await events.next("\(who)'s session restarted") {
        if case .sessionRestarted = $0 { true } else { false }
    }
    guard case .sessionRestarted(let restart) = restarted else { return }
    #expect(restart.newSession.playerID == player)
    #expect(restart.unacknowledged == [])
    _ = try await events.next("\(who)'s MATCH_RESUMED") {
        if case .matchResumed(let info) = $0 { info.matchID == game } else { false }
    }
}

/// Reads `events` on from the restart: the next events but PRESENCE must be MATCH_RESUMED for
/// `game`, then its STATE: the board after moves 1 to 3 (nothing sent while the server was
/// down), seat 1 (Bob) to move. Returns the MATCH_RESUMED's match.
@discardableResult
func expectResumedAfterMoveThree(_ events: Recorder<MatchHostClient.Event>, game: MatchIdentifier) async throws -> NativeMatchInfo? {
    let resumed = try await nextInOrder(events, "MATCH_RESUMED") { !$0.isPresenceEvent }
    guard case .matchResumed(let info) = resumed else {
        Issue.record("expected MATCH_RESUMED right after the restart, got \(resumed)")
        return nil
    }
    #expect(info.matchID == game)
    let stateEvent = try await nextInOrder(events, "STATE") { !$0.isPresenceEvent }
    guard case .state(let state)? = stateEvent.fourInARow(in: game) else {
        Issue.record("expected STATE after MATCH_RESUMED, got \(stateEvent)")
        return nil
    }
    #expect(state.phase == .playing)
    #expect(state.moveNumber == 4)
    #expect(state.seatToMove == 1)
    #expect(state.board.filter { $0 == 1 }.count == 2)
    #expect(state.board.filter { $0 == 2 }.count == 1)
    return info
}

/// Opens the stopped server's database in `data` and checks that `game`'s move log holds one
/// Four in a Row move per element of `columns`, numbered from 1, in order: each move once.
/// Returns the store, to read more from and close.
func openStoreExpectingMoves(_ data: URL, game: MatchIdentifier, columns: [Int]) async throws -> SQLiteGameStore {
    let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
    let log = try await store.moveLog(matchID: game)
    #expect(log.map(\.moveNumber) == Array(1...columns.count).map { .init($0) })
    #expect(log.map { Array($0.move) } == columns.enumerated().map { number, column in
        Array(FourInARowClientMessage.move(FourInARowMove(moveNumber: UInt16(number + 1), column: UInt8(column))).encoded().readableBytesView)
    })
    return store
}

/// `game`'s stored result; records an issue (and returns nil) unless it is stored as finished.
func finishedResult(of game: MatchIdentifier, in store: SQLiteGameStore) async throws -> MatchResultRecord? {
    let record = try #require(try await store.match(id: game))
    guard case .finished(let result) = record.state else {
        Issue.record("the game is stored finished, not \(record.state)")
        return nil
    }
    return result
}

/// A real server process on `data`, and a Four in a Row game between two clients that
/// reconnect quickly, three moves in (Alice stacks column 0, Bob column 1): where every
/// restart test starts.
struct GameBeforeRestart {
    let server: ServeProcess
    let alice: MatchHostClient
    let bob: MatchHostClient
    let aliceAuth: NativeAuthenticated
    let bobAuth: NativeAuthenticated
    /// The players' device ids (the secrets are in the auths): to sign in again elsewhere.
    let aliceDevice: String
    let bobDevice: String
    let aliceEvents: Recorder<MatchHostClient.Event>
    let bobEvents: Recorder<MatchHostClient.Event>
    let bobStates: Recorder<MatchHostClient.ConnectionState>
    let game: MatchIdentifier

    static func start(data: URL) async throws -> GameBeforeRestart {
        let server = try await ServeProcess.start(data: data)
        let port = server.nativePort
        let aliceDevice = newDeviceID()
        let bobDevice = newDeviceID()
        let alice = makeClient(port: port, credentials: .device(id: aliceDevice, secret: "")) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        }
        let bob = makeClient(port: port, credentials: .device(id: bobDevice, secret: "")) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        }
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
        return GameBeforeRestart(
            server: server, alice: alice, bob: bob, aliceAuth: aliceAuth, bobAuth: bobAuth, aliceDevice: aliceDevice,
            bobDevice: bobDevice, aliceEvents: aliceEvents,
            bobEvents: bobEvents, bobStates: bobStates, game: game)
    }
}
