import Foundation
import MatchHostClient
import MatchHostCore
import MatchHostProcessTesting
import MatchHostSQLite
import MatchHostWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real server whose disk stops taking writes in the middle of a game, then takes them again.
///
/// The disk is "full" through a file-size limit of 0 bytes set on the running process with
/// `prlimit`: every write to its files then fails (EFBIG, which SQLite reports as an I/O
/// error), as writes to a full disk fail (ENOSPC), while reads go on working, and the limit can
/// be lifted again without root. The server must live through it.
@Suite(.serialized) struct FullDiskTests {
    @Test func whatCannotBeStoredIsRefusedAndPlayGoesOnOnceTheDiskTakesWritesAgain() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-full-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--log-level", "notice"], capturingLog: true)
        let alice = makeClient(port: server.nativePort, credentials: .device(id: newDeviceID(), secret: ""))
        let bob = makeClient(port: server.nativePort, credentials: .device(id: newDeviceID(), secret: ""))
        _ = try await alice.connect()
        _ = try await bob.connect()
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let game = try await alice.createMatch(mode: "fourinarow").matchID
        _ = try await bob.joinMatch(game)
        try await play(1, column: 0, by: alice, events: aliceEvents, in: game)
        try await play(2, column: 1, by: bob, events: bobEvents, in: game)

        try await limitFileSize(of: server, to: "0")
        // The move is refused, not acknowledged, and stays Alice's to play: twice.
        let move = FourInARowClientMessage.move(FourInARowMove(moveNumber: 3, column: 0)).encoded()
        for attempt in 1...2 {
            try await alice.sendInput(move, in: game)
            let answer = try await aliceEvents.next("the answer to move 3, attempt \(attempt)") {
                switch $0.fourInARow(in: game) {
                case .moveRefused?: true
                case .moved(let moved)?: moved.moveNumber == 3
                default: false
                }
            }
            guard case .moveRefused(let refusal)? = answer.fourInARow(in: game) else {
                Issue.record("a move the disk did not take was acknowledged: \(answer)")
                return
            }
            #expect(refusal.reason == .couldNotBeSaved)
            #expect(refusal.moveNumber == 3)
        }
        // A new game cannot be stored either: it ends at once, and both players are told why.
        let unsaved = try await alice.createMatch(mode: "fourinarow").matchID
        _ = try await bob.joinMatch(unsaved)
        for events in [aliceEvents, bobEvents] {
            #expect(
                try await events.next("MATCH_ENDED of the game that could not be saved") {
                    if case .matchEnded(unsaved, _) = $0 { true } else { false }
                } == .matchEnded(matchID: unsaved, reason: "abandoned(the game could not be saved)"))
        }
        // Nor can a new player: refused with STORAGE_FAILED, not signed in unsaved.
        let carol = makeClient(port: server.nativePort, credentials: .device(id: newDeviceID(), secret: "")) {
            $0.reconnectPolicy = .never
        }
        do {
            _ = try await carol.connect()
            Issue.record("a player the disk could not store was signed in")
        } catch let error as NativeError {
            #expect(error.code == .storageFailed)
        }

        // The disk takes writes again: the same move is acknowledged, to both.
        try await limitFileSize(of: server, to: "unlimited")
        try await play(3, column: 0, by: alice, events: aliceEvents, in: game)
        _ = try await bobEvents.next("MOVED 3 at Bob") {
            if case .moved(let moved)? = $0.fourInARow(in: game) { moved.moveNumber == 3 } else { false }
        }
        await alice.close()
        await bob.close()
        await server.stop(with: SIGKILL)
        #expect(server.process.terminationReason == .uncaughtSignal)
        #expect(server.process.terminationStatus == SIGKILL, "it lived through the failed writes, to be killed here")

        // One line when storage started failing and one when it recovered, not one per failure.
        let log = await server.loggedLines()
        #expect(log.filter { $0.contains("storage failing") }.count == 1, "\(log)")
        #expect(log.filter { $0.contains("storage recovered") }.count == 1, "\(log)")
        #expect(!log.contains { $0.contains("move could not be saved") })
        // Stored: what was acknowledged, each move once; the game that could not be saved, not at all.
        let store = try await openStoreExpectingMoves(data, game: game, columns: [0, 1, 0])
        #expect(try await store.match(id: unsaved) == nil)
        try await store.close()
    }

    /// Sets the soft file-size limit (`prlimit --fsize`) of the running server.
    private func limitFileSize(of server: ServeProcess, to limit: String) async throws {
        let status = try await ChildProcess.run("/usr/bin/prlimit", ["--pid", "\(server.process.processIdentifier)", "--fsize=\(limit):"])
        #expect(status == 0, "prlimit --fsize=\(limit): failed")
    }
}
