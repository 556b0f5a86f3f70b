import Foundation
import Logging
import MatchHostAdmin
import MatchHostProcessTesting
import MatchHostServer
import NIOCore
import NIOPosix
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

/// GET `path` from 127.0.0.1:`port` over a real socket, `Connection: close`, read to the end.
func httpGet(_ path: String, port: Int, group: any EventLoopGroup) async throws -> HTTPAnswer {
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received = Mutex([UInt8]())
        let done: EventLoopPromise<[UInt8]>
        init(done: EventLoopPromise<[UInt8]>) { self.done = done }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = Self.unwrapInboundIn(data)
            self.received.withLock { $0.append(contentsOf: buffer.readableBytesView) }
        }
        func channelInactive(context: ChannelHandlerContext) {
            self.done.succeed(self.received.withLock { $0 })
        }
    }
    let done = group.next().makePromise(of: [UInt8].self)
    let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in channel.pipeline.addHandler(Collector(done: done)) }
        .connect(host: "127.0.0.1", port: port).get()
    try await channel.writeAndFlush(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
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
            "matchhost_connections_refused_total{port=\"native\",reason=\"address_full\"} 1",
        ] {
            #expect(lines.contains(expected), "no \(expected) in /metrics")
        }
        #expect(lines.contains("# TYPE matchhost_native_round_trip histogram"))

        #expect(try await httpGet("/nothing", port: admin, group: group).status == 404)
        await native.close()
        await racer.close()
        await server.stop(with: SIGTERM)
        #expect(server.process.terminationStatus == 0)
        try await group.shutdownGracefully()
    }

    /// Before the listeners are up, and once the server is shutting down, `/health` says so
    /// with 503, for a load balancer to stop sending players.
    @Test func aServerNotServingAnswersServiceUnavailable() async throws {
        let status = ServerStatus()
        let bound = AsyncStream<Int>.makeStream()
        let app = AdminEndpoints.application(
            host: "127.0.0.1", port: 0, status: status, registry: PrometheusCollectorRegistry(), logger: Logger(label: "admin-test")
        ) { address in
            bound.continuation.yield(address.port ?? 0)
        }
        let running = Task { try await app.run() }
        defer { running.cancel() }
        var ports = bound.stream.makeAsyncIterator()
        let port = try #require(await ports.next())
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        let answer = try await httpGet("/health", port: port, group: group)
        #expect(answer.status == 503)
        #expect(try self.health(answer).status == "unavailable")
        let metrics = try await httpGet("/metrics", port: port, group: group)
        #expect(metrics.body.split(separator: "\n").contains("matchhost_serving 0.0"))
        try await group.shutdownGracefully()
    }
}
