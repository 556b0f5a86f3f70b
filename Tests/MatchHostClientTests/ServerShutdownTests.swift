import Foundation
import MatchHostProcessTesting
import MatchHostClient
import MatchHostWire
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Native client: a server that stops gracefully (SHUTTING_DOWN)")
struct ServerShutdownTests {
    @Test("reconnectsAfterServerShutdown: the client reports the stop, reconnects, and closes once its attempts run out")
    func reconnectsUntilTheAttemptsRunOut() async throws {
        let server = try await TestServer.start()
        let proxy = try await TestProxy.start(to: server.port)
        let client = makeClient(port: proxy.port) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50), maximumAttempts: 3)
        }
        try await client.connect()
        let events = Recorder(client.events)
        let states = Recorder(client.stateChanges())
        #expect(try await states.next("connected") == .connected)

        // The first attempt hangs until the request below is made: the client cannot run out of
        // attempts first, however late this task runs.
        try await proxy.setHolding(true)
        await server.stop()
        let notice = try await events.next("the shutdown notice")
        guard case .serverShuttingDown(let error) = notice else {
            Issue.record("expected serverShuttingDown first, got \(notice)")
            return
        }
        #expect(error.code == .shuttingDown)
        // Asked while the server is away: it waits with the session, and fails with the client.
        let waiting = try await requestMadeNow(of: client) { try await client.profile() }
        // Every attempt now fails at once (the proxy, not whatever may have taken the old port).
        try await proxy.setAccepting(false)
        try await proxy.setHolding(false)

        // Not closed by the ERROR: the usual reconnect attempts, then the usual end.
        var seen: [MatchHostClient.ConnectionState] = []
        repeat {
            seen.append(try await states.next("states up to closed"))
        } while !(seen.last?.isClosed ?? false)
        #expect(seen.first == .reconnecting(attempt: 1))
        #expect(seen.filter { if case .reconnecting = $0 { true } else { false } }.count == 3)
        let exhausted = MatchHostClient.CloseReason.reconnectAttemptsExhausted(attempts: 3)
        #expect(seen.last == .closed(exhausted))
        #expect(await client.state == .closed(exhausted))
        await #expect(throws: MatchHostClientError.closed(exhausted)) { _ = try await waiting.value }
        await #expect(throws: MatchHostClientError.closed(exhausted)) {
            _ = try await events.next("the end of events") { _ in false }
        }
        #expect(await events.takeAll() == [])
        await proxy.stop()
    }

    @Test("reconnectsAfterServerShutdown off: SHUTTING_DOWN closes the client, as before")
    func closesWhenTurnedOff() async throws {
        let server = try await TestServer.start()
        let client = makeClient(port: server.port) { $0.reconnectsAfterServerShutdown = false }
        try await client.connect()
        let events = Recorder(client.events)
        let states = Recorder(client.stateChanges())
        #expect(try await states.next("connected") == .connected)

        await server.stop()
        let closed = try await states.next("closed") { $0.isClosed }
        guard case .closed(.serverError(let error)) = closed else {
            Issue.record("expected SHUTTING_DOWN, got \(closed)")
            return
        }
        #expect(error.code == .shuttingDown)
        // Straight from connected to closed: no reconnect attempt.
        #expect(await states.takeAll() == [])
        await #expect(throws: MatchHostClientError.closed(.serverError(error))) {
            _ = try await events.next("the end of events") { _ in false }
        }
        // No shutdown notice: the close is the news.
        #expect(await events.takeAll() == [])
        await #expect(throws: MatchHostClientError.closed(.serverError(error))) { _ = try await client.profile() }
    }

    @Test("the default reconnect policy rides through a restart: no limit, at most 5 s between attempts")
    func defaultPolicyCoversARestart() {
        let policy = MatchHostClient.ReconnectPolicy.default
        #expect(policy.maximumAttempts == nil)
        var withoutJitter = policy
        withoutJitter.jitter = 0
        let longest = (1...10).map { withoutJitter.delay(beforeAttempt: $0) }
        #expect(longest.max() == .seconds(5))
        #expect(withoutJitter.delay(beforeAttempt: 1000) == .seconds(5))
        // What the documentation of maximumAttempts says 10 attempts span: 13 to 26 s.
        #expect(longest.reduce(TimeAmount.zero, +) == .milliseconds(26_300))
        #expect(policy.jitter == 0.5)
        for attempt in 1...10 {
            let delay = policy.delay(beforeAttempt: attempt)
            #expect(delay <= longest[attempt - 1] && delay.nanoseconds >= longest[attempt - 1].nanoseconds / 2)
        }
    }
}

/// What an operator reads when `matchhost serve` stops with players connected.
@Suite struct ServeStopLogTests {
    @Test func aStopWithPlayersConnectedLogsAFewInfoLinesAndNoWarning() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-stop-log-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--log-level", "info"], capturingLog: true)
        var clients: [MatchHostClient] = []
        for _ in 0..<3 {
            let client = makeClient(port: server.nativePort) { $0.reconnectsAfterServerShutdown = false }
            _ = try await client.connect()
            clients.append(client)
        }
        let racer = try await CatRaceClient.connect(host: "127.0.0.1", port: server.catRacePort, playerID: "G:stop", alias: "Stop")
        #expect(try await racer.next(timeout: .seconds(10)) == .notInMatch)
        _ = try await clients[0].createMatch(mode: "disks")

        await server.stop(with: SIGTERM)
        let lines = await server.loggedLines()
        func level(_ line: String) -> String { line.split(separator: " ").dropFirst().first.map(String.init) ?? "" }
        #expect(lines.filter { ["warning", "error", "critical"].contains(level($0)) } == [])
        let stopping = Array(lines.drop { !$0.hasSuffix("shutting down") })
        #expect(stopping.first.map(level) == "info")
        #expect(stopping.contains { $0.contains("sessions=3") && $0.hasSuffix("ending every session") })
        #expect(!stopping.contains { $0.hasSuffix("session ended") || $0.hasSuffix("player disconnected") || $0.hasSuffix("closing connection") })
        #expect(lines.last?.hasSuffix("stopped") == true, "\(lines.suffix(3))")
        for client in clients { await client.close() }
        await racer.close()
    }
}
