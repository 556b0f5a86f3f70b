import Foundation
import MatchHostProcessTesting
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// `matchhost serve` as a user runs it: a real process, a real port, a real signal.
@Suite(.serialized) struct ServeProcessTests {
    @Test func theVersionSaysWhichProtocolAndSchemaThisBuildHas() async throws {
        let printed = try await runMatchHostToExit(["--version"])
        #expect(printed.status == 0)
        #expect(printed.stdout == "matchhost 0.1.0 (native protocol 1, database schema v12)\n")
    }

    /// `serve` is the default command, so without this check a typo would be parsed as serve's
    /// arguments (or, had serve taken none, start a server).
    @Test func aMistypedCommandIsNamedAndTheNearestOneSuggested() async throws {
        let typo = try await runMatchHostToExit(["leaderbord", "fourinarow"])
        #expect(typo.status == 64)
        #expect(typo.stderr.hasPrefix("Error: 'leaderbord' is not a matchhost command; did you mean 'leaderboard'?\n"))
        let unknown = try await runMatchHostToExit(["scores"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("Error: 'scores' is not a matchhost command; the commands are serve, bench, play, bot, lobby, leaderboard, player,"))
        // Options still go to serve, and `help` is ArgumentParser's.
        let option = try await runMatchHostToExit(["--port", "x"])
        #expect(option.status == 64)
        #expect(option.stderr.contains("The value 'x' is invalid for '--port <port>'"))
        let help = try await runMatchHostToExit(["help", "leaderboard"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: matchhost leaderboard"))
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func servePrintsItsAddressAndExitsZeroOnSignal(signal: Int32) async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let process = try ChildProcess(
            MatchHostBinary.url.path,
            [
                "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0", "--data", data.path,
                "--log-level", "warning",
            ],
            standardOutput: .pipe)
        defer { if process.isRunning { process.terminate() } }

        // The first stdout lines name the bound addresses, one per listener: the game ports in
        // this order, the admin endpoints' as soon as they run.
        let printed = await readLines(4, from: try #require(process.standardOutput))
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        let ports = lines.filter { !$0.hasPrefix("admin listening on 127.0.0.1:") }
        #expect(lines.count - ports.count == 1)
        #expect(ports.count == 3)
        #expect(ports.first?.hasPrefix("catrace listening on 127.0.0.1:") == true)
        #expect(ports.dropFirst().first?.hasPrefix("native listening on 127.0.0.1:") == true)
        #expect(ports.last?.hasPrefix("web listening on 127.0.0.1:") == true)
        let port = try #require(Int(ports.first?.split(separator: ":").last ?? ""))
        let nativePort = try #require(Int(ports.dropFirst().first?.split(separator: ":").last ?? ""))
        let webPort = try #require(Int(ports.last?.split(separator: ":").last ?? ""))
        #expect(port > 0 && nativePort > 0 && webPort > 0)
        // The token key was created in the data directory, readable by the owner only.
        let key = data.appendingPathComponent("token-signing.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = try await TestCatRaceClient.connect(port: port, group: group, id: "G:Proc")
        #expect(try await client.next() == .notInMatch)
        let (native, _) = try await TestNativeConnection.login(port: nativePort, group: group, device: "proc-device")

        process.send(signal)
        try await client.waitUntilClosed()
        #expect(try await native.closingError().code == .shuttingDown)
        await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        try await group.shutdownGracefully()
    }

    /// The key-value limits as flags, with both stores: each limit lets its last byte or key
    /// through and refuses the next with its own error.
    @Test(arguments: ["sqlite", "memory"])
    func keyValueLimitsAreTheFlags(store: String) async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-kv-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let serve = try await ServeProcess.start(
            data: data, arguments: ["--store", store, "--max-key-bytes", "8", "--max-value-bytes", "100", "--max-keys-per-player", "2"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (player, _) = try await TestNativeConnection.login(port: serve.nativePort, group: group, device: "kv-device")
        let write = { (key: String, count: Int) in
            try await player.ask(.writeValue(key: key, value: ByteBuffer(repeating: 7, count: count)))
        }
        #expect(try await write("12345678", 100) == .success(.done))
        #expect(try await write("123456789", 1).failure?.code == .invalidKey)
        let tooLarge = try await write("second", 101).failure
        #expect(tooLarge?.code == .valueTooLarge)
        #expect(tooLarge?.message == "the value is 101 bytes; the limit is 100", "the client learns the limit")
        #expect(try await write("second", 0) == .success(.done))
        #expect(try await write("third", 1).failure?.code == .tooManyKeys)
        #expect(try await write("12345678", 1) == .success(.done), "a held key is rewritten at the limit")
        #expect(try await player.ask(.readValue(key: "12345678")) == .success(.value(key: "12345678", value: ByteBuffer(bytes: [7]))))
        await player.close()
        await serve.stop(with: SIGTERM)
        #expect(serve.process.terminationStatus == 0)
        try await group.shutdownGracefully()
    }

    /// The device flags reach the server: a code lives `--link-code-lifetime`, and a player at
    /// `--max-devices-per-player` gets no code.
    @Test func deviceLimitsAreTheFlags() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-devices-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let serve = try await ServeProcess.start(data: data, arguments: ["--max-devices-per-player", "2", "--link-code-lifetime", "30"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (phone, _) = try await TestNativeConnection.login(port: serve.nativePort, group: group, device: "flag-phone")
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        guard case .success(.linkCode(let code, let expiresAt)) = try await phone.ask(.createLinkCode) else {
            Issue.record("no LINK_CODE")
            return
        }
        #expect((before + 29_000...before + 31_000).contains(expiresAt), "30 s on")
        let tablet = try await TestNativeConnection.handshake(port: serve.nativePort, group: group)
        try await tablet.send(.authenticate(.link(code: code, deviceID: "flag-tablet", secret: "")))
        guard case .authenticated = try await tablet.next() else {
            Issue.record("the tablet was not linked")
            return
        }
        #expect(try await tablet.ask(.createLinkCode).failure?.code == .tooManyDevices)
        await tablet.close()
        await phone.close()
        await serve.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }

    /// Out of descriptors a server cannot even refuse a connection: it says so at start.
    @Test func anOpenFileLimitBelowTheConnectionLimitIsWarnedOfAtStart() async throws {
        // 2 x 100 connections and the server's own 64 need 264; 2 x 96 and 64 fit in 256.
        let short = try await self.serveLog(openFileLimit: 256, maxConnections: 100)
        #expect(short.contains("the open-file limit is below what --max-connections allows on both ports: past about 192 connections"))
        #expect(short.contains("limit=256") && short.contains("wanted=264"))
        for fitting in [96, nil] {
            // Without the flag, the default is what fits: 96 under this limit.
            let enough = try await self.serveLog(openFileLimit: 256, maxConnections: fitting)
            #expect(enough.contains("stopped"), "the log was read: \(enough)")
            #expect(!enough.contains("open-file limit"))
        }
    }

    /// What `serve` logs (at info) from its start to its stop, under `ulimit -n openFileLimit`.
    private func serveLog(openFileLimit: Int, maxConnections: Int?) async throws -> String {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-nofile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let process = try ChildProcess(
            "/bin/sh",
            [
                "-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", MatchHostBinary.url.path, "serve", "--host", "127.0.0.1",
                "--catrace-port", "0", "--port", "0", "--no-admin", "--web-port", "0", "--data", data.path, "--log-level", "info",
            ] + (maxConnections.map { ["--max-connections", "\($0)"] } ?? []),
            standardOutput: .pipe, standardError: .pipe)
        defer { if process.isRunning { process.terminate() } }
        let log = OutputReader(try #require(process.standardError))
        #expect(String(decoding: await readLines(2, from: try #require(process.standardOutput)), as: UTF8.self).contains("native listening on"))
        process.terminate()
        return await log.textWhenEnded
    }

    @Test func aCorruptTokenKeyFileStopsTheServerWithAClearError() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-badkey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let key = data.appendingPathComponent("token-signing.key")
        try Data("not a key\n".utf8).write(to: key)

        let run = try await runMatchHostToExit(["serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0", "--data", data.path])
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

        let run = try await runMatchHostToExit(["serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0", "--data", data.path])
        #expect(run.status == 2)
        #expect(run.stderr == "matchhost: cannot use the data directory \(data.path): \(parent.path) is a file, not a directory\n")
    }

    @Test(arguments: [
        (["--disks-min-players", "1"], "--disks-min-players must be 2-16"),
        (["--disks-tick-rate", "0"], "--disks-tick-rate must be 1-120"),
        (["--turn-time", "0.5"], "--turn-time must be 1 to 86400 seconds"),
        (["--max-alias-length", "64"], "--max-alias-length must be 1-63"),
        (["--matchmaker-slice", "1500"], "--matchmaker-slice must be 0.0 to 1000.0 milliseconds"),
        (["--max-frame", "16777217"], "--max-frame must be 1 to 16777216 bytes"),
        (["--heartbeat", "20"], "--heartbeat must not be longer than --idle-timeout"),
        (["--slow-consumer-grace", "3601"], "--slow-consumer-grace must be 0.0 to 3600.0 seconds"),
        (["--max-connections-per-address", "0"], "--max-connections-per-address must be at least 1"),
        (["--max-store-backlog", "0"], "--max-store-backlog must be at least 1"),
        (["--max-key-bytes", "256"], "--max-key-bytes must be 1-255"),
        (["--max-connections", "9223372036854775807"], "--max-connections must be 1-1000000"),
        (["--max-new-matches-per-minute", "0"], "--max-new-matches-per-minute must be at least 1"),
        (["--max-keys-per-player", "0"], "--max-keys-per-player must be 1-1000000"),
        // 65,536 - 29 - 128: the largest value a WRITE_VALUE under the longest key carries.
        (["--max-value-bytes", "65380"], "--max-value-bytes must be 0 to 65379"),
        (["--max-frame", "1024", "--max-key-bytes", "10", "--max-value-bytes", "986"], "--max-value-bytes must be 0 to 985"),
        (["--max-inbound-rate", "0"], "--max-inbound-rate must be at least 1"),
        (["--max-failed-joins-per-minute", "0"], "--max-failed-joins-per-minute must be at least 1"),
        (["--max-sessions", "0"], "--max-sessions must be 1-2000000"),
        (["--max-devices-per-player", "256"], "--max-devices-per-player must be 1-255"),
        (["--max-devices-per-player", "0"], "--max-devices-per-player must be 1-255"),
        (["--link-code-lifetime", "5"], "--link-code-lifetime must be 10.0 to 86400.0 seconds"),
        (["--admin-port", "65536"], "--admin-port must be 0-65535"),
        (["--admin-host", ""], "--admin-host must name an address"),
        (["--admin-idle-timeout", "0"], "--admin-idle-timeout must be 0.1 to 3600.0 seconds"),
        // 128 + 16,384: the longest key and the largest value by default.
        (["--max-value-bytes-per-minute", "16511"], "--max-value-bytes-per-minute must be at least 16512"),
    ])
    func gameRuleFlagsOutOfRangeAreRefused(flags: [String], message: String) async throws {
        let run = try await runMatchHostToExit(["serve", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0"] + flags)
        #expect(run.status != 0)
        #expect(run.stderr.contains(message))
    }
}

