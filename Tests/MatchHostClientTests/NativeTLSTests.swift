import Foundation
import MatchHostClient
import MatchHostProcessTesting
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

/// The native port with `--tls-certificate`: real certificates made by `openssl`, the Swift
/// client on real sockets.
@Suite("Native client: TLS")
struct NativeTLSTests {
    /// A directory of the test's own for its certificates.
    private static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-tls-\(UUID().uuidString)")
    }

    /// A server whose native port speaks TLS with `certificate`.
    private static func startServer(
        _ certificate: TestCertificate, _ adjust: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let tls = try ServerTLS(files: TLSFiles(certificateChain: certificate.certificatePath, privateKey: certificate.keyPath))
        return try await TestServer.start {
            $0.tls = tls
            adjust(&$0)
        }
    }

    /// A client trusting `certificate` alone.
    private static func client(port: Int, trusting certificate: TestCertificate, serverName: String? = nil) -> MatchHostClient {
        makeClient(port: port) { $0.tls = .init(trust: .pemFile(certificate.certificatePath), serverName: serverName) }
    }

    @Test("two players over TLS: authenticate, create and join, data both ways, a dropped connection resumes with nothing lost")
    func playOverTLS() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let server = try await Self.startServer(certificate)
        let alice = Self.client(port: server.port, trusting: certificate)
        // Bob trusts the same certificate given as text, and checks it by its DNS name.
        let bob = makeClient(port: server.port) {
            $0.host = "localhost"
            $0.tls = .init(trust: .pem(try! certificate.certificatePEM))
        }
        let aliceID = try await alice.connect().playerID
        let bobID = try await bob.connect().playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let match = try await alice.createMatch(label: "over TLS")
        _ = try await bob.joinMatch(match.matchID)
        _ = try await aliceEvents.next("bob joined") { $0.isPresence(.joined, of: bobID) }
        try await alice.send([1, 2, 3], in: match.matchID)
        #expect(
            try await bobEvents.next("alice's data") { $0.isMatchData }
                == .matchData(matchID: match.matchID, sender: aliceID, payload: ByteBuffer(bytes: [1, 2, 3]), reliable: true))

        // A new TLS connection, a resume on it, and what was sent meanwhile exactly once.
        await bob.dropConnection()
        _ = try await aliceEvents.next("bob disconnected") { $0.isPresence(.disconnected, of: bobID) }
        for number in 1...20 { try await alice.send(numbered(number), in: match.matchID) }
        _ = try await aliceEvents.next("bob reconnected") { $0.isPresence(.reconnected, of: bobID) }
        var received: [Int] = []
        while received.count < 20 {
            let event = try await bobEvents.next("alice's numbered data") { $0.isMatchData }
            received.append(event.payload.flatMap(number(of:)) ?? -1)
        }
        #expect(received == Array(1...20))
        try await bob.send([9], in: match.matchID)
        #expect(try await aliceEvents.next("bob's data after the resume") { $0.isMatchData }.payload == ByteBuffer(bytes: [9]))
        await alice.close()
        await bob.close()
        await server.stop()
    }

    @Test("a certificate the client does not trust, or for another name, fails with tlsFailed; the server serves the next client")
    func untrustedOrWrongName() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // For localhost only: a certificate that also names the address connected to would
        // pass for it, whatever name the client checks.
        let certificate = try await TestCertificate.make(in: directory, names: ["DNS:localhost"])
        let stranger = try await TestCertificate.make(in: directory, fileStem: "stranger")
        let server = try await Self.startServer(certificate)

        let trustingTheSystem = makeClient(port: server.port) { $0.tls = .init() }
        await Self.expectTLSFailure(containing: "the server's certificate was not accepted (CERTIFICATE_VERIFY_FAILED): no authority this client trusts signed it, or it has expired or is not valid yet. Trust that certificate") {
            try await trustingTheSystem.connect()
        }
        #expect(await trustingTheSystem.state == .disconnected)
        let trustingAnother = Self.client(port: server.port, trusting: stranger)
        await Self.expectTLSFailure(containing: "CERTIFICATE_VERIFY_FAILED") { try await trustingAnother.connect() }
        let checkingAnotherName = Self.client(port: server.port, trusting: certificate, serverName: "games.example.com")
        await Self.expectTLSFailure(containing: "Couldn't find games.example.com in certificate") {
            try await checkingAnotherName.connect()
        }

        let trusting = Self.client(port: server.port, trusting: certificate, serverName: "localhost")
        #expect(try await trusting.connect().playerID.count == 32)
        await trusting.close()
        await server.stop()
    }

    @Test("a plaintext client on the TLS port gets TLS_REQUIRED; a TLS client on a plaintext port fails its handshake")
    func mismatchedEnds() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let server = try await Self.startServer(certificate)
        let plaintext = makeClient(port: server.port)
        await expectNativeError(.tlsRequired) { try await plaintext.connect() }
        #expect(await plaintext.state == .disconnected)
        await server.stop()

        let plaintextServer = try await TestServer.start()
        // The server takes the ClientHello for a frame too large and closes: the handshake
        // ends without an answer it can read, or with the close (a dropped connection).
        let overTLS = Self.client(port: plaintextServer.port, trusting: certificate)
        do {
            try await overTLS.connect()
            Issue.record("connected over TLS to a plaintext port")
        } catch MatchHostClientError.tlsFailed(let detail) {
            #expect(detail.contains("handshakeFailed"), "\(detail)")
        } catch MatchHostClientError.connectionFailed(let detail) {
            #expect(detail.contains("EOF during handshake"), "\(detail)")
        }
        #expect(await overTLS.state == .disconnected)
        await plaintextServer.stop()
    }

    @Test("trusted certificates that cannot be read fail connect() with tlsFailed, before any connection")
    func unreadableTrust() async throws {
        let missing = makeClient(port: 9) { $0.tls = .init(trust: .pemFile("/nonexistent/ca.pem")) }
        await Self.expectTLSFailure(containing: "/nonexistent/ca.pem") { try await missing.connect() }
        let garbage = makeClient(port: 9) { $0.tls = .init(trust: .pem("not a certificate")) }
        await Self.expectTLSFailure(containing: "PEM") { try await garbage.connect() }
    }

    @Test("a port at --max-connections tells a TLS client SERVER_FULL over TLS")
    func refusedOverTLS() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let server = try await Self.startServer(certificate) { $0.maxConnections = 1 }
        let first = Self.client(port: server.port, trusting: certificate)
        try await first.connect()
        let second = Self.client(port: server.port, trusting: certificate)
        await expectNativeError(.serverFull) { try await second.connect() }
        await first.close()
        await server.stop()
    }

    @Test("reload() serves renewed files to new connections; open ones stay; files that fail keep the old certificate")
    func reload() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let served = try await TestCertificate.make(in: directory, commonName: "first")
        let files = TLSFiles(certificateChain: served.certificatePath, privateKey: served.keyPath)
        let tls = try ServerTLS(files: files)
        let server = try await TestServer.start { $0.tls = tls }
        // The files as they will be renewed: a new key and certificate.
        let renewedDirectory = directory.appendingPathComponent("renewed")
        let renewed = try await TestCertificate.make(in: renewedDirectory, commonName: "second")
        let early = Self.client(port: server.port, trusting: served)
        try await early.connect()

        // A half-written renewal (the new certificate, the old key) is refused and changes nothing.
        try FileManager.default.removeItem(atPath: served.certificatePath)
        try FileManager.default.copyItem(atPath: renewed.certificatePath, toPath: served.certificatePath)
        #expect(throws: TLSFilesError.self) { try tls.reload() }
        #expect(tls.certificate.commonName == "first")
        // The server still serves the first certificate: a client trusting only the new one
        // refuses it.
        let trustingRenewed = Self.client(port: server.port, trusting: renewed)
        await Self.expectTLSFailure(containing: "CERTIFICATE_VERIFY_FAILED") { try await trustingRenewed.connect() }

        // The whole renewal.
        try FileManager.default.removeItem(atPath: served.keyPath)
        try FileManager.default.copyItem(atPath: renewed.keyPath, toPath: served.keyPath)
        #expect(try tls.reload().commonName == "second")
        let late = Self.client(port: server.port, trusting: renewed)
        try await late.connect()
        // The connection made before still works on the certificate it began with.
        let match = try await early.createMatch(label: "still here")
        #expect(match.label == "still here")
        await early.close()
        await late.close()
        await server.stop()
    }

    private static func expectTLSFailure(
        containing text: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected tlsFailed, nothing was thrown", sourceLocation: sourceLocation)
        } catch MatchHostClientError.tlsFailed(let detail) {
            #expect(text.isEmpty || detail.contains(text), "\(detail)", sourceLocation: sourceLocation)
            #expect(!detail.contains(".cc:"), "no source path of the TLS library: \(detail)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected tlsFailed, got \(error)", sourceLocation: sourceLocation)
        }
    }
}
