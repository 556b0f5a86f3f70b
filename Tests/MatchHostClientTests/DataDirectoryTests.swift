import Foundation
import MatchHostClient
import MatchHostCore
import MatchHostProcessTesting
import MatchHostSQLite
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A data directory belongs to one server at a time, and its database is backed up while the
/// server runs and restored into a stopped one: `matchhost serve`, `backup` and `restore` as a
/// user runs them.
@Suite(.serialized) struct DataDirectoryTests {
    @Test func aSecondServerOnTheSameDataIsRefusedAndTheFirstKeepsItsMatches() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await ServeProcess.start(data: data)
        let alice = makeClient(port: first.nativePort)
        _ = try await alice.connect()
        let disks = try await alice.createMatch(mode: "disks").matchID
        // A history request is answered after the writes queued before it: the match is stored.
        #expect(try await alice.matchHistory().map(\.matchID) == [disks])

        // Had it started, it would have recorded the first server's running match as abandoned
        // by a restart.
        let second = try await runMatchHostToExit(
            ["serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0", "--data", data.path],
            timeout: .seconds(10))
        #expect(second.status == 2)
        #expect(second.stdout.isEmpty, "nothing was bound")
        #expect(second.stderr.contains(data.appendingPathComponent("matchhost.lock").path))
        #expect(second.stderr.contains("(process \(first.process.processIdentifier))"))
        // The first server goes on serving.
        _ = try await alice.createMatch(mode: "fourinarow")

        // The kernel drops the lock with the process, kill -9 included: nothing to clean up.
        // (Alice is still in her match: had she left, it would have ended.)
        await first.stop(with: SIGKILL)
        await alice.close()
        let store = try await SQLiteGameStore.open(directory: data.path, options: SQLiteStoreOptions(createIfMissing: false))
        #expect(try await store.match(id: disks)?.state == .running)
        try await store.close()
        let third = try await ServeProcess.start(data: data)
        await third.stop(with: SIGTERM)
        #expect(third.process.terminationStatus == 0)
    }

    @Test func aBackupTakenDuringAGameRestoresIntoAServerThatContinuesIt() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-backup-\(UUID().uuidString)")
        let restoredData = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-restored-\(UUID().uuidString)")
        let backup = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-backup-\(UUID().uuidString).sqlite")
        defer {
            for url in [data, restoredData, backup] { try? FileManager.default.removeItem(at: url) }
        }
        // A game three moves in: Alice stacks column 0, Bob column 1.
        let setup = try await GameBeforeRestart.start(data: data)
        let (server, alice, bob, game) = (setup.server, setup.alice, setup.bob, setup.game)

        // Taken while the server runs, after move 3 was acknowledged.
        let backedUp = try await runMatchHostToExit(["backup", backup.path, "--data", data.path])
        #expect(backedUp.status == 0, "\(backedUp.stderr)")
        #expect(backedUp.stdout.contains("2 players, 1 matches (1 turn-based running), 3 moves"))
        #expect(backedUp.stdout.contains("integrity check ok"))
        let mode = try FileManager.default.attributesOfItem(atPath: backup.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A second backup to the same name is refused and leaves the first as it was.
        let size = try FileManager.default.attributesOfItem(atPath: backup.path)[.size] as? Int
        let again = try await runMatchHostToExit(["backup", backup.path, "--data", data.path])
        #expect(again.status == 2)
        #expect(again.stderr.contains("never overwrites"))
        #expect(try FileManager.default.attributesOfItem(atPath: backup.path)[.size] as? Int == size)
        // It checks out where it is kept; a damaged copy of it does not.
        let checked = try await runMatchHostToExit(["restore", "--check", backup.path])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.stdout.contains("would restore: 2 players, 1 matches (1 turn-based running), 3 moves"))
        let damaged = backup.deletingPathExtension().appendingPathExtension("damaged.sqlite")
        defer { try? FileManager.default.removeItem(at: damaged) }
        try Data(try Data(contentsOf: backup).prefix(size.map { $0 / 2 } ?? 0)).write(to: damaged)
        let refusedCheck = try await runMatchHostToExit(["restore", "--check", damaged.path])
        #expect(refusedCheck.status == 2)
        #expect(refusedCheck.stderr.contains("would not restore"))
        // Restoring over a running server's database is refused.
        let refused = try await runMatchHostToExit(["restore", backup.path, "--data", data.path])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("Stop the server first"))

        // Move 4 comes after the backup: the restored game does not have it.
        try await play(4, column: 1, by: bob, events: setup.bobEvents, in: game)
        await alice.close()
        await bob.close()
        await server.stop(with: SIGTERM)

        let restored = try await runMatchHostToExit(["restore", backup.path, "--data", restoredData.path])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("1 turn-based running"))
        // The data directory it made is its owner's alone, as serve makes it.
        #expect(try FileManager.default.attributesOfItem(atPath: restoredData.path)[.posixPermissions] as? Int == 0o700)
        // A new data directory: a new token key, so the players come back with their devices.
        let second = try await ServeProcess.start(data: restoredData)
        let bobAgain = makeClient(port: second.nativePort, credentials: .device(id: setup.bobDevice, secret: setup.bobAuth.deviceSecret))
        let bobAgainEvents = Recorder(bobAgain.events)
        #expect(try await bobAgain.connect().playerID == setup.bobAuth.playerID)
        try await expectResumedAfterMoveThree(bobAgainEvents, game: game)
        let aliceAgain = makeClient(port: second.nativePort, credentials: .device(id: setup.aliceDevice, secret: setup.aliceAuth.deviceSecret))
        #expect(try await aliceAgain.connect().playerID == setup.aliceAuth.playerID)
        try await play(4, column: 1, by: bobAgain, events: bobAgainEvents, in: game)
        await aliceAgain.close()
        await bobAgain.close()
        await second.stop(with: SIGTERM)
        let store = try await openStoreExpectingMoves(restoredData, game: game, columns: [0, 1, 0, 1])
        try await store.close()
    }

    /// Restore run as root (sudo) into a directory a service user owns: that user can open it.
    @Test(.enabled(if: geteuid() == 0, "needs root")) func restoreAsRootGivesItsFilesToTheDirectorysOwner() async throws {
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-owned-src-\(UUID().uuidString)")
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-owned-\(UUID().uuidString)")
        defer { for url in [source, data] { try? FileManager.default.removeItem(at: url) } }
        let store = try await SQLiteGameStore.open(directory: source.path)
        try await store.close()
        let backup = source.appendingPathComponent("backup.sqlite")
        #expect(try await runMatchHostToExit(["backup", backup.path, "--data", source.path]).status == 0)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let nobody: uid_t = 65534
        #expect(chown(data.path, nobody, gid_t(nobody)) == 0)

        let restored = try await runMatchHostToExit(["restore", backup.path, "--data", data.path])
        #expect(restored.status == 0, "\(restored.stderr)")
        for name in [SQLiteGameStore.fileName, "matchhost.lock"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: data.appendingPathComponent(name).path)
            #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == nobody, "\(name)")
        }
    }
}
