import Foundation
import MatchHostClient
import MatchHostProcessTesting
import MatchHostWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matchhost serve --tls-certificate … --tls-key …` as a user runs it: a real process, real
/// certificate files from `openssl`, a renewal announced with SIGHUP.
@Suite(.serialized) struct ServeTLSTests {
    private static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-serve-tls-\(UUID().uuidString)")
    }

    @Test func servesTLSReloadsOnSIGHUPAndKeepsTheCatRacePortPlaintext() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await TestCertificate.make(in: directory.appendingPathComponent("first"), commonName: "first", days: 90)
        let renewed = try await TestCertificate.make(in: directory.appendingPathComponent("renewed"), commonName: "renewed")
        let live = try await TestCertificate.make(in: directory.appendingPathComponent("live"), commonName: "first")
        try Self.copy(first, over: live)
        let server = try await ServeProcess.start(
            data: directory.appendingPathComponent("data"),
            arguments: ["--tls-certificate", live.certificatePath, "--tls-key", live.keyPath, "--log-level", "notice"], capturingLog: true)

        func client(trusting certificate: TestCertificate) -> MatchHostClient {
            makeClient(port: server.nativePort) { $0.tls = .init(trust: .pemFile(certificate.certificatePath)) }
        }
        let early = client(trusting: first)
        try await early.connect()
        let plaintext = makeClient(port: server.nativePort)
        await expectNativeError(.tlsRequired) { try await plaintext.connect() }
        // The tutorial's client speaks plaintext on its own port, as it always did.
        let racer = try await CatRaceClient.connect(host: "127.0.0.1", port: server.catRacePort, playerID: "G:tls", alias: "Tee", continueMatch: true)
        #expect(try await racer.next(timeout: .seconds(10)) == .notInMatch)
        await racer.close()
        // The command line's clients: --tls-ca, or told why not without it.
        let port = "\(server.nativePort)"
        let lobby = try await runMatchHostToExit(["lobby", "fourinarow", "--once", "--port", port, "--tls-ca", first.certificatePath])
        #expect(lobby.status == 0, "\(lobby.stderr)")
        #expect(lobby.stdout.contains("open fourinarow match"))
        let bots = try await runMatchHostToExit(["bot", "fourinarow", "--port", port, "--tls-ca", first.certificatePath, "--games", "1"])
        #expect(bots.status == 0, "\(bots.stderr)")
        #expect(bots.stdout.contains("done: 1 game(s) finished"), "\(bots.stdout)")
        let handshakes = try await runMatchHostToExit(
            ["bench", "connections", "--native", "--port", port, "--tls-ca", first.certificatePath, "--count", "20", "--settle", "0", "--json"])
        #expect(handshakes.status == 0, "\(handshakes.stdout)\(handshakes.stderr)")
        #expect(handshakes.stdout.contains("\"protocol\":\"native+tls\""), "\(handshakes.stdout)")
        #expect(handshakes.stdout.contains("\"succeeded\":20"), "\(handshakes.stdout)")
        let plaintextBench = try await runMatchHostToExit(["bench", "connections", "--native", "--port", port, "--count", "2", "--settle", "0"])
        #expect(plaintextBench.status != 0)
        #expect(plaintextBench.stdout.contains("TLS_REQUIRED"), "\(plaintextBench.stdout)")
        let refused = try await runMatchHostToExit(["lobby", "fourinarow", "--once", "--port", port])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("TLS_REQUIRED"), "\(refused.stderr)")

        // The renewal: files replaced in place, then SIGHUP.
        try Self.copy(renewed, over: live)
        server.process.send(SIGHUP)
        let late = client(trusting: renewed)
        try await Self.connectOnceRenewed(late)
        // The connection made before the renewal goes on.
        #expect(try await early.createMatch(label: "before").label == "before")
        await early.close()
        await late.close()

        await server.stop(with: SIGTERM)
        let log = await server.loggedLines()
        #expect(
            log.contains { $0.contains("the native and web ports speak TLS") && $0.contains("CN=first")
                    && ($0.contains("days-left=89") || $0.contains("days-left=90")) },
            "\(log)")
        #expect(log.contains { $0.contains("TLS certificate reloaded") && $0.contains("CN=renewed") }, "\(log)")
        #expect(server.process.terminationStatus == 0)
    }

    @Test func certificateFilesThatCannotBeServedStopTheStartWithAClearError() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let base = [
            "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "0", "--web-port", "0", "--data",
            directory.appendingPathComponent("data").path,
        ]
        let missing = directory.appendingPathComponent("missing.pem").path
        let run = try await runMatchHostToExit(base + ["--tls-certificate", missing, "--tls-key", certificate.keyPath])
        #expect(run.status == 2)
        #expect(run.stderr == "matchhost: TLS: \(missing): no such file\n")
        #expect(run.stdout.isEmpty)  // nothing was bound

        let alone = try await runMatchHostToExit(base + ["--tls-certificate", certificate.certificatePath])
        #expect(alone.status != 0)
        #expect(alone.stderr.contains("--tls-certificate and --tls-key go together"))
    }

    /// An expired certificate (a renewal job that failed): the server starts and says so, a
    /// client is told its certificate was not accepted and what that can mean, and the
    /// renewal, announced with SIGHUP, lets clients in without a restart.
    @Test func anExpiredCertificateIsSaidAtStartClientsAreToldWhyAndARenewalLetsThemIn() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let january2020 = Date(timeIntervalSince1970: 1_577_836_800)
        let lapsed = try await TestCertificate.make(
            in: directory.appendingPathComponent("lapsed"), commonName: "lapsed", validFrom: january2020, until: january2020 + 31 * 86_400)
        let renewed = try await TestCertificate.make(in: directory.appendingPathComponent("renewed"), commonName: "renewed", days: 90)
        let live = try await TestCertificate.make(in: directory.appendingPathComponent("live"), commonName: "live")
        try Self.copy(lapsed, over: live)
        let server = try await ServeProcess.start(
            data: directory.appendingPathComponent("data"),
            arguments: ["--tls-certificate", live.certificatePath, "--tls-key", live.keyPath, "--log-level", "notice"], capturingLog: true)

        // Even a client that trusts that very certificate refuses it.
        let refusing = makeClient(port: server.nativePort) { $0.tls = .init(trust: .pemFile(lapsed.certificatePath)) }
        await #expect {
            try await refusing.connect()
        } throws: { error in
            guard case MatchHostClientError.tlsFailed(let detail) = error else { return false }
            return detail.contains("(CERTIFICATE_VERIFY_FAILED)") && detail.contains("or it has expired or is not valid yet")
        }
        await refusing.close()

        try Self.copy(renewed, over: live)
        server.process.send(SIGHUP)
        let client = makeClient(port: server.nativePort) { $0.tls = .init(trust: .pemFile(renewed.certificatePath)) }
        try await Self.connectOnceRenewed(client)
        #expect(try await client.createMatch(label: "renewed").label == "renewed")
        await client.close()

        await server.stop(with: SIGTERM)
        let log = await server.loggedLines()
        #expect(
            log.contains {
                $0.contains(
                    "the native and web ports speak TLS, but the TLS certificate has expired (2020-02-01T00:00:00Z): clients will refuse it; renew it, then send SIGHUP"
                ) && $0.contains("CN=lapsed")
            }, "\(log)")
        #expect(log.contains { $0.contains("TLS certificate reloaded") && $0.contains("CN=renewed") && !$0.contains("refuse") }, "\(log)")
        #expect(server.process.terminationStatus == 0)
    }

    /// Connects `client` once the server serves the certificate it trusts: a SIGHUP is handled
    /// on its own time, and until it is, the old certificate is served.
    private static func connectOnceRenewed(_ client: MatchHostClient) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            do {
                try await client.connect()
                return
            } catch MatchHostClientError.tlsFailed(let detail) where ContinuousClock.now < deadline {
                #expect(detail.contains("CERTIFICATE_VERIFY_FAILED"))
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Replaces `target`'s two files with `source`'s, as a renewal does.
    private static func copy(_ source: TestCertificate, over target: TestCertificate) throws {
        for (from, to) in [(source.certificatePath, target.certificatePath), (source.keyPath, target.keyPath)] {
            try? FileManager.default.removeItem(atPath: to)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
    }
}
