import Foundation
import MatchHostProcessTesting
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// The native and web ports with ``ServerConfiguration/tls``: real certificates made by
/// `openssl`, real sockets, the server's bytes as they arrive.
@Suite struct TLSPortTests {
    private static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-tls-port-\(UUID().uuidString)")
    }

    /// A client context trusting `certificate` alone.
    private static func trusting(_ certificate: TestCertificate) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate.certificatePath))
        return try NIOSSLContext(configuration: configuration)
    }

    private static func startServer(_ certificate: TestCertificate) async throws -> (RunningNativeServer, web: Int) {
        let tls = try ServerTLS(files: TLSFiles(certificateChain: certificate.certificatePath, privateKey: certificate.keyPath))
        let server = try await RunningNativeServer.start {
            $0.tls = tls
            $0.webPort = 0
        }
        return (server, try #require(server.listener.webAddress?.port))
    }

    @Test func theNativePortSpeaksTLSAndTellsAPlaintextClientSo() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try TestCertificate.make(in: directory)
        let (server, _) = try await Self.startServer(certificate)
        let tls = try Self.trusting(certificate)

        let (player, authenticated) = try await TestNativeConnection.login(port: server.port, group: server.group, device: "tls-device", tls: tls)
        #expect(authenticated.playerID.count == 32)
        let created = try await player.response(to: try await player.request(.createMatch(mode: "relay", maxPlayers: 2, label: "tls")))
        #expect(created.joined?.label == "tls")

        // A plaintext HELLO: the ERROR frame, in plaintext, byte for byte, then the close.
        let plaintext = try await TestNativeConnection.connect(port: server.port, group: server.group)
        try await plaintext.send(.hello(version: 1, gameID: "matchhost"))
        let refusal = try await plaintext.closingError()
        #expect(refusal.code == .tlsRequired)
        #expect(refusal.message == "this port speaks TLS only: connect with TLS (the Swift client: Configuration.tls)")
        // The TLS player is untouched.
        let again = try await player.response(to: try await player.request(.createMatch(mode: "relay", maxPlayers: 2, label: "still")))
        #expect(again.joined?.label == "still")
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    @Test func theWebPortServesHTTPSAndWSSAndTellsPlaintextHTTPSo() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try TestCertificate.make(in: directory)
        let (server, web) = try await Self.startServer(certificate)
        let tls = try Self.trusting(certificate)

        let page = try await httpGet("/", port: web, group: server.group, tls: tls)
        #expect(page.status == 200)
        #expect(page.body.contains("<html"))
        let plain = try await httpGet("/", port: web, group: server.group)
        #expect(plain.status == 400)
        #expect(plain.body == "this port speaks HTTPS only: open the page with https:// (and the WebSocket with wss://)\n")

        // The native protocol over wss://, meeting a player on the TLS native port.
        let browser = try await TestNativeConnection.connectWebSocket(port: web, group: server.group, tls: tls)
        try await browser.send(.hello(version: 1, gameID: "matchhost"))
        guard case .welcome = try await browser.next() else { throw TestClientError.unexpected("no WELCOME") }
        try await browser.send(.authenticate(.device(id: "wss-device", secret: "")))
        guard case .authenticated(let browserID) = try await browser.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
        let (player, _) = try await TestNativeConnection.login(port: server.port, group: server.group, device: "tcp-device", tls: tls)
        let created = try #require(try await browser.response(to: try await browser.request(.createMatch(mode: "relay", maxPlayers: 2, label: "wss"))).joined)
        #expect(try await player.response(to: try await player.request(.joinMatch(created.matchID))).joined?.players.count == 2)
        try await browser.sendReliable(.sendData(matchID: created.matchID, targets: [], payload: ByteBuffer(string: "over wss")))
        #expect(
            try await player.nextMessage() == .matchData(matchID: created.matchID, sender: browserID.playerID, payload: ByteBuffer(string: "over wss")))
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    /// Each file the server cannot use is named, with what is wrong with it.
    @Test func filesThatCannotBeServedAreNamedWithTheirReason() throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try TestCertificate.make(in: directory)
        let other = try TestCertificate.make(in: directory, fileStem: "other")
        let garbage = directory.appendingPathComponent("garbage.pem").path
        try Data("not PEM\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let missing = directory.appendingPathComponent("missing.pem").path

        func reason(_ chain: String, _ key: String) -> TLSFilesError? {
            do {
                _ = try ServerTLS(files: TLSFiles(certificateChain: chain, privateKey: key))
                return nil
            } catch {
                return error as? TLSFilesError
            }
        }
        #expect(reason(certificate.certificatePath, certificate.keyPath) == nil)
        #expect(reason(missing, certificate.keyPath)?.description == "TLS: \(missing): no such file")
        #expect(reason(certificate.certificatePath, missing)?.description == "TLS: \(missing): no such file")
        #expect(reason(directory.path, certificate.keyPath)?.description == "TLS: \(directory.path): is a directory, not a PEM file")
        #expect(reason(garbage, certificate.keyPath)?.path == garbage)
        #expect(reason(garbage, certificate.keyPath)?.reason.hasPrefix("not a PEM certificate chain") == true)
        #expect(reason(certificate.certificatePath, garbage)?.reason.hasPrefix("not an unencrypted PEM private key") == true)
        // The key of another certificate.
        let mismatch = try #require(reason(certificate.certificatePath, other.keyPath))
        #expect(mismatch.path == other.keyPath)
        #expect(mismatch.reason.hasPrefix("is not the key of the certificate in \(certificate.certificatePath)"))
        #expect(mismatch.description.hasPrefix("TLS: \(other.keyPath): is not the key of the certificate in"))
    }
}
