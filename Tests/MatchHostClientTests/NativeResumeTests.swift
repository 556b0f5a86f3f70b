import MatchHostClient
import MatchHostCore
import MatchHostProcessTesting
import MatchHostServer
import MatchHostStoreTesting
import MatchHostWire
import NIOCore
import Testing

@Suite("Native client: dropped connections, resume and session end")
struct NativeResumeTests {
    /// Receives `count` numbered payloads from `sender` and returns their numbers in arrival order.
    private func receiveNumbers(_ count: Int, from sender: String, in events: Recorder<MatchHostClient.Event>, timeout: Double = 30)
        async throws -> [Int]
    {
        var numbers: [Int] = []
        for index in 0..<count {
            let event = try await events.next("message \(index) of \(count) from \(sender)", timeout: timeout) { event in
                if case .matchData(_, sender, _, true) = event { return true }
                return false
            }
            numbers.append(event.payload.flatMap(number(of:)) ?? -1)
        }
        return numbers
    }

    @Test("a dropped connection resumes by itself; messages sent meanwhile arrive exactly once, in order")
    func dropAndResume() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        // Bob waits 300 ms before reconnecting, so that the messages below are sent in the gap.
        let bob = makeClient(port: server.port) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(300), maximumDelay: .seconds(1), jitter: 0)
        }
        let aliceID = try await alice.connect().playerID
        let bobSession = try await bob.connect()
        let bobID = bobSession.playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let match = try await alice.createMatch()
        _ = try await bob.joinMatch(match.matchID)
        _ = try await aliceEvents.next("bob joined") { $0.isPresence(.joined, of: bobID) }
        try await alice.send(numbered(0), in: match.matchID)
        try await bob.send(numbered(0), in: match.matchID)
        #expect(try await receiveNumbers(1, from: aliceID, in: bobEvents) == [0])
        #expect(try await receiveNumbers(1, from: bobID, in: aliceEvents) == [0])

        let bobStates = Recorder(bob.stateChanges())
        _ = try await bobStates.next("connected") { $0 == .connected }
        await bob.dropConnection()
        #expect(try await bobStates.next("reconnecting") == .reconnecting(attempt: 1))
        _ = try await aliceEvents.next("bob disconnected") { $0.isPresence(.disconnected, of: bobID) }
        for number in 1...50 {
            try await alice.send(numbered(number), in: match.matchID)
            try await bob.send(numbered(number), in: match.matchID)
        }
        // A request made in the gap is answered after the resume.
        async let secondMatch = bob.createMatch(label: "made while away")
        #expect(try await bobStates.next("resuming") == .resuming)
        #expect(try await bobStates.next("connected") == .connected)
        #expect(
            try await aliceEvents.next("bob reconnected") { $0.isPresence(.reconnected, of: bobID) }
                == .presence(matchID: match.matchID, playerID: bobID, change: .reconnected, reason: .none))
        #expect(try await secondMatch.label == "made while away")
        #expect(try await receiveNumbers(50, from: aliceID, in: bobEvents) == Array(1...50))
        #expect(try await receiveNumbers(50, from: bobID, in: aliceEvents) == Array(1...50))
        // Nothing came twice: the next message from each side is the next number.
        try await alice.send(numbered(51), in: match.matchID)
        try await bob.send(numbered(51), in: match.matchID)
        #expect(try await receiveNumbers(1, from: aliceID, in: bobEvents) == [51])
        #expect(try await receiveNumbers(1, from: bobID, in: aliceEvents) == [51])
        #expect(await bob.authenticated?.sessionID == bobSession.sessionID)

        await alice.close()
        await bob.close()
        await server.stop()
    }

    @Test("a reconnect that finds the server full (SERVER_FULL) tries again, and resumes once there is room")
    func fullServerOnReconnect() async throws {
        let server = try await TestServer.start { $0.maxConnections = 1 }
        // Bob goes through a proxy that holds his first reconnect until another player has
        // taken the only place: no race between his backoff and her connect, however loaded
        // the machine.
        let proxy = try await TestProxy.start(to: server.port)
        let log = LogLines()
        var logger = log.logger
        logger.logLevel = .debug
        let bob = makeClient(port: proxy.port, logger: logger) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100))
            $0.connectTimeout = .seconds(60)
        }
        let session = try await bob.connect()
        let states = Recorder(bob.stateChanges())
        _ = try await states.next("connected") { $0 == .connected }
        try await proxy.setHolding(true)
        await bob.dropConnection()
        #expect(try await states.next("reconnecting") == .reconnecting(attempt: 1))
        let deadline = NIODeadline.now() + .seconds(10)
        while try await server.listener.counts().connections > 0, NIODeadline.now() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let carol = makeClient(port: server.port)
        _ = try await carol.connect()
        try await proxy.releaseHeld()
        #expect(try await states.next("refused, trying again") { $0 == .reconnecting(attempt: 2) } == .reconnecting(attempt: 2))
        #expect(log.all.contains { $0.contains("server error") && $0.contains("SERVER_FULL") }, "refused with SERVER_FULL")
        await carol.close()
        _ = try await states.next("connected again") { $0 == .connected }
        #expect(await bob.authenticated?.sessionID == session.sessionID, "the same session, resumed")
        await proxy.stop()
        await bob.close()
        await server.stop()
    }

    @Test(
        "a proxy cutting the stream at random points: every message arrives once and in order",
        arguments: [1, 2, 3] as [UInt64])
    func randomCuts(seed: UInt64) async throws {
        // What the server and Bob did, for a failure to show.
        let log = LogLines()
        var logger = log.logger
        logger.logLevel = .debug
        let server = try await TestServer.start(logger: logger)
        let proxy = try await TestProxy.start(to: server.port)
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: proxy.port, logger: logger) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(50))
        }
        let aliceID = try await alice.connect().playerID
        let bobID = try await bob.connect().playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let match = try await alice.createMatch()
        _ = try await bob.joinMatch(match.matchID)
        _ = try await aliceEvents.next("bob joined") { $0.isPresence(.joined, of: bobID) }

        let cuts = 8
        try await proxy.startCutting(times: cuts, seed: seed, bytesBetweenCuts: 100...3000)
        let count = 500
        async let aliceSent: Void = {
            for number in 0..<count { try await alice.send(numbered(number, filler: 20), in: match.matchID) }
        }()
        async let bobSent: Void = {
            for number in 0..<count { try await bob.send(numbered(number, filler: 20), in: match.matchID) }
        }()
        try await aliceSent
        try await bobSent
        let fromBob: [Int]
        let fromAlice: [Int]
        do {
            fromBob = try await receiveNumbers(count, from: bobID, in: aliceEvents)
            fromAlice = try await receiveNumbers(count, from: aliceID, in: bobEvents)
        } catch {
            Issue.record(
                "seed \(seed): bob \(await bob.state), \(try await proxy.cutsMade()) cuts; the log's last lines:\n\(log.all.suffix(60).joined(separator: "\n"))")
            throw error
        }
        #expect(fromBob == Array(0..<count), "seed \(seed)")
        #expect(fromAlice == Array(0..<count), "seed \(seed)")
        #expect(try await proxy.cutsMade() == cuts, "seed \(seed)")
        // Nothing is left over, nothing comes twice.
        try await alice.send(numbered(count), in: match.matchID)
        try await bob.send(numbered(count), in: match.matchID)
        #expect(try await receiveNumbers(1, from: aliceID, in: bobEvents) == [count])
        #expect(try await receiveNumbers(1, from: bobID, in: aliceEvents) == [count])
        #expect(await bob.state == .connected)

        await alice.close()
        await bob.close()
        await proxy.stop()
        await server.stop()
    }

    @Test("without reauthentication, SESSION_NOT_FOUND after the session grace closes the client, waiting requests fail")
    func graceExpired() async throws {
        let server = try await TestServer.start { $0.sessionGrace = .milliseconds(200) }
        let proxy = try await TestProxy.start(to: server.port)
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: proxy.port) {
            $0.reconnectPolicy = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
            $0.reauthenticatesAfterSessionLoss = false
        }
        try await alice.connect()
        let bobID = try await bob.connect().playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let bobStates = Recorder(bob.stateChanges())
        let match = try await alice.createMatch()
        _ = try await bob.joinMatch(match.matchID)
        _ = try await aliceEvents.next("bob joined") { $0.isPresence(.joined, of: bobID) }

        try await proxy.setAccepting(false)
        await bob.dropConnection()
        _ = try await bobStates.next("reconnecting") { $0 == .reconnecting(attempt: 1) }
        let waiting = try await requestMadeNow(of: bob) { try await bob.createMatch() }
        try await bob.send([1], in: match.matchID)
        _ = try await aliceEvents.next("bob disconnected") { $0.isPresence(.disconnected, of: bobID) }
        #expect(
            try await aliceEvents.next("bob's session ended") { $0.isPresence(.left, of: bobID) }
                == .presence(matchID: match.matchID, playerID: bobID, change: .left, reason: .sessionEnded))
        try await proxy.setAccepting(true)

        let closed = try await bobStates.next("closed") { $0.isClosed }
        guard case .closed(.serverError(let error)) = closed else {
            Issue.record("expected SESSION_NOT_FOUND, got \(closed)")
            return
        }
        #expect(error.code == .sessionNotFound)
        await #expect(throws: MatchHostClientError.closed(.serverError(error))) { _ = try await waiting.value }
        await #expect(throws: MatchHostClientError.closed(.serverError(error))) { try await bob.send([2], in: match.matchID) }
        _ = try? await bobEvents.next("the end of bob's events", timeout: 5) { _ in false }
        #expect((await bobEvents.ending ?? nil) != nil)

        await alice.close()
        await proxy.stop()
        await server.stop()
    }

    @Test("the client acknowledges what it receives, so the server's backlog for it stays small")
    func acknowledgements() async throws {
        let server = try await TestServer.start { $0.maxBacklogBytes = 8 * 1024 }
        let alice = makeClient(port: server.port)
        // Acknowledging after every read batch: the rounds below come faster than the default
        // 200 ms acknowledgement delay, which would let them pile up past the backlog bound.
        let bob = makeClient(port: server.port) { $0.acknowledgementDelay = .zero }
        let aliceID = try await alice.connect().playerID
        try await bob.connect()
        let bobEvents = Recorder(bob.events)
        let bobStates = Recorder(bob.stateChanges())
        let match = try await alice.createMatch()
        _ = try await bob.joinMatch(match.matchID)
        // 20 rounds of about 3 KiB, each sent once Bob has the one before: about 60 KiB in
        // all, seven times the backlog the server allows.
        for round in 0..<20 {
            let numbers = Array(round * 25..<(round + 1) * 25)
            for number in numbers {
                try await alice.send(numbered(number, filler: 80), in: match.matchID)
            }
            #expect(try await receiveNumbers(25, from: aliceID, in: bobEvents) == numbers)
        }
        #expect(try await bobStates.next("connected") == .connected)
        #expect(await bobStates.takeAll() == [])
        await alice.close()
        await bob.close()
        await server.stop()
    }

    @Test("a session id without its resume token is RESUME_REFUSED and the session goes on")
    func stolenSessionID() async throws {
        let server = try await TestServer.start()
        let victim = makeClient(port: server.port)
        let session = try await victim.connect()
        let states = Recorder(victim.stateChanges())

        let refused = try await RawNativeConnection.exchange(
            port: server.port,
            sending: [
                .hello(version: NativeFrame.protocolVersion, gameID: "matchhost"),
                .resume(sessionID: session.sessionID, resumeToken: String(repeating: "0", count: 64), lastReceived: 0),
            ])
        guard case .error(let error)? = refused.last else {
            Issue.record("expected an ERROR frame, got \(refused)")
            return
        }
        #expect(error.code == .resumeRefused)

        let unknown = try await RawNativeConnection.exchange(
            port: server.port,
            sending: [
                .hello(version: NativeFrame.protocolVersion, gameID: "matchhost"),
                .resume(sessionID: String(repeating: "f", count: 32), resumeToken: session.resumeToken, lastReceived: 0),
            ])
        guard case .error(let unknownError)? = unknown.last else {
            Issue.record("expected an ERROR frame, got \(unknown)")
            return
        }
        #expect(unknownError.code == .sessionNotFound)

        // The victim's session is untouched.
        _ = try await victim.createMatch()
        #expect(await victim.state == .connected)
        #expect(try await states.next("connected") == .connected)
        #expect(await states.takeAll() == [])
        await victim.close()
        await server.stop()
    }

    @Test("while disconnected, reliable sends queue up to the bound and then throw; requests time out")
    func boundedQueue() async throws {
        let server = try await TestServer.start()
        let client = makeClient(port: server.port) {
            $0.maximumSendQueueBytes = 1000
            $0.reconnectPolicy = .init(initialDelay: .seconds(60), maximumDelay: .seconds(60), jitter: 0)
        }
        try await client.connect()
        let match = try await client.createMatch()
        let states = Recorder(client.stateChanges())
        await client.dropConnection()
        _ = try await states.next("reconnecting") { $0 == .reconnecting(attempt: 1) }

        let payload = ByteBuffer(repeating: 7, count: 400)
        try await client.send(payload, in: match.matchID)
        try await client.send(payload, in: match.matchID)
        do {
            try await client.send(payload, in: match.matchID)
            Issue.record("a send past the queue bound did not throw")
        } catch let error as MatchHostClientError {
            guard case .sendQueueFull(_, let limit) = error else {
                Issue.record("expected sendQueueFull, got \(error)")
                return
            }
            #expect(limit == 1000)
        }
        // Unreliable sends are dropped while there is no connection; they do not take queue space.
        try await client.send(payload, in: match.matchID, reliable: false)
        do {
            _ = try await client.request(.leaveMatch(match.matchID), timeout: .milliseconds(100))
            Issue.record("a request without a connection did not time out")
        } catch MatchHostClientError.requestTimedOut(_, let after) {
            #expect(after == .milliseconds(100))
        }
        await client.close()
        await server.stop()
    }

    @Test("heartbeats keep a quiet connection alive")
    func heartbeats() async throws {
        let server = try await TestServer.start {
            $0.heartbeatInterval = .milliseconds(100)
            // Also the handshake's limit: room for a login while the suite loads both cores.
            $0.idleTimeout = .milliseconds(3_000)
        }
        let client = makeClient(port: server.port) { $0.heartbeatInterval = .milliseconds(100) }
        try await client.connect()
        let states = Recorder(client.stateChanges())
        #expect(try await states.next("connected") == .connected)
        // Two idle timeouts pass without a state change (the timeout leaves room for a loaded
        // machine: every test server shares the same two loops, and the suite two cores).
        await #expect(throws: TimedOut.self) { _ = try await states.next("a state change", timeout: 6.0) }
        #expect(await client.roundTripTime != nil)
        await client.close()
        await server.stop()
    }

    @Test("silence for the idle timeout counts as a dropped connection")
    func silentServer() async throws {
        let server = try await TestServer.start {
            // Room for a connect and login on a loaded machine (every test server shares two loops).
            $0.heartbeatInterval = .milliseconds(100)
            $0.idleTimeout = .milliseconds(1_500)
        }
        let proxy = try await TestProxy.start(to: server.port)
        // A connect has 6 s; an attempt made while the proxy is frozen dies by it, and the next
        // one gets through. The short idle timeout is also the server's limit for a handshake,
        // which a loaded machine (the whole suite on two cores) can miss: the first connect,
        // which is not what this test is about, may take a few tries.
        let client = makeClient(port: proxy.port) {
            $0.connectTimeout = .seconds(6)
        }
        for attempt in 1... {
            do {
                try await client.connect()
                break
            } catch let error as NativeError where error.code == .handshakeTimeout && attempt < 5 {
                continue
            }
        }
        let states = Recorder(client.stateChanges())
        #expect(try await states.next("connected") == .connected)
        try await proxy.setFrozen(true)
        _ = try await states.next("reconnecting", timeout: 5) { $0 == .reconnecting(attempt: 1) }
        try await proxy.setFrozen(false)
        _ = try await states.next("connected again", timeout: 20) { $0 == .connected }
        _ = try await client.createMatch()
        await client.close()
        await proxy.stop()
        await server.stop()
    }

    @Test("a login the server's database answers slowly is not an idle connection: the first attempt succeeds")
    func slowLogin() async throws {
        let store = HeldDeviceLookupStore()
        let server = try await TestServer.start {
            $0.heartbeatInterval = .milliseconds(100)
            $0.idleTimeout = .milliseconds(1_000)
            $0.store = store
        }
        let client = makeClient(port: server.port) { $0.connectTimeout = .seconds(20) }
        let connecting = Task { try await client.connect() }
        await store.reached.wait()
        // The server sends no PING while AUTHENTICATE waits on its database: more than two of
        // the idle timeouts WELCOME announced pass in silence before the answer.
        try await Task.sleep(for: .milliseconds(2_500))
        await store.release.open()
        let session = try await connecting.value
        #expect(!session.playerID.isEmpty)
        #expect(await store.lookups == 1, "one attempt: the client did not give up on the connection and try again")
        _ = try await client.createMatch()
        await client.close()
        await server.stop()
    }
}

/// Holds every device lookup (the start of a device login) until `release` opens; `reached`
/// opens at the first, and `lookups` counts them.
private final class HeldDeviceLookupStore: ForwardingGameStore, Sendable {
    let inner: any GameStore = InMemoryGameStore()
    let reached = Gate()
    let release = Gate()
    private let count = Counter()

    var lookups: Int { get async { await self.count.value } }

    func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? {
        await self.count.increment()
        await self.reached.open()
        await self.release.wait()
        return try await self.inner.deviceIdentity(deviceID: deviceID)
    }

    private actor Counter {
        var value = 0
        func increment() { self.value += 1 }
    }
}
