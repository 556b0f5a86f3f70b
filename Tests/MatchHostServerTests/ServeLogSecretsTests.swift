import Foundation
import MatchHostProcessTesting
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What `matchhost serve` logs, at its most verbose, holds none of the secrets that would let a
/// reader sign tokens, take a player's session or act as the operator.
@Suite struct ServeLogSecretsTests {
    @Test func aServerLoggingEverythingLogsNoKeyTokenOrSecret() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-log-secrets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--log-level", "trace", "--idle-timeout", "300"], capturingLog: true)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (player, issued) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "logged-device")
        #expect(try await player.ask(.setAlias("Logged")) == .success(.done))
        // Signing in again with the token, and a link code, put the other secrets through the server.
        let again = try await TestNativeConnection.handshake(port: server.nativePort, group: group)
        try await again.send(.authenticate(.token(issued.sessionToken)))
        guard case .authenticated = try await again.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
        guard case .success(.linkCode(let code, _)) = try await again.ask(.createLinkCode) else { throw TestClientError.unexpected("no code") }
        // And the admin key, as the operator's bearer token, through an admin action, and
        // one with a wrong key.
        let admin = try #require(server.adminPort)
        let renamed = try await runMatchHostToExit(["rename", issued.playerID, "Renamed", "--data", data.path, "--admin-port", "\(admin)"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        let refused = try await httpRequest(
            "PUT", "/api/players/\(issued.playerID)/alias", port: admin, group: group,
            headers: ["Authorization: Bearer wrong-key-0123456789"], body: "{\"alias\":\"Hacked\"}")
        #expect(refused.status == 401)
        await again.close()
        await player.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()

        let log = await server.loggedLines().joined(separator: "\n")
        #expect(log.contains("Starting service lifecycle"), "the lifecycle's own debug lines, which print the services, are in it")
        let tokenKey = try SecretKeyFile.tokenSigning(directory: data.path).read()
        let adminKey = try SecretKeyFile.admin(directory: data.path).read()
        let secrets: [(String, String)] = [
            ("the token key, as bytes", tokenKey.prefix(4).map(String.init).joined(separator: ", ")),
            ("the token key, in hex", tokenKey.prefix(8).map { String(format: "%02x", $0) }.joined()),
            ("the admin key, in hex", adminKey.prefix(8).map { String(format: "%02x", $0) }.joined()),
            ("the admin key, as bytes", adminKey.prefix(4).map(String.init).joined(separator: ", ")),
            ("the device secret", String(issued.deviceSecret.prefix(16))),
            ("the session token", String(issued.sessionToken.suffix(16))),
            ("the resume token", String(issued.resumeToken.prefix(16))),
            ("the link code", code),
            ("a wrong admin key", "wrong-key-0123456789"),
        ]
        for (name, secret) in secrets {
            #expect(!log.contains(secret), "\(name) is in the log")
        }
    }
}
