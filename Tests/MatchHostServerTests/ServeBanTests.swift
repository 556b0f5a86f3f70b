import Foundation
import MatchHostAdmin
import MatchHostProcessTesting
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost ban` and `unban` against a running `matchhost serve`, and the admin endpoint
/// they call, as an operator uses them.
@Suite struct ServeBanTests {
    @Test func theOperatorBansAndUnbansAPlayerOfTheRunningServer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-ban-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        defer { server.stopBlocking(with: SIGKILL) }
        let admin = try #require(server.adminPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (cheater, issued) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "cheater")
        let path = "/api/players/\(issued.playerID)/ban"

        // The key is the server's own, readable only by its user; without it nothing happens.
        let keyFile = data.appendingPathComponent("admin.key").path
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0)
        let key = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let anonymous = try await httpRequest("POST", path, port: admin, group: group)
        #expect(anonymous.status == 401)
        #expect(anonymous.headers["www-authenticate"] == "Bearer")
        let wrongKey = try await httpRequest(
            "POST", path, port: admin, group: group, headers: ["Authorization: Bearer " + String(repeating: "0", count: 64)])
        #expect(wrongKey.status == 401)
        let badBody = try await httpRequest(
            "POST", path, port: admin, group: group, headers: ["Authorization: Bearer \(key)"], body: "{\"reason\": 7}")
        #expect(badBody.status == 400)
        let tooLong = try await httpRequest(
            "POST", path, port: admin, group: group, headers: ["Authorization: Bearer \(key)"],
            body: "{\"reason\":\"\(String(repeating: "x", count: PlayerBanEndpoints.maximumReasonBytes + 1))\"}")
        #expect(tooLong.status == 400)
        let tooBig = try await httpRequest(
            "POST", path, port: admin, group: group, headers: ["Authorization: Bearer \(key)"],
            body: String(repeating: " ", count: AdminAction.maximumBodyBytes + 1))
        #expect(tooBig.status == 413)
        let nobody = try await httpRequest("DELETE", "/api/players/nobody/ban", port: admin, group: group, headers: ["Authorization: Bearer \(key)"])
        #expect(nobody.status == 404)
        // Still playing after every refusal.
        try await cheater.sendReliable(.request(id: 1, .listMatches(NativeLobbyQuery(mode: "relay"))))
        #expect(try await cheater.response(to: 1).failure == nil)

        // By the start of its id, as `matchhost player` takes it.
        let banned = try await runMatchHostToExit([
            "ban", String(issued.playerID.prefix(10)), "--reason", "wall hacks", "--data", data.path, "--admin-port", "\(admin)",
        ])
        #expect(banned.status == 0, "\(banned.stderr)")
        #expect(banned.stdout == "banned \(issued.playerID): wall hacks\n")
        #expect(try await cheater.closingError() == NativeError(.playerBanned, "this player is banned: wall hacks"))
        let again = try await TestNativeConnection.handshake(port: server.nativePort, group: group)
        try await again.send(.authenticate(.token(issued.sessionToken)))
        #expect(try await again.closingError().code == .playerBanned)
        let shown = try await runMatchHostToExit(["player", issued.playerID, "--data", data.path])
        #expect(shown.stdout.contains("banned     since "))
        #expect(shown.stdout.contains(": wall hacks\n"))

        let unbanned = try await runMatchHostToExit(["unban", issued.playerID, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(unbanned.status == 0, "\(unbanned.stderr)")
        #expect(unbanned.stdout == "lifted the ban of \(issued.playerID)\n")
        let twice = try await runMatchHostToExit(["unban", issued.playerID, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(twice.status == 0, "\(twice.stderr)")
        #expect(twice.stdout == "\(issued.playerID) was not banned: nothing to lift\n")
        let back = try await TestNativeConnection.handshake(port: server.nativePort, group: group)
        try await back.send(.authenticate(.device(id: "cheater", secret: issued.deviceSecret)))
        guard case .authenticated(let authenticated) = try await back.next() else {
            Issue.record("no AUTHENTICATED after unban")
            return
        }
        #expect(authenticated.playerID == issued.playerID)

        // A timed ban: the server takes 1 s to ten years, the command a number and a unit.
        for seconds in ["0", "-5", "\(PlayerBanEndpoints.maximumBanSeconds + 1)", "1.5", "\"60\""] {
            let refused = try await httpRequest(
                "POST", path, port: admin, group: group, headers: ["Authorization: Bearer \(key)"], body: "{\"seconds\":\(seconds)}")
            #expect(refused.status == 400, "seconds \(seconds)")
        }
        for duration in ["3x", "0d", "2", "3651d"] {
            let refused = try await runMatchHostToExit(["ban", issued.playerID, "--for", duration, "--data", data.path, "--admin-port", "\(admin)"])
            #expect(refused.status == 64, "--for \(duration)")
        }
        let timed = try await runMatchHostToExit([
            "ban", issued.playerID, "--for", "2h", "--reason", "spam", "--data", data.path, "--admin-port", "\(admin)",
        ])
        #expect(timed.status == 0, "\(timed.stderr)")
        #expect(timed.stdout.hasPrefix("banned \(issued.playerID) until "))
        #expect(timed.stdout.hasSuffix(" UTC: spam\n"))
        #expect(try await back.closingError().message.hasPrefix("this player is banned until "))
        let listed = try await runMatchHostToExit(["bans", "--data", data.path])
        #expect(listed.status == 0, "\(listed.stderr)")
        let line = listed.stdout.split(separator: "\n")
        #expect(line.count == 1)
        #expect(line.first?.hasPrefix("\(issued.playerID)  \(issued.playerID.prefix(8))  since ") == true)
        #expect(line.first?.hasSuffix(": spam") == true)
        // Its end is two hours after its start, rounded up to the second.
        let times = try #require(line.first).matches(of: /(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC/).map { String($0.output.1) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let dates = times.compactMap(formatter.date(from:))
        #expect(dates.count == 2)
        if dates.count == 2 { #expect([7200, 7201].contains(dates[1].timeIntervalSince(dates[0]))) }
        let shownTimed = try await runMatchHostToExit(["player", issued.playerID, "--data", data.path])
        #expect(shownTimed.stdout.contains(", until "))
        // Over HTTP, with the key only: the ban in force, then every ban made.
        #expect(try await httpRequest("GET", "/api/bans", port: admin, group: group).status == 401)
        let inForce = try await Self.bans("/api/bans", port: admin, key: key, group: group)
        #expect(inForce.map(\.player) == [issued.playerID])
        #expect(inForce.first?.inForce == true && inForce.first?.reason == "spam" && inForce.first?.until != nil)
        let everyBan = try await Self.bans("/api/bans?all=1&player=\(issued.playerID)", port: admin, key: key, group: group)
        #expect(everyBan.map(\.reason) == ["spam", "wall hacks"])
        #expect(everyBan.last?.lifted != nil && everyBan.last?.inForce == false)
        #expect(try await Self.bans("/api/bans?all=1&limit=1", port: admin, key: key, group: group).count == 1)
        let badLimit = try await httpRequest("GET", "/api/bans?limit=0", port: admin, group: group, headers: ["Authorization: Bearer \(key)"])
        #expect(badLimit.status == 400)
        #expect(try await runMatchHostToExit(["unban", issued.playerID, "--data", data.path, "--admin-port", "\(admin)"]).status == 0)
        #expect(try await runMatchHostToExit(["bans", "--data", data.path]).stdout == "no player is banned\n")
        #expect(try await Self.bans("/api/bans", port: admin, key: key, group: group).isEmpty)
        // Both lifted bans stay in the record, newest first.
        let record = try await runMatchHostToExit(["bans", "--all", "--data", data.path])
        let recorded = record.stdout.split(separator: "\n")
        #expect(recorded.count == 2, "\(record.stdout)")
        #expect(recorded.first?.contains(", lifted ") == true && recorded.first?.hasSuffix(" UTC: spam") == true, "\(record.stdout)")
        #expect(recorded.last?.contains(", lifted ") == true && recorded.last?.hasSuffix(" UTC: wall hacks") == true, "\(record.stdout)")
        let shownLifted = try await runMatchHostToExit(["player", issued.playerID, "--data", data.path]).stdout
        #expect(shownLifted.components(separatedBy: "\nban lifted ").count == 3, "\(shownLifted)")
        #expect(!shownLifted.contains("banned     since"), "\(shownLifted)")

        let unknown = try await runMatchHostToExit(["ban", "nobody-at-all", "--data", data.path, "--admin-port", "\(admin)"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no player with id"))
        // A Cat Race tutorial client has a stored player, but nothing a ban could refuse.
        let racer = try await TestCatRaceClient.connect(port: server.catRacePort, group: group, id: "G:Griefer")
        #expect(try await racer.next() == .notInMatch)
        let tutorial = try await runMatchHostToExit(["ban", "G:Griefer", "--data", data.path, "--admin-port", "\(admin)"])
        #expect(tutorial.status == 1)
        #expect(tutorial.stderr == "matchhost: G:Griefer is a Cat Race tutorial playerId: that port has no authentication, so a ban cannot keep its client out\n")
        await racer.close()
        try await group.shutdownGracefully()
    }

    /// A server on `--store memory` writes no database for the commands to find the player in:
    /// they take its whole id, and the server finds it in its own store.
    @Test func aServerOnTheMemoryStoreBansAPlayerNamedByItsWholeId() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-ban-memory-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--store", "memory", "--idle-timeout", "300"])
        defer { server.stopBlocking(with: SIGKILL) }
        let admin = try #require(server.adminPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (griefer, issued) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "griefer")

        let byPrefix = try await runMatchHostToExit(["ban", String(issued.playerID.prefix(8)), "--data", data.path, "--admin-port", "\(admin)"])
        #expect(byPrefix.status == 1)
        #expect(byPrefix.stderr.hasSuffix("name the player by its whole id, 32 hex digits\n"), "\(byPrefix.stderr)")
        let unknown = try await runMatchHostToExit(["ban", String(repeating: "0", count: 32), "--data", data.path, "--admin-port", "\(admin)"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("matchhost: the server refused: no player "), "\(unknown.stderr)")

        let banned = try await runMatchHostToExit(["ban", issued.playerID, "--reason", "griefing", "--data", data.path, "--admin-port", "\(admin)"])
        #expect(banned.status == 0, "\(banned.stderr)")
        #expect(banned.stdout == "banned \(issued.playerID): griefing\n")
        #expect(try await griefer.closingError() == NativeError(.playerBanned, "this player is banned: griefing"))
        let unbanned = try await runMatchHostToExit(["unban", issued.playerID, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(unbanned.status == 0, "\(unbanned.stderr)")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("matchhost.sqlite").path))
        // The record is the memory store's, read over HTTP.
        let key = try String(contentsOfFile: data.appendingPathComponent("admin.key").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let record = try await Self.bans("/api/bans?all=1", port: admin, key: key, group: group)
        #expect(record.count == 1 && record.first?.reason == "griefing" && record.first?.lifted != nil, "\(record)")
        try await group.shutdownGracefully()
    }

    /// `GET path` of the admin endpoints with the key: the bans listed.
    private static func bans(_ path: String, port: Int, key: String, group: any EventLoopGroup) async throws -> [PlayerBanEndpoints.ListedBan] {
        let answer = try await httpRequest("GET", path, port: port, group: group, headers: ["Authorization: Bearer \(key)"])
        #expect(answer.status == 200, "\(path): \(answer.body)")
        return try JSONDecoder().decode(PlayerBanEndpoints.BanList.self, from: Data(answer.body.utf8)).bans
    }

    /// `serve --admin-tls`: the admin endpoints speak HTTPS with the server's certificate, the
    /// admin commands reach them with `--admin-tls-ca` (or `--admin-tls`), and are told why not
    /// without it, or when they do not trust the certificate.
    @Test func theAdminCommandsSpeakHTTPSToAServerWithAdminTLS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-admin-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data")
        let certificate = try await TestCertificate.make(in: directory.appendingPathComponent("certificate"))
        let server = try await ServeProcess.start(
            data: data,
            arguments: [
                "--tls-certificate", certificate.certificatePath, "--tls-key", certificate.keyPath, "--admin-tls", "--idle-timeout", "300",
                "--log-level", "notice",
            ], capturingLog: true)
        defer { server.stopBlocking(with: SIGKILL) }
        let admin = "\(try #require(server.adminPort))"
        let tls = try TLSPortTests.trusting(certificate)
        let (cheater, issued) = try await TestNativeConnection.login(
            port: server.nativePort, group: MultiThreadedEventLoopGroup.singleton, device: "tls-cheater", tls: tls)

        let plain = try await runMatchHostToExit(["ban", issued.playerID, "--data", data.path, "--admin-port", admin])
        #expect(plain.status == 1)
        #expect(plain.stderr.contains("the admin endpoints speak HTTPS only: use https://"), "\(plain.stderr)")
        let untrusted = try await runMatchHostToExit(["ban", issued.playerID, "--data", data.path, "--admin-port", admin, "--admin-tls"])
        #expect(untrusted.status == 2)
        #expect(untrusted.stderr.contains("TLS with the admin endpoints at 127.0.0.1:\(admin) failed"), "\(untrusted.stderr)")
        let missing = try await runMatchHostToExit([
            "ban", issued.playerID, "--data", data.path, "--admin-port", admin, "--admin-tls-ca", directory.appendingPathComponent("none.pem").path,
        ])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read the trusted certificates"), "\(missing.stderr)")
        try await cheater.sendReliable(.request(id: 1, .listMatches(NativeLobbyQuery(mode: "relay"))))
        #expect(try await cheater.response(to: 1).failure == nil, "not banned by any of those")

        let banned = try await runMatchHostToExit([
            "ban", issued.playerID, "--reason", "over https", "--data", data.path, "--admin-port", admin, "--admin-tls-ca", certificate.certificatePath,
            "--admin-tls-server-name", "localhost",
        ])
        #expect(banned.status == 0, "\(banned.stderr)")
        #expect(banned.stdout == "banned \(issued.playerID): over https\n")
        #expect(try await cheater.closingError().code == .playerBanned)

        await server.stop(with: SIGTERM)
        let log = await server.loggedLines()
        #expect(log.contains { $0.contains("the native, web and admin ports speak TLS") && $0.contains("CN=localhost") }, "\(log)")
        #expect(!log.contains { $0.contains("speak plain HTTP") }, "\(log)")
    }

    /// Admin endpoints open to the network in plain HTTP are warned about at start; `--admin-tls`
    /// needs a certificate.
    @Test func adminEndpointsOnTheNetworkWithoutTLSAreWarnedAbout() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-admin-open-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--admin-host", "0.0.0.0", "--log-level", "warning"], capturingLog: true)
        await server.stop(with: SIGTERM)
        #expect(
            await server.loggedLines().contains { $0.contains("the admin endpoints on 0.0.0.0 speak plain HTTP: their key crosses the network readable") })
        let local = try await ServeProcess.start(data: data, arguments: ["--log-level", "warning"], capturingLog: true)
        await local.stop(with: SIGTERM)
        #expect(await local.loggedLines().allSatisfy { !$0.contains("speak plain HTTP") })

        let noCertificate = try await runMatchHostToExit(["serve", "--data", data.path, "--admin-tls"])
        #expect(noCertificate.status != 0)
        #expect(noCertificate.stderr.contains("--admin-tls serves --tls-certificate's certificate"), "\(noCertificate.stderr)")
    }

    @Test func withoutARunningServerTheCommandSaysSo() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-ban-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        let (connection, issued) = try await TestNativeConnection.login(
            port: server.nativePort, group: MultiThreadedEventLoopGroup.singleton, device: "lonely")
        await connection.close()
        let admin = try #require(server.adminPort)
        await server.stop(with: SIGTERM)

        let refused = try await runMatchHostToExit(["ban", issued.playerID, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("no answer from the admin endpoints at 127.0.0.1:\(admin)"))
        let noKey = try await runMatchHostToExit(["ban", issued.playerID, "--data", data.appendingPathComponent("elsewhere").path])
        #expect(noKey.status == 2)
        #expect(noKey.stderr.contains("admin.key cannot be read"))
    }
}
