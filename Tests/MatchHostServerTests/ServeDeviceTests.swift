import Foundation
import MatchHostAdmin
import MatchHostProcessTesting
import MatchHostWire
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost link-code` and `unlink-device` against a running `matchhost serve`, and the admin
/// endpoints they call, as an operator gives a player its account back.
@Suite struct ServeDeviceTests {
    /// A new connection, signed in with `credentials`; throws if they are refused.
    private static func signIn(
        _ credentials: NativeCredentials, port: Int, group: MultiThreadedEventLoopGroup
    ) async throws -> (TestNativeConnection, NativeAuthenticated) {
        let connection = try await TestNativeConnection.handshake(port: port, group: group)
        try await connection.send(.authenticate(credentials))
        let answer = try await connection.next()
        guard case .authenticated(let authenticated) = answer else { throw TestClientError.unexpected("\(answer) answered AUTHENTICATE") }
        return (connection, authenticated)
    }

    @Test func theOperatorLinksTheOwnersNewDeviceAndUnlinksTheStolenOne() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-devices-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        defer { server.stopBlocking(with: SIGKILL) }
        let admin = try #require(server.adminPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (phone, alice) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "stolen-phone")
        let key = try String(contentsOfFile: data.appendingPathComponent("admin.key").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let operatorFlags = ["--data", data.path, "--admin-port", "\(admin)"]

        // Without the key, neither endpoint acts; a body that names no device is refused.
        #expect(try await httpRequest("POST", "/api/players/\(alice.playerID)/link-code", port: admin, group: group).status == 401)
        let anonymous = try await httpRequest(
            "POST", "/api/players/\(alice.playerID)/devices/unlink", port: admin, group: group, body: "{\"device\":\"stolen-phone\"}")
        #expect(anonymous.status == 401)
        for body in ["", "{\"device\":7}", "{\"device\":\"\"}"] {
            let refused = try await httpRequest(
                "POST", "/api/players/\(alice.playerID)/devices/unlink", port: admin, group: group,
                headers: ["Authorization: Bearer \(key)"], body: body)
            #expect(refused.status == 400, "body \(body)")
        }
        let tooBig = try await httpRequest(
            "POST", "/api/players/\(alice.playerID)/devices/unlink", port: admin, group: group, headers: ["Authorization: Bearer \(key)"],
            body: String(repeating: " ", count: AdminAction.maximumBodyBytes + 1))
        #expect(tooBig.status == 413)
        #expect(try await phone.drain() == [], "still signed in")

        // The phone is the only device: it cannot be removed before another is linked.
        let last = try await runMatchHostToExit(["unlink-device", alice.playerID, "stolen-phone"] + operatorFlags)
        #expect(last.status == 1)
        #expect(last.stderr.contains("the server refused: it is the only device of player \(alice.playerID)"))
        let nowhere = try await runMatchHostToExit(["unlink-device", alice.playerID, "nowhere"] + operatorFlags)
        #expect(nowhere.status == 1)
        #expect(nowhere.stderr == "matchhost: the server refused: player \(alice.playerID) has no device nowhere\n")

        // By the start of the player's id, as `matchhost player` takes it.
        let made = try await runMatchHostToExit(["link-code", String(alice.playerID.prefix(10))] + operatorFlags)
        #expect(made.status == 0, "\(made.stderr)")
        let code = try #require(made.stdout.firstMatch(of: /^link code for (\S+): ([A-Z0-9]{8}), until .* UTC\n$/))
        #expect(String(code.output.1) == alice.playerID)
        let (_, linked) = try await Self.signIn(.link(code: String(code.output.2), deviceID: "new-tablet", secret: ""), port: server.nativePort, group: group)
        #expect(linked.playerID == alice.playerID)
        #expect(try await phone.closingError().code == .sessionReplaced)

        // The thief signs in again on the phone; the operator removes it.
        let (thief, _) = try await Self.signIn(.token(alice.sessionToken), port: server.nativePort, group: group)
        let unlinked = try await runMatchHostToExit(["unlink-device", alice.playerID, "stolen-phone"] + operatorFlags)
        #expect(unlinked.status == 0, "\(unlinked.stderr)")
        #expect(unlinked.stdout == "unlinked stolen-phone from \(alice.playerID): its tokens are revoked and its session ended\n")
        #expect(try await thief.closingError().code == .sessionRevoked)
        let again = try await TestNativeConnection.handshake(port: server.nativePort, group: group)
        try await again.send(.authenticate(.device(id: "stolen-phone", secret: alice.deviceSecret)))
        #expect(try await again.closingError().code == .deviceUnlinked)
        let shown = try await runMatchHostToExit(["player", alice.playerID, "--data", data.path])
        #expect(shown.stdout.contains("new-tablet"))
        #expect(!shown.stdout.contains("stolen-phone"))
        let (owner, back) = try await Self.signIn(.device(id: "new-tablet", secret: linked.deviceSecret), port: server.nativePort, group: group)
        #expect(back.playerID == alice.playerID)

        // Against a thief, in one step: every device goes, and the owner gets a code.
        let recovered = try await runMatchHostToExit(["recover", alice.playerID] + operatorFlags)
        #expect(recovered.status == 0, "\(recovered.stderr)")
        let lines = recovered.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "unlinked from \(alice.playerID): new-tablet; every token revoked")
        let ownerCode = try #require(lines.last?.firstMatch(of: /^link code for the owner's device: ([A-Z0-9]{8}), until .* UTC$/))
        #expect(try await owner.closingError().code == .sessionRevoked)
        let (ownerPhone, recoveredSession) = try await Self.signIn(
            .link(code: String(ownerCode.output.1), deviceID: "owner-phone", secret: ""), port: server.nativePort, group: group)
        #expect(recoveredSession.playerID == alice.playerID)
        let anonymousRecovery = try await httpRequest("POST", "/api/players/\(alice.playerID)/recover", port: admin, group: group)
        #expect(anonymousRecovery.status == 401)
        #expect(try await ownerPhone.drain() == [], "nothing recovered without the key")
        let nobody = try await httpRequest(
            "POST", "/api/players/nobody/recover", port: admin, group: group, headers: ["Authorization: Bearer \(key)"])
        #expect(nobody.status == 404)
        let nobodysCode = try await httpRequest(
            "POST", "/api/players/nobody/link-code", port: admin, group: group, headers: ["Authorization: Bearer \(key)"])
        #expect(nobodysCode.status == 404)

        let unknown = try await runMatchHostToExit(["link-code", "nobody-at-all"] + operatorFlags)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no player with id"))
        try await group.shutdownGracefully()
    }

    /// The operator's recovery code, mailed to the owner, still links once the server was
    /// killed and started again on the same data: it was stored before it was printed.
    @Test func aRecoveryCodeLinksAfterTheServerIsKilledAndStartedAgain() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-devices-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (phone, alice) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "stolen-phone")
        let admin = try #require(server.adminPort)
        let recovered = try await runMatchHostToExit(["recover", alice.playerID, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        let code = try #require(recovered.stdout.firstMatch(of: /link code for the owner's device: ([A-Z0-9]{8}), until .* UTC\n$/))
        #expect(try await phone.closingError().code == .sessionRevoked)
        server.stopBlocking(with: SIGKILL)

        let again = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        defer { again.stopBlocking(with: SIGKILL) }
        let (_, linked) = try await Self.signIn(
            .link(code: String(code.output.1).lowercased(), deviceID: "owner-phone", secret: ""), port: again.nativePort, group: group)
        #expect(linked.playerID == alice.playerID)
        let thief = try await TestNativeConnection.handshake(port: again.nativePort, group: group)
        try await thief.send(.authenticate(.link(code: String(code.output.1), deviceID: "thief", secret: "")))
        #expect(try await thief.closingError().code == .linkRefused, "a code links one device")
        try await group.shutdownGracefully()
    }
}
