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
    static func trusting(_ certificate: TestCertificate) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate.certificatePath))
        return try NIOSSLContext(configuration: configuration)
    }

    private static func startServer(
        _ certificate: TestCertificate, _ configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (RunningNativeServer, web: Int) {
        let tls = try ServerTLS(files: TLSFiles(certificateChain: certificate.certificatePath, privateKey: certificate.keyPath))
        let server = try await RunningNativeServer.start {
            $0.tls = tls
            $0.webPort = 0
            configure(&$0)
        }
        return (server, try #require(server.listener.webAddress?.port))
    }

    /// A client whose whole ClientHello fits the server's first read (OpenSSL's, curl's:
    /// about 500 bytes with classic key shares; ours and browsers' send post-quantum ones, over
    /// the first read's 1 KiB) is answered at once: the server's handshake reply, written while
    /// that read is handled, is not held back by the gate that started TLS.
    @Test func aClientHelloThatArrivesInOneReadIsAnsweredAtOnce() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let (server, _) = try await Self.startServer(certificate) { $0.idleTimeout = .seconds(300) }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate.certificatePath))
        configuration.curves = [.x25519]
        let tls = try NIOSSLContext(configuration: configuration)
        // Without the reply the handshake would wait for the server's 300 s: the login's own
        // wait fails it long before.
        let (player, authenticated) = try await TestNativeConnection.login(port: server.port, group: server.group, device: "small-hello", tls: tls)
        #expect(authenticated.playerID.count == 32)
        let created = try await player.response(to: try await player.request(.createMatch(mode: "relay", maxPlayers: 2, label: "one read")))
        #expect(created.joined?.label == "one read")
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    @Test func theNativePortSpeaksTLSAndTellsAPlaintextClientSo() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
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
        #expect(refusal.message == "this port speaks TLS only: connect with TLS (the Swift client: Configuration.tls; matchhost's commands: --tls)")
        // The TLS player is untouched.
        let again = try await player.response(to: try await player.request(.createMatch(mode: "relay", maxPlayers: 2, label: "still")))
        #expect(again.joined?.label == "still")
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    @Test func theWebPortServesHTTPSAndWSSAndTellsPlaintextHTTPSo() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
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

    /// A client that connects and says nothing reads nothing: the handshake deadline's ERROR
    /// would be plaintext on a port that promises TLS, so the close comes without it.
    @Test func aSilentClientIsClosedAtItsHandshakeDeadlineWithoutAPlaintextByte() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let (server, _) = try await Self.startServer(certificate) {
            $0.heartbeatInterval = .milliseconds(100)
            $0.idleTimeout = .milliseconds(300)
        }
        let silent = try await TestNativeConnection.connect(port: server.port, group: server.group)
        #expect(try await silent.nextEvent(timeout: .seconds(10)) == .closed)
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    /// A port at its limit tells a TLS client why inside TLS: the web port's 503 too.
    @Test func theWebPortRefusesOverItsLimitWithA503InsideTLS() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let (server, web) = try await Self.startServer(certificate) { $0.maxConnections = 1 }
        let tls = try Self.trusting(certificate)
        let (player, _) = try await TestNativeConnection.login(port: server.port, group: server.group, device: "the-one", tls: tls)
        let refused = try await httpGet("/", port: web, group: server.group, tls: tls)
        #expect(refused.status == 503)
        #expect(refused.body == "the server holds its most connections (1, --max-connections); try again later\n")
        await player.close()
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    /// A refused connection that never begins TLS is closed at the refusal's deadline (5 s),
    /// without a byte: it cannot hold its place among the lingering refusals for longer.
    @Test func aRefusedClientThatNeverBeginsTLSIsClosedAtItsDeadline() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let (server, _) = try await Self.startServer(certificate) { $0.maxConnections = 1 }
        let (player, _) = try await TestNativeConnection.login(
            port: server.port, group: server.group, device: "the-one", tls: try Self.trusting(certificate))
        let refused = try await TestNativeConnection.connect(port: server.port, group: server.group)
        let opened = ContinuousClock.now
        #expect(try await refused.nextEvent(timeout: .seconds(30)) == .closed)
        // Not at once (it was held for its handshake), and not for ever.
        #expect(ContinuousClock.now - opened >= .seconds(4))
        await player.close()
        await server.listener.close()
        try await server.group.shutdownGracefully()
    }

    /// A stop closes every connection at once: each TLS close may wait for its client's
    /// close_notify, and clients that never send it must not hold the stop one after another.
    @Test func aStopDoesNotWaitForClientsThatNeverAnswerTheirCloseInTurn() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let (server, _) = try await Self.startServer(certificate)
        let tls = try Self.trusting(certificate)
        var stalled: [TestNativeConnection] = []
        for _ in 0..<16 {
            // Past the TLS handshake and HELLO, not signed in (no session to end), then deaf.
            let connection = try await TestNativeConnection.handshake(port: server.port, group: server.group, tls: tls)
            try await connection.channel.setOption(ChannelOptions.autoRead, value: false).get()
            stalled.append(connection)
        }
        // One after another, at a second each, this takes 16 s.
        try await Self.within(.seconds(12), "the stop") { await server.listener.close() }
        for connection in stalled { await connection.close() }
        try await server.group.shutdownGracefully()
    }

    /// Runs `body`, throwing if it takes longer than `limit` (a hang, not a speed, is tested).
    private static func within(_ limit: Duration, _ what: String, _ body: @escaping @Sendable () async -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else { throw TestClientError.unexpected("\(what) took longer than \(limit)") }
        }
    }

    /// Each file the server cannot use is named, with what is wrong with it.
    @Test func filesThatCannotBeServedAreNamedWithTheirReason() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let other = try await TestCertificate.make(in: directory, fileStem: "other")
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

    /// A reload never swaps a certificate clients accept for one they refuse (an old one copied
    /// back by mistake, a renewal dated ahead): it keeps the one served and says why. A lapsed
    /// one is replaced by anything newer, and an expired one at start is still served (the
    /// log says so: ``TLSCertificateSummary/logServed(_:to:now:)``).
    @Test func aReloadKeepsACertificateClientsAcceptOverOneTheyRefuse() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let day: TimeInterval = 86_400
        let january2020 = Date(timeIntervalSince1970: 1_577_836_800)
        let lapsed = try await TestCertificate.make(
            in: directory, fileStem: "lapsed", commonName: "lapsed", validFrom: january2020, until: january2020 + 31 * day)
        let older = try await TestCertificate.make(
            in: directory, fileStem: "older", commonName: "older", validFrom: january2020 - 31 * day, until: january2020)
        let ahead = try await TestCertificate.make(
            in: directory, fileStem: "ahead", commonName: "ahead", validFrom: Date() + 10 * day, until: Date() + 100 * day)
        let renewed = try await TestCertificate.make(in: directory, fileStem: "renewed", commonName: "renewed", days: 90)
        let live = (certificatePath: directory.appendingPathComponent("live.crt").path, keyPath: directory.appendingPathComponent("live.key").path)
        func install(_ certificate: TestCertificate) throws {
            for (source, target) in [(certificate.certificatePath, live.certificatePath), (certificate.keyPath, live.keyPath)] {
                try? FileManager.default.removeItem(atPath: target)
                try FileManager.default.copyItem(atPath: source, toPath: target)
            }
        }

        try install(lapsed)
        let tls = try ServerTLS(files: TLSFiles(certificateChain: live.certificatePath, privateKey: live.keyPath))
        #expect(tls.certificate.commonName == "lapsed")
        #expect(tls.certificate.refusal(now: Int(Date().timeIntervalSince1970)) == "has expired (2020-02-01T00:00:00Z)")
        // Refused either way, the files' one is served: nothing better is lost.
        try install(older)
        #expect(try tls.reload().commonName == "older")
        try install(renewed)
        #expect(try tls.reload().commonName == "renewed")
        #expect(tls.certificate.refusal(now: Int(Date().timeIntervalSince1970)) == nil)
        for refused in [lapsed, ahead] {
            try install(refused)
            do {
                let served = try tls.reload()
                Issue.record("reloaded \(served)")
            } catch let error as TLSFilesError {
                #expect(error.path == live.certificatePath)
                #expect(error.reason.contains("clients would refuse it, and accept the one served"), "\(error)")
                #expect(error.reason.contains(refused.certificatePath == lapsed.certificatePath ? "has expired (2020-02-01" : "is not valid until"), "\(error)")
            }
            #expect(tls.certificate.commonName == "renewed")
        }
    }
}

@Suite struct BrowserTLSTests {
    /// `https://` in a real browser: the page comes over TLS, connects with `wss://` (anything
    /// else a secure page may not open), and plays against a player on the TLS native port.
    /// The browser trusts the test's certificate by its public key, and nothing else.
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func thePagePlaysOverHTTPSAndWSS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory.appendingPathComponent("tls"))
        let server = try await ServeProcess.start(
            data: directory.appendingPathComponent("data"),
            arguments: ["--idle-timeout", "300", "--tls-certificate", certificate.certificatePath, "--tls-key", certificate.keyPath])
        let web = try #require(server.webPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (red, _) = try await TestNativeConnection.login(
            port: server.nativePort, group: group, device: "red-over-tls", tls: try TLSPortTests.trusting(certificate))
        let created = try #require(
            try await red.response(to: try await red.request(.createMatch(mode: "fourinarow", maxPlayers: 2, label: "", isPrivate: true))).joined)

        let page = try await DevToolsPage.open(
            "https://127.0.0.1:\(web)/fourinarow?join=\(created.inviteCode)&bot=1", group: group,
            arguments: ["--ignore-certificate-errors-spki-list=\(try await certificate.publicKeySHA256())"])
        // Red moves first (column 0), once the page has joined; the page's bot answers in the
        // middle column.
        _ = try await red.nextFourInARowEvent(in: created.matchID, "play starting") { event in
            if case .state(let state) = event { return state.phase == .playing }
            return false
        }
        try await red.playFourInARow(1, column: 0, in: created.matchID)
        let answer = try await red.nextFourInARowEvent(in: created.matchID, "the page's move") { event in
            if case .moved(let moved) = event { return moved.seat == 1 }
            return false
        }
        guard case .moved(let browserMoved) = answer else { throw TestClientError.unexpected("no MOVED") }
        #expect(browserMoved.column == 3)
        let scheme = "JSON.stringify([location.protocol, document.getElementById('connection').textContent])"
        #expect(try await page.waitFor(scheme, toBe: #"["https:","connected"]"#) == #"["https:","connected"]"#)
        #expect(page.problems.isEmpty, "\(page.problems)")
        await page.close()
        await red.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }
}
