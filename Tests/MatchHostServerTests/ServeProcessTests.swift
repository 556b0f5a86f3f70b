import Foundation
import MatchHostProcessTesting
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// `matchhost serve` as a user runs it: a real process, a real port, a real signal.
@Suite(.serialized) struct ServeProcessTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func servePrintsItsAddressAndExitsZeroOnSignal(signal: Int32) async throws {
        let process = Process()
        process.executableURL = MatchHostBinary.url
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        process.arguments = [
            "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--data", data.path, "--log-level", "warning",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The first stdout lines name the bound addresses, one per listener.
        let printed = await readLines(2, from: output)
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("catrace listening on 127.0.0.1:") == true)
        #expect(lines.last?.hasPrefix("native listening on 127.0.0.1:") == true)
        let port = try #require(Int(lines.first?.split(separator: ":").last ?? ""))
        let nativePort = try #require(Int(lines.last?.split(separator: ":").last ?? ""))
        #expect(port > 0 && nativePort > 0)
        // The token key was created in the data directory, readable by the owner only.
        let key = data.appendingPathComponent("token-signing.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = try await TestCatRaceClient.connect(port: port, group: group, id: "G:Proc")
        #expect(try await client.next() == .notInMatch)
        let (native, _) = try await TestNativeConnection.login(port: nativePort, group: group, device: "proc-device")

        kill(process.processIdentifier, signal)
        try await client.waitUntilClosed()
        #expect(try await native.closingError().code == .shuttingDown)
        await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        try await group.shutdownGracefully()
    }

    @Test func aCorruptTokenKeyFileStopsTheServerWithAClearError() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-badkey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let key = data.appendingPathComponent("token-signing.key")
        try Data("not a key\n".utf8).write(to: key)

        let run = try await runMatchHostToExit(["serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--data", data.path])
        #expect(run.status == 2)
        // One line, as every other start-up error: not a log line.
        #expect(
            run.stderr
                == "matchhost: cannot use the data directory \(data.path): \(key.path) does not hold a key (64 hexadecimal digits); delete it to make a new one, which ends every issued token\n")
        // Nothing was overwritten.
        #expect(try String(contentsOf: key, encoding: .utf8) == "not a key\n")
    }

    @Test func aDataDirectoryThatCannotBeMadeIsNamedWithItsReason() async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-notadir-\(UUID().uuidString)")
        try Data("a file\n".utf8).write(to: parent)
        defer { try? FileManager.default.removeItem(at: parent) }
        let data = parent.appendingPathComponent("data")

        let run = try await runMatchHostToExit(["serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--data", data.path])
        #expect(run.status == 2)
        #expect(run.stderr == "matchhost: cannot use the data directory \(data.path): \(parent.path) is a file, not a directory\n")
    }

    @Test(arguments: [
        (["--disks-min-players", "1"], "--disks-min-players must be 2-16"),
        (["--disks-tick-rate", "0"], "--disks-tick-rate must be 1-120"),
        (["--turn-time", "0.5"], "--turn-time must be 1 to 86400 seconds"),
        (["--matchmaker-slice", "1500"], "--matchmaker-slice must be 0.0 to 1000.0 milliseconds"),
        (["--max-frame", "16777217"], "--max-frame must be 1 to 16777216 bytes"),
        (["--heartbeat", "20"], "--heartbeat must not be longer than --idle-timeout"),
        (["--slow-consumer-grace", "3601"], "--slow-consumer-grace must be 0.0 to 3600.0 seconds"),
        (["--max-connections-per-address", "0"], "--max-connections-per-address must be at least 1"),
        (["--max-store-backlog", "0"], "--max-store-backlog must be at least 1"),
    ])
    func gameRuleFlagsOutOfRangeAreRefused(flags: [String], message: String) async throws {
        let run = try await runMatchHostToExit(["serve", "--catrace-port", "0", "--port", "0"] + flags)
        #expect(run.status != 0)
        #expect(run.stderr.contains(message))
    }
}
