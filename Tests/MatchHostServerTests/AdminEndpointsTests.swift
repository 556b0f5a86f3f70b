import Foundation
import Logging
import MatchHostAdmin
import MatchHostProcessTesting
import MatchHostServer
import NIOCore
import NIOPosix
import NIOSSL
import Prometheus
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 answer as it came over the socket.
struct HTTPAnswer {
    var status: Int
    var headers: [String: String]
    var body: String
}

/// GET `path` from 127.0.0.1:`port` over a real socket, `Connection: close`, read to the end;
/// over TLS with `tls`.
func httpGet(_ path: String, port: Int, group: any EventLoopGroup, tls: NIOSSLContext? = nil) async throws -> HTTPAnswer {
    try await httpRequest("GET", path, port: port, group: group, tls: tls)
}

/// `method` `path` to 127.0.0.1:`port` with `headers` (`Host` and `Connection: close` added) and
/// `body` (with its `Content-Length`) over a real socket, read to the end; over TLS with `tls`.
func httpRequest(
    _ method: String, _ path: String, port: Int, group: any EventLoopGroup, headers: [String] = [], body: String? = nil,
    tls: NIOSSLContext? = nil
) async throws -> HTTPAnswer {
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received = Mutex([UInt8]())
        let done: EventLoopPromise<[UInt8]>
        init(done: EventLoopPromise<[UInt8]>) { self.done = done }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = Self.unwrapInboundIn(data)
            let received = self.received.withLock { received in
                received.append(contentsOf: buffer.readableBytesView)
                return received
            }
            // Done once the body its Content-Length announces is in: not every server closes
            // after it (Chromium's DevTools endpoint does not).
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n"),
                let length = text[..<end.lowerBound].split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") })
                    .flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }),
                text[end.upperBound...].utf8.count >= length
            {
                context.close(promise: nil)
            }
        }
        func channelInactive(context: ChannelHandlerContext) {
            self.done.succeed(self.received.withLock { $0 })
        }
    }
    let done = group.next().makePromise(of: [UInt8].self)
    let channel = try await ClientBootstrap(group: group)
        .connectTimeout(.seconds(10))
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil)) }
                try channel.pipeline.syncOperations.addHandler(Collector(done: done))
            }
        }
        .connect(host: "127.0.0.1", port: port).get()
    // A server that never answers fails the test instead of hanging it.
    let timeout = channel.eventLoop.scheduleTask(in: .seconds(20)) { channel.close(promise: nil) }
    defer { timeout.cancel() }
    // A server that refuses the connection may have answered and closed before the request is
    // written: what it said is read all the same.
    var head = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + headers
    if let body { head.append("Content-Length: \(body.utf8.count)") }
    try? await channel.writeAndFlush(ByteBuffer(string: head.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")))
    let text = String(decoding: try await done.futureResult.get(), as: UTF8.self)
    let parts = text.components(separatedBy: "\r\n\r\n")
    var lines = parts[0].components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    var headers: [String: String] = [:]
    for line in lines {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return HTTPAnswer(
        status: statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
}

/// Headless Chromium, for the admin page: `.ci/run` installs it and sets
/// `MATCHHOST_REQUIRE_BROWSER`, so that CI fails rather than skips without it.
enum HeadlessBrowser {
    static let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let isRequired = ProcessInfo.processInfo.environment["MATCHHOST_REQUIRE_BROWSER"] != nil

    /// The DOM of `url` once its scripts have run for up to `budget` of virtual time.
    static func renderedDOM(of url: String, budget: Duration = .seconds(5)) async throws -> String {
        let browser = try #require(Self.path, "no chromium")
        return try await onOwnThread {
            Result { () throws -> String in
                // A profile of its own: two browsers at once must not share one.
                let profile = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-chromium-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: profile) }
                let process = try ChildProcess(
                    browser,
                    [
                        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile.path)",
                        "--virtual-time-budget=\(budget.components.seconds * 1000)", "--dump-dom", url,
                    ],
                    standardOutput: .pipe, standardError: .discard)
                DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
                let dom = String(decoding: process.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
                process.waitUntilExit()
                return dom
            }
        }.get()
    }
}

@Suite struct AdminEndpointsTests {
    private func health(_ answer: HTTPAnswer) throws -> AdminEndpoints.HealthReport {
        try JSONDecoder().decode(AdminEndpoints.HealthReport.self, from: Data(answer.body.utf8))
    }

    /// `matchhost serve` as a user runs it: its admin port answers with what it holds, and the
    /// metrics its parts record reach Prometheus' text.
    @Test func aRunningServerReportsItsHealthAndMetricsOverHTTP() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-admin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--max-connections-per-address", "1"])
        let admin = try #require(server.adminPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        let idle = try await httpGet("/health", port: admin, group: group)
        #expect(idle.status == 200)
        #expect(idle.headers["content-type"] == "application/json")
        var report = try self.health(idle)
        #expect(report.status == "serving")
        #expect(report.storage == "ok")
        #expect([report.nativeConnections, report.sessions, report.catraceConnections] == [Int](repeating: 0, count: 3))

        let (native, _) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "admin-device")
        let created = try await native.request(.createMatch(mode: "relay", maxPlayers: 0, label: "watched"))
        #expect(try await native.response(to: created).joined != nil)
        let racer = try await TestCatRaceClient.connect(port: server.catRacePort, group: group, id: "G:Admin")
        #expect(try await racer.next() == .notInMatch)
        // A second connection to the native port from this address is over --max-connections-per-address: counted.
        let refused = try await TestNativeConnection.connect(port: server.nativePort, group: group)
        try await refused.waitUntilClosed()

        report = try self.health(try await httpGet("/health", port: admin, group: group))
        #expect([report.nativeConnections, report.sessions, report.nativeMatches, report.catraceConnections] == [Int](repeating: 1, count: 4))

        let metrics = try await httpGet("/metrics", port: admin, group: group)
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = Set(metrics.body.split(separator: "\n").map(String.init))
        for expected in [
            "matchhost_serving 1.0", "matchhost_connections{port=\"native\"} 1.0", "matchhost_connections{port=\"catrace\"} 1.0",
            "matchhost_sessions 1.0", "matchhost_matches{port=\"native\"} 1.0", "matchhost_storage_failing 0.0",
        ] {
            #expect(lines.contains(expected), "no \(expected) in /metrics")
        }
        // At least the one refused here: a client of another test, still reconnecting to a port
        // number this server now has, is refused and counted too.
        let refusals = lines.first { $0.hasPrefix("matchhost_connections_refused_total{port=\"native\",reason=\"address_full\"} ") }
        #expect(refusals.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 >= 1 } == true, "\(refusals ?? "no refusals counted")")
        #expect(lines.contains("# TYPE matchhost_native_round_trip histogram"))

        #expect(try await httpGet("/nothing", port: admin, group: group).status == 404)
        await native.close()
        await racer.close()
        await server.stop(with: SIGTERM)
        #expect(server.process.terminationStatus == 0)
        try await group.shutdownGracefully()
    }

    /// The admin page in a real browser: its script reads the endpoints and shows the server's
    /// counts and its running matches.
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func theAdminPageShowsTheRunningServerInABrowser() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-adminpage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data)
        let admin = try #require(server.adminPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (host, _) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "page-host")
        let open = try #require(try await host.response(to: try await host.request(.createMatch(mode: "relay", maxPlayers: 4, label: "<b>open</b>"))).joined)
        let invited = try #require(
            try await host.response(to: try await host.request(.createMatch(mode: "fourinarow", maxPlayers: 2, label: "", isPrivate: true))).joined)

        let page = try await httpGet("/", port: admin, group: group)
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let dom = try await HeadlessBrowser.renderedDOM(of: "http://127.0.0.1:\(admin)/")
        #expect(dom.contains("<strong id=\"status\" class=\"serving\">serving</strong>"), "\(dom)")
        #expect(dom.contains("<td id=\"nativeConnections\">1</td>"))
        #expect(dom.contains("<td id=\"nativeMatches\">2</td>"))
        // A label is shown as the text it is, never as markup.
        #expect(dom.contains("<tr data-match=\"\(open.matchID)\"><td>\(open.matchID)</td><td>relay</td><td>&lt;b&gt;open&lt;/b&gt;</td><td>1</td><td>1</td><td>4</td><td>open</td></tr>"))
        #expect(dom.contains("<tr data-match=\"\(invited.matchID)\"><td>\(invited.matchID)</td><td>fourinarow</td><td></td><td>1</td><td>1</td><td>2</td><td>invite code</td></tr>"))
        #expect(!dom.contains(invited.inviteCode), "no invite code on the page")

        let list = try JSONDecoder().decode(AdminEndpoints.MatchList.self, from: Data(try await httpGet("/api/matches", port: admin, group: group).body.utf8))
        #expect(list.total == 2)
        #expect(list.matches.map(\.id) == [open.matchID, invited.matchID])
        await host.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }

    /// The admin page's list is the lowest ids up to its limit, lowest first, and `total`
    /// counts every running match.
    @Test func theRunningMatchesAreTheLowestIdsUpToTheLimitAndTheTotalCountsAll() async throws {
        let server = try await RunningNativeServer.start()
        let (host, _) = try await server.login("admin-list")
        var ids: [UInt64] = []
        for label in ["one", "two", "three"] {
            ids.append(try #require(try await host.ask(.createMatch(mode: "relay", maxPlayers: 2, label: label)).joined).matchID)
        }
        let (total, matches) = try await server.listener.runningMatches(limit: 2)
        #expect(total == 3)
        #expect(matches.map(\.id) == Array(ids.sorted().prefix(2)))
        #expect(matches.map(\.label) == ["one", "two"])
        #expect(try await server.listener.runningMatches(limit: 0).matches.isEmpty)
        try await server.stop()
    }

    /// A taken admin port stops `serve` with one line naming the flag, before a game port is
    /// bound: no player is taken by a server that then stops.
    @Test func aTakenAdminPortStopsTheServerBeforeItBindsAGamePort() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let holder = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let taken = try #require(holder.localAddress?.port)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-takenadmin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }

        let run = try await runMatchHostToExit([
            "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "0", "--admin-port", "\(taken)", "--data", data.path,
            "--log-level", "critical",
        ])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty, "nothing was bound: \(run.stdout)")
        #expect(run.stderr.hasPrefix("matchhost: cannot serve the admin port on 127.0.0.1:\(taken) ("), "\(run.stderr)")
        #expect(run.stderr.hasSuffix("; choose another --admin-port, or pass --no-admin\n"))
        try await holder.close()
        try await group.shutdownGracefully()
    }

    /// A client that stops in the middle of a request (its head sent, its body never) is closed
    /// after the idle timeout: it holds no connection, nor the server's graceful shutdown.
    @Test func aStalledRequestIsClosedAfterTheIdleTimeout() async throws {
        let (port, running) = try await Self.runEndpoints(status: ServerStatus(), idleTimeout: .milliseconds(300))
        defer { running.cancel() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get()
        // On a loaded machine the idle timeout can come first: the write then finds the
        // connection closed, by the server, which is what this waits for anyway.
        try? await channel.writeAndFlush(
            ByteBuffer(string: "POST /api/players/p/ban HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"re")).get()
        let closed = channel.closeFuture
        let deadline = group.next().scheduleTask(in: .seconds(30)) { channel.close(promise: nil) }
        let started = ContinuousClock.now
        try await closed.get()
        deadline.cancel()
        #expect(ContinuousClock.now - started < .seconds(20), "closed by the server's idle timeout, not the test's deadline")
        try await group.shutdownGracefully()
    }

    /// Before the listeners are up, and once the server is shutting down, `/health` says so
    /// with 503, for a load balancer to stop sending players.
    @Test func aServerNotServingAnswersServiceUnavailable() async throws {
        let (port, running) = try await Self.runEndpoints(status: ServerStatus())
        defer { running.cancel() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        let answer = try await httpGet("/health", port: port, group: group)
        #expect(answer.status == 503)
        #expect(try self.health(answer).status == "unavailable")
        let metrics = try await httpGet("/metrics", port: port, group: group)
        #expect(metrics.body.split(separator: "\n").contains("matchhost_serving 0.0"))
        try await group.shutdownGracefully()
    }

    /// With TLS (`serve --admin-tls`), the endpoints speak HTTPS with the server's certificate,
    /// a reload of which applies to the next connection; a plain HTTP client is told to use
    /// https, and a silent one still meets the idle timeout.
    @Test func theEndpointsServeHTTPSWithTheReloadedCertificateAndTellPlainHTTPSo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-admin-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await TestCertificate.make(in: directory.appendingPathComponent("first"), commonName: "first")
        let renewed = try await TestCertificate.make(in: directory.appendingPathComponent("renewed"), commonName: "renewed")
        let tls = try ServerTLS(files: TLSFiles(certificateChain: first.certificatePath, privateKey: first.keyPath))
        let (port, running) = try await Self.runEndpoints(status: ServerStatus(), tls: tls)
        defer { running.cancel() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        let health = try await httpGet("/health", port: port, group: group, tls: try TLSPortTests.trusting(first))
        #expect(health.status == 503)
        #expect(try self.health(health).status == "unavailable")
        let plain = try await httpGet("/health", port: port, group: group)
        #expect(plain.status == 400)
        #expect(plain.body == "the admin endpoints speak HTTPS only: use https:// (matchhost's admin commands: --admin-tls or --admin-tls-ca)\n")

        // The renewal, as SIGHUP does it: the next connection is served the new certificate.
        // A client that trusts only the renewal fails its handshake, and reads no answer.
        #expect(try await httpGet("/health", port: port, group: group, tls: try TLSPortTests.trusting(renewed)).status == 0)
        try FileManager.default.removeItem(atPath: first.certificatePath)
        try FileManager.default.removeItem(atPath: first.keyPath)
        try FileManager.default.copyItem(atPath: renewed.certificatePath, toPath: first.certificatePath)
        try FileManager.default.copyItem(atPath: renewed.keyPath, toPath: first.keyPath)
        #expect(try tls.reload().commonName == "renewed")
        let metrics = try await httpGet("/metrics", port: port, group: group, tls: try TLSPortTests.trusting(renewed))
        #expect(metrics.status == 200)
        #expect(metrics.body.split(separator: "\n").contains("matchhost_serving 0.0"))

        // A client that connects and never begins TLS holds nothing past the idle timeout (a
        // short one on endpoints of their own: a loaded machine may stall a handshake that long).
        let (quickPort, quick) = try await Self.runEndpoints(status: ServerStatus(), idleTimeout: .milliseconds(300), tls: tls)
        defer { quick.cancel() }
        // Nor does one that stalls in its handshake, past the record's first bytes (README:
        // "in the middle of a request or a TLS handshake too").
        for opening: [UInt8] in [[], [0x16, 0x03, 0x01]] {
            let silent = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: quickPort).get()
            if !opening.isEmpty { try? await silent.writeAndFlush(ByteBuffer(bytes: opening)) }
            let deadline = group.next().scheduleTask(in: .seconds(30)) { silent.close(promise: nil) }
            let started = ContinuousClock.now
            try await silent.closeFuture.get()
            deadline.cancel()
            #expect(ContinuousClock.now - started < .seconds(20), "\(opening): closed by the server's idle timeout, not the test's deadline")
        }
        try await group.shutdownGracefully()
    }

    /// The admin endpoints alone, on a free port of 127.0.0.1, for `status`; returns the port
    /// and the task running them (cancel it to stop them).
    private static func runEndpoints(
        status: ServerStatus, idleTimeout: TimeAmount = AdminEndpoints.defaultIdleTimeout, tls: ServerTLS? = nil
    ) async throws -> (port: Int, running: Task<Void, any Error>) {
        let bound = AsyncStream<Int>.makeStream()
        let app = AdminEndpoints.application(
            host: "127.0.0.1", port: 0, status: status, registry: PrometheusCollectorRegistry(), adminKey: String(repeating: "a", count: 64),
            logger: Logger(label: "admin-test"), idleTimeout: idleTimeout, tls: tls
        ) { address in
            bound.continuation.yield(address.port ?? 0)
        }
        let running = Task {
            // A failed bind ends the stream, so that the wait below fails instead of hanging.
            defer { bound.continuation.finish() }
            try await app.run()
        }
        var ports = bound.stream.makeAsyncIterator()
        guard let port = await ports.next() else {
            running.cancel()
            throw AdminEndpointsNotBound()
        }
        return (port, running)
    }

    private struct AdminEndpointsNotBound: Error {}
}
