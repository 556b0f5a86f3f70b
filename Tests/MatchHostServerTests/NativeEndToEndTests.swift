import Logging
import MatchHostCore
import MatchHostProcessTesting
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// The idle timeout of the test servers unless a test sets its own: `TestNativeConnection` and
/// `TestCatRaceClient` answer no PING, and a test of the whole suite on two loaded cores can
/// leave a connection silent for longer than the default 15 s, which then closes it mid-test.
let quietClientIdleTimeout: TimeAmount = .seconds(300)

/// A native listener on 127.0.0.1, port 0, for one test.
struct RunningNativeServer {
    let listener: NativeListener
    let group: MultiThreadedEventLoopGroup
    let configuration: ServerConfiguration
    var port: Int { self.listener.localAddress.port! }

    static func start(
        logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
        _ configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> RunningNativeServer {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.maxMessageRate = 100_000
        configuration.idleTimeout = quietClientIdleTimeout
        configure(&configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let listener = try await NativeListener.bind(configuration: configuration, group: group, logger: logger)
        return RunningNativeServer(listener: listener, group: group, configuration: configuration)
    }

    /// - Parameter local: the address to connect from (another 127.x address is another network).
    func login(_ device: String, secret: String = "", from local: String? = nil) async throws -> (TestNativeConnection, NativeAuthenticated) {
        try await TestNativeConnection.login(port: self.port, group: self.group, device: device, secret: secret, from: local)
    }

    func connect(from local: String? = nil) async throws -> TestNativeConnection {
        try await TestNativeConnection.connect(port: self.port, group: self.group, from: local)
    }

    func handshake(gameID: String = "matchhost") async throws -> TestNativeConnection {
        try await TestNativeConnection.handshake(port: self.port, group: self.group, gameID: gameID)
    }

    /// Waits until the server counts at most `count` open connections (a close reaches it
    /// after the client's returns).
    func waitForConnections(atMost count: Int) async throws {
        let deadline = NIODeadline.now() + .seconds(10)
        while try await self.listener.counts().connections > count, NIODeadline.now() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func stop() async throws {
        await self.listener.close()
        try await self.group.shutdownGracefully()
    }
}

extension Result where Success == NativeResponse {
    var joined: NativeMatchInfo? {
        if case .success(.matchJoined(let info)) = self { return info }
        return nil
    }

    var party: NativePartyInfo? {
        if case .success(.party(let info)) = self { return info }
        return nil
    }
}

/// Creates a relay match for `a` and seats `b` in it; both see the other.
private func relayPair(
    _ a: TestNativeConnection, _ b: TestNativeConnection, bPlayer: String
) async throws -> MatchIdentifier {
    let created = try #require(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 0, label: "pair"))).joined)
    let joined = try #require(try await b.response(to: try await b.request(.joinMatch(created.matchID))).joined)
    #expect(joined.players.count == 2)
    #expect(try await a.nextMessage() == .presence(matchID: created.matchID, playerID: bPlayer, change: .joined, reason: .none))
    return created.matchID
}

private func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

extension NativeFrame {
    /// Whether this is ACK, PING or PONG, which may come between any two messages.
    fileprivate var isAckOrPing: Bool {
        switch self {
        case .ack, .ping, .pong: return true
        default: return false
        }
    }
}

@Suite struct NativeHandshakeTests {
    @Test func wrongVersionAndWrongGameAreRefusedWithTheirCodes() async throws {
        let server = try await RunningNativeServer.start()
        let old = try await server.connect()
        try await old.send(.hello(version: 2, gameID: "matchhost"))
        #expect(try await old.closingError().code == .unsupportedVersion)

        let other = try await server.connect()
        try await other.send(.hello(version: 1, gameID: "someone-elses-game"))
        #expect(try await other.closingError().code == .unknownGame)

        let early = try await server.connect()
        try await early.send(.ping(1))
        #expect(try await early.closingError().code == .badMessage)

        let anonymous = try await server.handshake()
        try await anonymous.send(.reliable(sequence: 1, ack: 0, message: NativeClientMessage.request(id: 1, .leaveMatch(1)).encoded()))
        #expect(try await anonymous.closingError().code == .notAuthenticated)
        try await server.stop()
    }

    @Test func aDeviceGetsTheSamePlayerBackOnlyWithItsSecret() async throws {
        let server = try await RunningNativeServer.start()
        let (first, issued) = try await server.login("device-A")
        #expect(issued.playerID.count == 32)
        #expect(issued.deviceSecret.count == 64)
        await first.close()

        let (_, again) = try await server.login("device-A", secret: issued.deviceSecret)
        #expect(again.playerID == issued.playerID)
        #expect(again.deviceSecret.isEmpty)
        #expect(again.sessionID != issued.sessionID)

        let thief = try await server.handshake()
        try await thief.send(.authenticate(.device(id: "device-A", secret: String(repeating: "0", count: 64))))
        #expect(try await thief.closingError().code == .authenticationFailed)
        let noSecret = try await server.handshake()
        try await noSecret.send(.authenticate(.device(id: "device-A", secret: "")))
        #expect(try await noSecret.closingError().code == .authenticationFailed)
        try await server.stop()
    }

    @Test func aDeviceThatChoseItsSecretCanRetryAFirstContactWhoseAnswerItLost() async throws {
        let server = try await RunningNativeServer.start()
        let secret = String(repeating: "7c", count: 16)  // 32 bytes: the shortest taken
        // The first contact whose AUTHENTICATED never arrives: the client is gone before it.
        let lost = try await server.handshake()
        try await lost.send(.authenticate(.device(id: "chosen-device", secret: secret)))
        await lost.close()
        // The retry with the same credentials is that device, whether the first one got in or not.
        let (_, first) = try await server.login("chosen-device", secret: secret)
        #expect(first.deviceSecret.isEmpty, "nothing to issue: the client has its secret")
        let (_, again) = try await server.login("chosen-device", secret: secret)
        #expect(again.playerID == first.playerID)
        let thief = try await server.handshake()
        try await thief.send(.authenticate(.device(id: "chosen-device", secret: String(repeating: "0", count: 32))))
        #expect(try await thief.closingError().code == .authenticationFailed)
        // Too short a secret to choose for a new device, and a wrong short one for a known
        // device, get the same refusal: it does not tell which device ids are taken.
        let weak = try await server.handshake()
        try await weak.send(.authenticate(.device(id: "weak-device", secret: String(repeating: "a", count: 31))))
        let refusal = try await weak.closingError()
        #expect(refusal.code == .authenticationFailed)
        #expect(refusal.message.contains("at least 32 bytes"))
        let prober = try await server.handshake()
        try await prober.send(.authenticate(.device(id: "chosen-device", secret: String(repeating: "a", count: 31))))
        #expect(try await prober.closingError() == refusal)
        try await server.stop()
    }

    @Test func twoFirstContactsWithTheSameChosenSecretAtOnceGetTheSamePlayer() async throws {
        let server = try await RunningNativeServer.start()
        let secret = String(repeating: "5e", count: 20)
        let connections = [try await server.handshake(), try await server.handshake()]
        for connection in connections {
            try await connection.send(.authenticate(.device(id: "twice-device", secret: secret)))
        }
        var players: [String] = []
        for connection in connections {
            // The later session replaces the earlier; each got AUTHENTICATED first.
            guard case .authenticated(let authenticated) = try await connection.next() else { throw TestClientError.unexpected("refused") }
            players.append(authenticated.playerID)
        }
        #expect(players[0] == players[1])
        try await server.stop()
    }

    @Test func deviceIdentitiesAreStoredSoAnotherServerOnTheSameStoreKnowsThem() async throws {
        let store = InMemoryGameStore()
        let first = try await RunningNativeServer.start { $0.store = store }
        let (_, issued) = try await first.login("stored-device")
        // AUTHENTICATED came after the commit: the player and its device are there already.
        let identity = try #require(await store.deviceIdentity(deviceID: "stored-device"))
        #expect(identity.playerID == issued.playerID)
        // Only a 32-byte hash of the secret is kept, never the secret.
        #expect(identity.secretHash.count == 32)
        #expect(hexEncoded(identity.secretHash) != issued.deviceSecret)
        let created = try #require(await store.player(id: issued.playerID))
        #expect(created.alias == String(issued.playerID.prefix(8)))
        try await first.stop()

        let second = try await RunningNativeServer.start { $0.store = store }
        let (_, again) = try await second.login("stored-device", secret: issued.deviceSecret)
        #expect(again.playerID == issued.playerID)
        #expect(again.deviceSecret.isEmpty)
        let thief = try await second.handshake()
        try await thief.send(.authenticate(.device(id: "stored-device", secret: String(repeating: "0", count: 64))))
        #expect(try await thief.closingError().code == .authenticationFailed)
        try await second.stop()  // waits for the last-seen write
        let seen = try #require(await store.player(id: issued.playerID))
        #expect(seen.lastSeenAt > created.lastSeenAt)
        #expect(seen.createdAt == created.createdAt)
    }

    @Test func framesSentRightAfterAuthenticateWaitForItsAnswer() async throws {
        let server = try await RunningNativeServer.start()
        let connection = try await server.handshake()
        var pipelined = NativeFrame.authenticate(.device(id: "pipelined", secret: "")).encodedFrame()
        pipelined.writeImmutableBuffer(
            NativeFrame.reliable(sequence: 1, ack: 0, message: NativeClientMessage.request(id: 1, .leaveMatch(7)).encoded())
                .encodedFrame())
        try await connection.sendRaw(Array(pipelined.readableBytesView))
        guard case .authenticated = try await connection.next() else { Issue.record("expected AUTHENTICATED first"); return }
        guard case .requestError(1, let error) = try await connection.nextMessage() else {
            Issue.record("expected the request's answer after AUTHENTICATED")
            return
        }
        #expect(error.code == .notInMatch)
        try await server.stop()
    }

    @Test func aStoreThatFailsRefusesDevicesWithStorageFailedButTokensStillWork() async throws {
        let key = [UInt8](repeating: 9, count: 32)
        let working = try await RunningNativeServer.start { $0.tokenSigningKey = key }
        let (_, issued) = try await working.login("before-the-failure")
        try await working.stop()

        let failing = try await RunningNativeServer.start {
            $0.tokenSigningKey = key
            $0.store = FailingGameStore()
        }
        let device = try await failing.handshake()
        try await device.send(.authenticate(.device(id: "during-the-failure", secret: "")))
        let refused = try await device.closingError()
        #expect(refused.code == .storageFailed)
        // What failed inside is the operator's to read in the log, not the client's.
        #expect(refused.message == "the server could not read or write its database; try again later")
        #expect(!refused.message.contains("disk on fire"))
        let withToken = try await failing.handshake()
        try await withToken.send(.authenticate(.token(issued.sessionToken)))
        guard case .authenticated(let byToken) = try await withToken.next() else { Issue.record("no AUTHENTICATED"); return }
        #expect(byToken.playerID == issued.playerID)
        try await failing.stop()
    }

    @Test func sessionTokensAuthenticateUntilAlteredOrExpired() async throws {
        let key = [UInt8](repeating: 7, count: 32)
        let server = try await RunningNativeServer.start { $0.tokenSigningKey = key }
        let (_, issued) = try await server.login("device-T")

        let withToken = try await server.handshake()
        try await withToken.send(.authenticate(.token(issued.sessionToken)))
        guard case .authenticated(let byToken) = try await withToken.next() else { Issue.record("no AUTHENTICATED"); return }
        #expect(byToken.playerID == issued.playerID)

        // Change one character of the player id: the signature no longer matches.
        var altered = Array(issued.sessionToken)
        altered[2] = altered[2] == "a" ? "b" : "a"
        let tampered = try await server.handshake()
        try await tampered.send(.authenticate(.token(String(altered))))
        #expect(try await tampered.closingError().code == .tokenInvalid)

        let forged = try await server.handshake()
        let otherKey = SessionTokenSigner(key: [UInt8](repeating: 9, count: 32))
        try await forged.send(.authenticate(.token(otherKey.sign(playerID: issued.playerID, expiresAt: .max))))
        #expect(try await forged.closingError().code == .tokenInvalid)

        let expired = try await server.handshake()
        try await expired.send(.authenticate(.token(SessionTokenSigner(key: key).sign(playerID: issued.playerID, expiresAt: 1))))
        #expect(try await expired.closingError().code == .tokenExpired)

        let garbage = try await server.handshake()
        try await garbage.send(.authenticate(.token("not a token")))
        #expect(try await garbage.closingError().code == .tokenInvalid)
        try await server.stop()
    }

    @Test func authenticatingAgainReplacesThePlayersOlderSession() async throws {
        let server = try await RunningNativeServer.start()
        let (first, issued) = try await server.login("device-R")
        let (_, second) = try await server.login("device-R", secret: issued.deviceSecret)
        #expect(second.playerID == issued.playerID)
        #expect(try await first.closingError().code == .sessionReplaced)
        try await server.stop()
    }
}

@Suite struct NativeRelayTests {
    @Test func relayDeliversToAllOrChosenPlayersAndAnnouncesPresence() async throws {
        let server = try await RunningNativeServer.start()
        let (a, pa) = try await server.login("relay-a")
        let (b, pb) = try await server.login("relay-b")
        let (c, pc) = try await server.login("relay-c")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        #expect(try await c.response(to: try await c.request(.joinMatch(match))).joined?.players.map(\.playerID)
            == [pa.playerID, pb.playerID, pc.playerID])
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pc.playerID, change: .joined, reason: .none))
        #expect(try await b.nextMessage() == .presence(matchID: match, playerID: pc.playerID, change: .joined, reason: .none))

        try await a.sendReliable(.sendData(matchID: match, targets: [], payload: bytes("to all")))
        #expect(try await b.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: bytes("to all")))
        #expect(try await c.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: bytes("to all")))

        try await a.sendReliable(.sendData(matchID: match, targets: [pc.playerID], payload: bytes("to c")))
        #expect(try await c.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: bytes("to c")))
        #expect(try await b.drain() == [])

        // Unreliable data arrives in an UNRELIABLE frame.
        try await b.send(.unreliable(message: NativeClientMessage.sendData(matchID: match, targets: [pa.playerID], payload: bytes("fast")).encoded()))
        // Acknowledgements and the server's heartbeat PING (a slow run lasts past its interval)
        // may come first.
        var frame = try await a.next()
        while frame.isAckOrPing { frame = try await a.next() }
        guard case .unreliable(let message) = frame else { Issue.record("expected UNRELIABLE, got \(frame)"); return }
        #expect(try NativeServerMessage(message: message) == .matchData(matchID: match, sender: pb.playerID, payload: bytes("fast")))

        let left = try await c.request(.leaveMatch(match))
        #expect(try await c.response(to: left) == .success(.matchLeft(match)))
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pc.playerID, change: .left, reason: .asked))
        #expect(try await b.nextMessage() == .presence(matchID: match, playerID: pc.playerID, change: .left, reason: .asked))
        try await server.stop()
    }

    @Test func requestsThatCannotSucceedGetTheirErrorCodes() async throws {
        let server = try await RunningNativeServer.start { $0.maxMatchesPerPlayer = 1 }
        let (a, _) = try await server.login("err-a")
        let (b, pb) = try await server.login("err-b")
        let (c, _) = try await server.login("err-c")
        #expect(try await a.response(to: try await a.request(.createMatch(mode: "chess", maxPlayers: 0, label: ""))).failure?.code == .unknownMode)
        #expect(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 17, label: ""))).failure?.code == .badArgument)
        #expect(try await a.response(to: try await a.request(.joinMatch(999))).failure?.code == .noSuchMatch)
        let two = try #require(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 2, label: ""))).joined)
        #expect(try await a.response(to: try await a.request(.joinMatch(two.matchID))).failure?.code == .alreadyInMatch)
        #expect(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 2, label: ""))).failure?.code == .tooManyMatches)
        #expect(try await b.response(to: try await b.request(.joinMatch(two.matchID))).joined != nil)
        #expect(try await a.nextMessage() == .presence(matchID: two.matchID, playerID: pb.playerID, change: .joined, reason: .none))
        #expect(try await c.response(to: try await c.request(.joinMatch(two.matchID))).failure?.code == .matchFull)
        #expect(try await c.response(to: try await c.request(.leaveMatch(two.matchID))).failure?.code == .notInMatch)
        // A request kind this server does not know (a newer client's) is refused, not fatal.
        try await c.sendReliable(.unknownRequest(id: 4242, kind: 200))
        let unknown = try await c.response(to: 4242).failure
        #expect(unknown?.code == .unknownRequest)
        #expect(unknown?.message.contains("200") == true)
        #expect(try await c.response(to: try await c.request(.leaveMatch(two.matchID))).failure?.code == .notInMatch)
        try await server.stop()
    }
}

@Suite struct NativeJoinOrderTests {
    /// The match's event, if `message` is one of `matchID`'s.
    private func event(of matchID: MatchIdentifier, _ message: NativeServerMessage) -> ByteBuffer? {
        if case .matchEvent(matchID, let event) = message { return event }
        return nil
    }

    @Test func aJoinerGetsItsJoinAnswerBeforeAnyEventOfTheMatchAndOneState() async throws {
        let server = try await RunningNativeServer.start()
        let (a, _) = try await server.login("order-a")
        let (b, pb) = try await server.login("order-b")
        let created = try #require(
            try await a.response(to: try await a.request(.createMatch(mode: "disks", maxPlayers: 3, label: ""))).joined)
        let state = try #require(self.event(of: created.matchID, try await a.nextMessage()))
        guard case .state(let disks) = try DisksServerMessage(body: state) else { throw TestClientError.unexpected("not STATE") }
        #expect(disks.phase == .waiting)
        #expect(try await a.drain().isEmpty, "one STATE, not a second after MATCH_JOINED")

        // The second player starts play: its STATE comes after its MATCH_JOINED too.
        let joined = try await b.response(to: try await b.request(.joinMatch(created.matchID))).joined
        #expect(joined?.players.count == 2)
        let first = try #require(self.event(of: created.matchID, try await b.nextMessage()))
        guard case .state(let playing) = try DisksServerMessage(body: first) else { throw TestClientError.unexpected("not STATE") }
        #expect(playing.scores.map(\.playerID).last == pb.playerID)
        try await server.stop()
    }

    @Test func sendDataToAGameThatTakesOnlyMatchInputIsDroppedAndSaidSo() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test") { _ in
            var handler = RecordingLogHandler(lines: lines)
            handler.logLevel = .debug
            return handler
        }
        let server = try await RunningNativeServer.start(logger: logger)
        let (a, _) = try await server.login("data-a")
        let (b, _) = try await server.login("data-b")
        let created = try #require(
            try await a.response(to: try await a.request(.createMatch(mode: "disks", maxPlayers: 3, label: ""))).joined)
        _ = try await a.nextMessage()  // its STATE
        #expect(try await b.response(to: try await b.request(.joinMatch(created.matchID))).joined != nil)
        _ = try await a.drain()
        try await b.sendReliable(.sendData(matchID: created.matchID, targets: [], payload: ByteBuffer(string: "hi")))
        _ = try await b.drain()
        #expect(try await a.drain().allSatisfy { if case .matchData = $0 { false } else { true } })
        #expect(lines.all.contains { $0.hasPrefix("debug data the match does not take dropped") && $0.contains("mode=disks") })
        try await server.stop()
    }

    @Test func theMatchmakerKeepsPlayersWithinTheirMatchLimitAndAQueuedTicketCountsAsAMatch() async throws {
        let server = try await RunningNativeServer.start {
            $0.matchmakerInterval = .milliseconds(20)
            $0.maxMatchesPerPlayer = 2
        }
        let (a, _) = try await server.login("limit-mm-a")
        let (b, _) = try await server.login("limit-mm-b")
        let relay = NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2)
        // Twice matched into a relay match (which never ends while seated): each is in two.
        for _ in 0..<2 {
            for player in [a, b] {
                guard case .success(.ticketQueued) = try await player.ask(.matchmake(relay)) else {
                    throw TestClientError.unexpected("MATCHMAKE not queued")
                }
            }
            for player in [a, b] {
                _ = try await player.nextMessage(matching: "MATCHMAKER_MATCHED") {
                    if case .matchmakerMatched = $0 { true } else { false }
                }
            }
        }
        // A third ticket would make a third match.
        #expect(try await a.ask(.matchmake(relay)).failure?.code == .tooManyMatches)
        #expect(try await server.listener.counts().matches == 2)

        // A player waiting in the queue holds a match to come: it may not fill its last seat meanwhile.
        let (c, _) = try await server.login("limit-mm-c")
        let first = try #require(try await c.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
        #expect(first.matchID > 0)
        guard case .success(.ticketQueued) = try await c.ask(.matchmake(relay)) else {
            throw TestClientError.unexpected("MATCHMAKE not queued")
        }
        #expect(try await c.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).failure?.code == .tooManyMatches)
        try await server.stop()
    }

    @Test func matchedPlayersHearMatchmakerMatchedBeforeTheOthersArriveOrTheGameStarts() async throws {
        let server = try await RunningNativeServer.start { $0.matchmakerInterval = .milliseconds(20) }
        let (a, pa) = try await server.login("order-mm-a")
        let (b, pb) = try await server.login("order-mm-b")
        let ticket = NativeTicketRequest(mode: "fourinarow", minPlayers: 2, maxPlayers: 2)
        for player in [a, b] {
            guard case .success(.ticketQueued) = try await player.response(to: try await player.request(.matchmake(ticket))) else {
                throw TestClientError.unexpected("MATCHMAKE not queued")
            }
        }
        var matchIDs: [MatchIdentifier] = []
        for (player, other) in [(a, pb.playerID), (b, pa.playerID)] {
            guard case .matchmakerMatched(_, let match) = try await player.nextMessage(timeout: .seconds(10)) else {
                throw TestClientError.unexpected("the match's events came before MATCHMAKER_MATCHED")
            }
            #expect(match.players.contains { $0.playerID == other })
            matchIDs.append(match.matchID)
        }
        let matchID = try #require(matchIDs.first)
        #expect(matchIDs == [matchID, matchID])
        // Then the match, in the order it happened: the first seated got its STATE as it sat
        // down, then saw the second arrive, then play began (STATE for both).
        func state(_ message: NativeServerMessage) throws -> FourInARowSnapshot? {
            guard let body = self.event(of: matchID, message), case .state(let state) = try FourInARowServerMessage(body: body) else {
                return nil
            }
            return state
        }
        let seen = [try await a.nextMessage(), try await a.nextMessage(), try await a.nextMessage(), try await b.nextMessage()]
        #expect(try state(seen[0])?.phase == .waiting)
        #expect(seen[1] == .presence(matchID: matchID, playerID: pb.playerID, change: .joined, reason: .none))
        #expect(try state(seen[2])?.phase == .playing)
        #expect(try state(seen[3])?.phase == .playing)
        let extra = (try await a.drain(), try await b.drain())
        #expect(extra.0.isEmpty && extra.1.isEmpty)
        try await server.stop()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

@Suite struct NativeSessionTests {
    @Test func aResumedSessionGetsWhatItMissedExactlyOnceAndOthersSeeItGoAndCome() async throws {
        let server = try await RunningNativeServer.start()
        let (a, pa) = try await server.login("resume-a")
        let (b, pb) = try await server.login("resume-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        try await a.sendReliable(.sendData(matchID: match, targets: [], payload: bytes("before")))
        #expect(try await b.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: bytes("before")))

        // b's connection drops without GOODBYE; a sees it go, and keeps sending.
        await b.close()
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .disconnected, reason: .none))
        for index in 1...5 {
            try await a.sendReliable(.sendData(matchID: match, targets: [], payload: bytes("missed \(index)")))
        }
        #expect(try await a.drain() == [])

        let back = try await server.handshake()
        back.continueSequences(from: b)
        try await back.send(.resume(sessionID: pb.sessionID, resumeToken: pb.resumeToken, lastReceived: b.lastReceived))
        let frame = try await back.next()
        guard case .resumed(let serverReceived) = frame else { Issue.record("expected RESUMED, got \(frame)"); return }
        #expect(serverReceived == 1)  // b sent one reliable message: its JOIN_MATCH
        for index in 1...5 {
            #expect(try await back.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: bytes("missed \(index)")))
        }
        #expect(try await back.drain() == [])
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .reconnected, reason: .none))

        // The resumed session goes on numbering where it stood.
        try await back.sendReliable(.sendData(matchID: match, targets: [], payload: bytes("after")))
        #expect(try await a.nextMessage() == .matchData(matchID: match, sender: pb.playerID, payload: bytes("after")))

        // A resend of a frame the server already handled is dropped, not handled twice.
        try await back.send(.reliable(sequence: 1, ack: 0, message: NativeClientMessage.sendData(matchID: match, targets: [], payload: bytes("dup")).encoded()))
        #expect(try await a.drain() == [])
        try await server.stop()
    }

    @Test func aPlayerWhoGetsNothingBackIsStillAcknowledged() async throws {
        let server = try await RunningNativeServer.start()
        let (a, _) = try await server.login("ack-a")
        let created = try #require(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 2, label: ""))).joined)
        // Alone in the match: the data goes nowhere and no RELIABLE frame comes back to carry
        // the acknowledgement, so a standalone ACK does.
        try await a.sendReliable(.sendData(matchID: created.matchID, targets: [], payload: bytes("echo?")))
        var frame = try await a.next()
        while case .ping = frame { frame = try await a.next() }
        #expect(frame == .ack(2))
        try await server.stop()
    }

    @Test func resumeNeedsTheResumeTokenAndKnowingTheSessionIdIsNotEnough() async throws {
        let server = try await RunningNativeServer.start()
        let (a, pa) = try await server.login("victim")
        let thief = try await server.handshake()
        try await thief.send(.resume(sessionID: pa.sessionID, resumeToken: String(repeating: "f", count: 64), lastReceived: 0))
        #expect(try await thief.closingError().code == .resumeRefused)
        // The victim's session is untouched.
        #expect(try await a.drain() == [])

        let lost = try await server.handshake()
        try await lost.send(.resume(sessionID: "0123456789abcdef0123456789abcdef", resumeToken: pa.resumeToken, lastReceived: 0))
        #expect(try await lost.closingError().code == .sessionNotFound)

        // Resuming while the old connection is still open replaces it.
        let newer = try await server.handshake()
        try await newer.send(.resume(sessionID: pa.sessionID, resumeToken: pa.resumeToken, lastReceived: 0))
        guard case .resumed = try await newer.next() else { Issue.record("expected RESUMED"); return }
        #expect(try await a.closingError().code == .sessionReplaced)
        try await server.stop()
    }

    @Test func afterTheGracePeriodTheSessionIsGoneAndItsMatchesSawTheLeave() async throws {
        let server = try await RunningNativeServer.start { $0.sessionGrace = .milliseconds(200) }
        let (a, _) = try await server.login("grace-a")
        let (b, pb) = try await server.login("grace-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        await b.close()
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .disconnected, reason: .none))
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .left, reason: .sessionEnded))
        let late = try await server.handshake()
        try await late.send(.resume(sessionID: pb.sessionID, resumeToken: pb.resumeToken, lastReceived: 0))
        #expect(try await late.closingError().code == .sessionNotFound)
        try await server.stop()
    }

    @Test func goodbyeEndsTheSessionAtOnce() async throws {
        let server = try await RunningNativeServer.start()
        let (a, _) = try await server.login("bye-a")
        let (b, pb) = try await server.login("bye-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        try await b.send(.goodbye)
        try await b.waitUntilClosed()
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .left, reason: .sessionEnded))
        try await server.stop()
    }

    @Test func aPlayerWhoNeverAcknowledgesLosesTheSessionAtTheBacklogBound() async throws {
        let server = try await RunningNativeServer.start { $0.maxBacklogBytes = 4096 }
        let (a, _) = try await server.login("backlog-a")
        let (b, pb) = try await server.login("backlog-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        // b never acknowledges (it sends nothing); a floods it.
        let payload = ByteBuffer(repeating: 1, count: 500)
        for _ in 0..<12 {
            try await a.sendReliable(.sendData(matchID: match, targets: [], payload: payload))
        }
        #expect(try await b.closingError().code == .backlogExceeded)
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .left, reason: .sessionEnded))
        try await server.stop()
    }

    @Test func sequenceGapsAndAcksOfUnsentMessagesCloseTheConnection() async throws {
        let server = try await RunningNativeServer.start()
        let (gap, _) = try await server.login("seq-gap")
        try await gap.send(.reliable(sequence: 5, ack: 0, message: NativeClientMessage.request(id: 1, .leaveMatch(1)).encoded()))
        #expect(try await gap.closingError().code == .sequenceError)
        let (ack, _) = try await server.login("seq-ack")
        try await ack.send(.ack(10))
        #expect(try await ack.closingError().code == .sequenceError)
        try await server.stop()
    }
}

@Suite struct NativeTimeoutTests {
    @Test func aSilentClientIsPingedThenDroppedAndOneThatNeverFinishesTheHandshakeToo() async throws {
        let server = try await RunningNativeServer.start {
            // Short enough for a quick test, long enough for a login (it is also the handshake
            // timeout) on a loaded machine: the whole suite shares two cores.
            $0.heartbeatInterval = .milliseconds(100)
            $0.idleTimeout = .milliseconds(3_000)
        }
        let (silent, _) = try await server.login("silent")
        guard case .ping = try await silent.next() else { Issue.record("expected the server's PING"); return }
        #expect(try await silent.closingError().code == .idleTimeout)

        let mute = try await server.connect()
        #expect(try await mute.closingError().code == .handshakeTimeout)
        try await server.stop()
    }

    /// Slowloris: a frame sent a byte at a time holds the connection only as long as silence
    /// would. Before authentication the handshake is timed from the connect; after it, silence
    /// is counted from the last whole frame.
    @Test(arguments: [false, true])
    func aFrameTrickledAByteAtATimeIsNoActivity(authenticated: Bool) async throws {
        let server = try await RunningNativeServer.start {
            $0.heartbeatInterval = .milliseconds(100)
            // Also the handshake timeout: room for a login on a machine the whole suite loads
            // (at 1.5 s one was once cut off before its AUTHENTICATE went out).
            $0.idleTimeout = .milliseconds(3_000)
        }
        let connection = authenticated ? try await server.login("trickler").0 : try await server.connect()
        // A frame of 256 bytes begins. On a machine busy enough to hold this test past the
        // timeout already, the server has closed: the write fails, and the close is the same.
        try? await connection.sendRaw([0, 0, 1, 0])
        // Ten seconds of bytes, more than three times the timeout.
        let trickle = trickleBytes(limit: 100, through: connection.sendRaw)
        #expect(try await connection.closingError().code == (authenticated ? .idleTimeout : .handshakeTimeout))
        trickle.cancel()
        #expect(await trickle.value < 100, "closed while the client was still trickling")
        try await server.stop()
    }

    /// An honest client on a slow link uploading a large frame (its PONGs wait behind it) is
    /// not idle: each KiB of the frame counts.
    @Test func aLargeFrameSentSlowlyKeepsItsConnection() async throws {
        let server = try await RunningNativeServer.start {
            $0.heartbeatInterval = .milliseconds(100)
            // Fifteen times the gap between chunks: a loaded machine may delay one a lot.
            $0.idleTimeout = .milliseconds(3_000)
        }
        let (client, _) = try await server.login("slow-uploader")
        let value = ByteBuffer(repeating: 7, count: 16 * 1024)
        let message = NativeClientMessage.request(id: 1, .writeValue(key: "save", value: value)).encoded()
        let frame = Array(NativeFrame.unreliable(message: message).encodedFrame().readableBytesView)
        // 1 KiB every 200 ms: about 3.4 s for the frame, longer than the idle timeout.
        for start in stride(from: 0, to: frame.count, by: 1024) {
            try await client.sendRaw(Array(frame[start..<min(frame.count, start + 1024)]))
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try await client.response(to: 1) == .success(.done))
        try await server.stop()
    }

    @Test func answeringPingsKeepsAQuietConnectionOpen() async throws {
        let server = try await RunningNativeServer.start {
            $0.heartbeatInterval = .milliseconds(100)
            // Room for a loaded machine: the whole suite, benchmarks included, shares two cores
            // (at 1.5 s a CI run once closed the connection during the login).
            $0.idleTimeout = .milliseconds(3_000)
        }
        let (client, _) = try await server.login("polite")
        // Sixty pings answered: twice the idle timeout, and still open.
        for _ in 0..<60 {
            guard case .ping(let value) = try await client.next() else { Issue.record("expected PING"); return }
            try await client.send(.pong(value))
        }
        #expect(try await client.drain() == [])
        try await server.stop()
    }

    @Test func theConfiguredPlayerLimitBoundsMatchSizes() async throws {
        let server = try await RunningNativeServer.start { $0.maxPlayersPerMatch = 4 }
        let (a, _) = try await server.login("limit-a")
        #expect(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 5, label: ""))).failure?.code == .badArgument)
        #expect(try await a.response(to: try await a.request(.createMatch(mode: "relay", maxPlayers: 0, label: ""))).joined?.capacity == 4)
        try await server.stop()
    }
}

@Suite struct NativeRateLimitTests {
    @Test func aClientOverTheMessageRateIsReadMoreSlowlyNotClosed() async throws {
        // A one-second burst of 10: however full it was, the 30th request waits until 29 are
        // paid for, 19 over the burst at 10 a second: at least 1.9 s.
        let server = try await RunningNativeServer.start { $0.maxMessageRate = 10 }
        let (client, _) = try await server.login("rate-slowed")
        let start = NIODeadline.now()
        try await client.sendReliable(Array(repeating: .request(id: 0, .leaveMatch(7)), count: 30))
        for _ in 0..<30 { #expect(try await client.nextMessage(timeout: .seconds(10)).isRequestError) }
        #expect(NIODeadline.now() - start >= .milliseconds(1_500))
        #expect(try await client.drain() == [], "still open")
        try await server.stop()
    }

    @Test func wrongInviteCodesAndPartyIdsUseUpTheNetworksGuessesThenEveryJoinByCodeIsRefused() async throws {
        let server = try await RunningNativeServer.start { $0.maxFailedJoinsPerMinute = 3 }
        let (host, _) = try await server.login("guess-host", from: "127.0.0.2")
        var codes: [String] = []
        for _ in 0..<5 {
            let created = try await host.response(to: try await host.request(.createMatch(mode: "relay", maxPlayers: 4, label: "", isPrivate: true)))
            codes.append(try #require(created.joined?.inviteCode))
        }
        let info = try #require(try await host.response(to: try await host.request(.createParty(maxSize: 0))).party)

        let (guesser, _) = try await server.login("guesser")
        // Right codes cost nothing: four, over the allowance of three, all join.
        for code in codes.prefix(4) {
            #expect(try await guesser.response(to: try await guesser.request(.joinByCode(code.lowercased()))).joined != nil)
        }
        #expect(try await guesser.response(to: try await guesser.request(.joinByCode("ZZZZZZZZ"))).failure?.code == .noSuchMatch)
        #expect(try await guesser.response(to: try await guesser.request(.joinParty("NOPARTY2"))).failure?.code == .noSuchParty)
        #expect(try await guesser.response(to: try await guesser.request(.joinByCode("YYYYYYYY"))).failure?.code == .noSuchMatch)
        // Out of guesses: a right code and a right party are refused too, unlooked-at.
        #expect(try await guesser.response(to: try await guesser.request(.joinByCode(codes[4]))).failure?.code == .rateLimited)
        #expect(try await guesser.response(to: try await guesser.request(.joinParty(info.partyID))).failure?.code == .rateLimited)
        // The session goes on, and another player on the guesser's network is refused as well...
        let (neighbour, _) = try await server.login("guess-neighbour")
        #expect(try await neighbour.response(to: try await neighbour.request(.joinByCode(codes[4]))).failure?.code == .rateLimited)
        // ...while one on another network joins.
        let (friend, _) = try await server.login("guess-friend", from: "127.0.0.3")
        #expect(try await friend.response(to: try await friend.request(.joinByCode(codes[4]))).joined != nil)
        #expect(try await friend.response(to: try await friend.request(.joinParty(info.partyID))).party != nil)
        try await server.stop()
    }

    @Test func aNetworkWritesAtMostItsValueBytesAMinute() async throws {
        let server = try await RunningNativeServer.start { $0.maxValueBytesPerMinute = 1_000 }
        let (writer, _) = try await server.login("values-writer")
        let value = ByteBuffer(repeating: 1, count: 599)
        #expect(try await writer.response(to: try await writer.request(.writeValue(key: "a", value: value))) == .success(.done))
        #expect(try await writer.response(to: try await writer.request(.writeValue(key: "b", value: value))).failure?.code == .rateLimited)
        // The budget is the network's: another player on it is refused too; deleting is not.
        let (neighbour, _) = try await server.login("values-neighbour")
        #expect(try await neighbour.response(to: try await neighbour.request(.writeValue(key: "c", value: value))).failure?.code == .rateLimited)
        #expect(try await writer.response(to: try await writer.request(.deleteValue(key: "a"))) == .success(.done))
        let (elsewhere, _) = try await server.login("values-elsewhere", from: "127.0.0.2")
        #expect(try await elsewhere.response(to: try await elsewhere.request(.writeValue(key: "d", value: value))) == .success(.done))
        #expect(try await elsewhere.response(to: try await elsewhere.request(.readValue(key: "d"))) == .success(.value(key: "d", value: value)))
        try await server.stop()
    }

    @Test func aFrameLargerThanASecondOfTheByteRateStillPasses() async throws {
        // The burst is one largest frame (4 KiB), four seconds of the rate.
        let server = try await RunningNativeServer.start {
            $0.maxInboundBytesPerSecond = 1_000
            $0.maxFrameBytes = 4 * 1024
        }
        let (a, pa) = try await server.login("big-a")
        let (b, pb) = try await server.login("big-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        let payload = ByteBuffer(repeating: 9, count: 3_500)
        try await a.sendReliable(.sendData(matchID: match, targets: [], payload: payload))
        #expect(try await b.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: payload))
        try await server.stop()
    }

    @Test func aSenderOverTheByteRateIsReadMoreSlowlyAndEverythingArrives() async throws {
        // A burst of 8 KiB (one second's worth, more than one 4 KiB frame).
        let server = try await RunningNativeServer.start {
            $0.maxInboundBytesPerSecond = 8 * 1024
            $0.maxFrameBytes = 4 * 1024
        }
        let (a, pa) = try await server.login("bytes-a")
        let (b, pb) = try await server.login("bytes-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        let payload = ByteBuffer(repeating: 7, count: 3_000)
        // Two frames of about 3 KB fit in what the handshake and the match left of the burst.
        for _ in 0..<2 { try await a.sendReliable(.sendData(matchID: match, targets: [], payload: payload)) }
        for _ in 0..<2 { #expect(try await b.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: payload)) }
        // Six more in one write, 18 KB. Not closed: the server reads them as the allowance
        // refills. However full the bucket was when they came (8 KiB at most), the sixth waits
        // until five, 15 KB, are paid for: at least 0.85 s.
        let start = NIODeadline.now()
        try await a.sendReliable(Array(repeating: .sendData(matchID: match, targets: [], payload: payload), count: 6))
        for _ in 0..<6 {
            #expect(try await b.nextMessage(timeout: .seconds(10)) == .matchData(matchID: match, sender: pa.playerID, payload: payload))
        }
        #expect(NIODeadline.now() - start >= .milliseconds(800))
        #expect(try await a.drain() == [], "still open")
        #expect(try await b.drain() == [])
        try await server.stop()
    }

    @Test func aConnectionPacedLongAfterItsHandshakeIsNotTakenForAHandshakeTimeout() async throws {
        // Heartbeats every 50 ms look at a connection that stays paced until long after its
        // connection is older than the idle timeout: a pause in reading, not an unfinished
        // handshake, and not idleness (each frame is read as the allowance refills). The idle
        // timeout leaves room for a loaded machine's slow login; the bytes then take twice it.
        let server = try await RunningNativeServer.start {
            $0.idleTimeout = .seconds(3)
            $0.heartbeatInterval = .milliseconds(50)
            $0.maxInboundBytesPerSecond = 4 * 1024
            $0.maxFrameBytes = 4 * 1024
        }
        let (a, _) = try await server.login("paced-old")
        // About six seconds of the byte rate past its burst, in one write (to no match: the
        // data is dropped once read, but read it is, at the rate).
        let payload = ByteBuffer(repeating: 7, count: 3_000)
        let start = NIODeadline.now()
        try await a.sendReliable(Array(repeating: .sendData(matchID: 4242, targets: [], payload: payload), count: 10))
        #expect(try await a.drain(timeout: .seconds(30)) == [], "still open once everything was read")
        #expect(NIODeadline.now() - start >= .milliseconds(4_500), "paced past the idle timeout")
        try await server.stop()
    }
}

extension NativeServerMessage {
    var isRequestError: Bool {
        if case .requestError = self { return true }
        return false
    }

    /// Whether this is MATCH_ENDED for `match`.
    func isMatchEnded(_ match: MatchIdentifier) -> Bool {
        if case .matchEnded(match, _) = self { return true }
        return false
    }
}

@Suite struct NativeBadInputTests {
    enum BadInput: String, CaseIterable {
        case hugeLength, overMaximum, truncatedString, unknownFrameKind, serverOnlyFrame, unknownMessageType, randomBytes

        var bytes: [UInt8] {
            switch self {
            case .hugeLength: return [0x7f, 0xff, 0xff, 0xff, 0x0b]
            case .overMaximum: return [0, 1, 0, 1] + [UInt8](repeating: 0x0b, count: 16)
            case .truncatedString: return [0, 0, 0, 5, 0x01, 0, 1, 0, 200]
            case .unknownFrameKind: return [0, 0, 0, 1, 0x7e]
            case .serverOnlyFrame: return [0, 0, 0, 3, 0x06, 0, 0]
            case .unknownMessageType: return [0, 0, 0, 18, 0x0b] + [UInt8](repeating: 0, count: 7) + [1] + [UInt8](repeating: 0, count: 8) + [0x99]
            case .randomBytes:
                var generator = SplitMix(seed: 42)
                return (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
        }

        var code: NativeErrorCode {
            switch self {
            case .hugeLength, .overMaximum: return .frameTooLarge
            default: return .badMessage
            }
        }
    }

    @Test(arguments: BadInput.allCases)
    func badInputClosesOnlyItsOwnConnectionWithACode(input: BadInput) async throws {
        let server = try await RunningNativeServer.start { $0.maxFrameBytes = 1024 }
        let (a, pa) = try await server.login("bad-a")
        let (b, pb) = try await server.login("bad-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)

        let (bad, _) = try await server.login("bad-\(input.rawValue)")
        try await bad.sendRaw(input.bytes)
        if input == .randomBytes {
            // Random bytes may announce a long frame and wait for it: whatever they do, the
            // connection must end with an ERROR or a close, and the others play on.
            try? await bad.waitUntilClosed(timeout: .seconds(1))
        } else {
            #expect(try await bad.closingError().code == input.code)
        }
        try await a.sendReliable(.sendData(matchID: match, targets: [], payload: bytes("still here")))
        #expect(try await b.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: bytes("still here")))
        try await server.stop()
    }
}

@Suite struct NativeCloseLogTests {
    @Test func aClientThatDoesNotReadLosesItsConnectionAtTheOutboundBoundButKeepsItsSession() async throws {
        let log = LogLines()
        // The session's backlog is made large, so that the outbound buffer is the bound reached.
        let server = try await RunningNativeServer.start(logger: log.logger) {
            $0.maxOutboundBytes = 4096
            $0.maxBacklogBytes = 256 << 20
            $0.slowConsumerGrace = .milliseconds(50)
            $0.maxInboundBytesPerSecond = 1 << 30  // the sender floods on purpose
            // Filling the socket buffers can take long on a loaded machine (the victim, not
            // reading, answers no PING; the idle timeout is `quietClientIdleTimeout`): only the
            // bound may close it.
            $0.heartbeatInterval = .seconds(100)
        }
        let (victim, pv) = try await server.login("slow-victim")
        let (sender, ps) = try await server.login("slow-sender")
        let matchID = try await relayPair(victim, sender, bPlayer: ps.playerID)
        try await victim.channel.setOption(.autoRead, value: false).get()
        let payload = ByteBuffer(repeating: 0x55, count: 16_000)
        var closed = false
        for _ in 0..<200 where !closed {
            for _ in 0..<25 {
                try await sender.sendReliable(.sendData(matchID: matchID, targets: [], payload: payload))
            }
            closed = try await server.listener.counts().connections == 1
        }
        #expect(closed, "the server kept writing to a client that reads nothing")
        let counts = try await server.listener.counts()
        #expect(counts.sessions == 2, "only the connection went: the session waits for a resume")
        #expect(
            log.all.contains { $0.hasPrefix("warning closing connection") && $0.contains("reason=\(NativeErrorCode.slowConsumer)") },
            "\(log.all.filter { $0.contains("closing connection") })")
        // The sender was not held up, and saw the victim go away (not leave).
        #expect(try await sender.drain() == [.presence(matchID: matchID, playerID: pv.playerID, change: .disconnected, reason: .none)])
        await victim.close()
        try await server.stop()
    }

    /// A client that stops reading but acknowledges the frames it never read (their numbers are
    /// easy to guess) keeps its backlog empty: without a hard bound it would grow the server's
    /// memory for the whole of its grace.
    @Test func aClientAcknowledgingWhatItNeverReadIsClosedAtTheHardBound() async throws {
        let log = LogLines()
        let server = try await RunningNativeServer.start(logger: log.logger) {
            $0.maxOutboundBytes = 4096
            $0.maxBacklogBytes = 64 * 1024
            $0.slowConsumerGrace = .seconds(3600)
            $0.maxInboundBytesPerSecond = 1 << 30  // the sender floods on purpose
        }
        let (victim, _) = try await server.login("acking-victim")
        let (sender, ps) = try await server.login("acking-sender")
        let matchID = try await relayPair(victim, sender, bPlayer: ps.playerID)
        _ = try await victim.drain()
        try await victim.channel.setOption(.autoRead, value: false).get()
        let payload = ByteBuffer(repeating: 0x55, count: 16_000)
        var sent: UInt64 = 0
        var closed = false
        // A frame at a time, each acknowledged before the backlog could fill (even with the
        // acknowledgement a step late); the kernel's socket buffers take megabytes before the
        // server's own buffer grows.
        for _ in 0..<4000 where !closed {
            try await sender.sendReliable(.sendData(matchID: matchID, targets: [], payload: payload))
            sent += 1
            // Answered after the sends before it: each has its sequence number for the victim.
            #expect(try await sender.ask(.leaveMatch(0)).failure?.code == .notInMatch)
            try? await victim.send(.ack(victim.lastReceived + sent))
            closed = try await server.listener.counts().connections == 1
        }
        #expect(closed, "the server buffered \(sent) frames for a client that reads nothing")
        #expect(try await server.listener.counts().sessions == 2, "only the connection went: the session waits for a resume")
        // The bound: 64 KiB + 2 x 4 KiB, and a frame header for each message not acknowledged.
        #expect(log.all.contains { $0.hasPrefix("warning closing connection") && $0.contains("bytes waiting to be sent") })
        await victim.close()
        try await server.stop()
    }

    /// Unreliable data relayed in one pass counts against `--max-outbound` as it is gathered,
    /// not only once the channel has it: else the pass in which the client's socket buffers fill
    /// leaves far more waiting than any reading client may have, and its next reliable message
    /// finds the connection past the hard bound.
    @Test func aBurstOfUnreliableDataInOnePassStaysUnderTheOutboundBound() async throws {
        let log = LogLines()
        let server = try await RunningNativeServer.start(logger: log.logger) {
            // The hard bound: 8 KiB + 2 × 4 KiB, and 21 bytes for each reliable message waiting.
            $0.maxOutboundBytes = 4096
            $0.maxBacklogBytes = 8 * 1024
            $0.slowConsumerGrace = .seconds(3600)
            $0.maxInboundBytesPerSecond = 1 << 30  // the sender floods on purpose
            $0.maxMessageRate = 1_000_000
            // The victim reads nothing for the whole burst, however long a loaded machine takes.
            $0.heartbeatInterval = .seconds(600)
            $0.idleTimeout = .seconds(600)
        }
        let (victim, _) = try await server.login("burst-victim")
        let (sender, ps) = try await server.login("burst-sender")
        let matchID = try await relayPair(victim, sender, bPlayer: ps.playerID)
        _ = try await victim.drain()
        try await victim.channel.setOption(.autoRead, value: false).get()
        let frame = NativeFrame.unreliable(
            message: NativeClientMessage.sendData(matchID: matchID, targets: [], payload: ByteBuffer(repeating: 0x55, count: 1000)).encoded()
        ).encodedFrame()
        let burst = Array(repeatElement(Array(frame.readableBytesView), count: 64).joined())
        let batches = 400
        var closed = false
        var sent = 0
        // 25 MB in all: more than the kernel's socket buffers hold for a client that reads
        // nothing, so some pass meets them full.
        while sent < batches, !closed {
            try await sender.sendRaw(burst)
            sent += 1
            // A reliable message now and then (the backlog holds about 80): each is written
            // through the hard bound's check.
            guard sent % 10 == 0 else { continue }
            try await sender.sendReliable(.sendData(matchID: matchID, targets: [], payload: ByteBuffer(string: "\(sent)")))
            // Answered after the sends before it.
            #expect(try await sender.ask(.leaveMatch(0)).failure?.code == .notInMatch)
            closed = try await server.listener.counts().connections == 1
        }
        #expect(!closed, "closed after \(sent) bursts: \(log.all.filter { $0.contains("closing connection") })")

        // Reading again, the client finds every reliable message, in order, among what
        // unreliable data was written.
        try await victim.channel.setOption(.autoRead, value: true).get()
        var reliable: [String] = []
        var unreliable = 0
        while reliable.count < sent / 10 {
            switch try await victim.next(timeout: .seconds(20)) {
            case .reliable(_, _, let message):
                guard case .matchData(_, _, let payload) = try NativeServerMessage(message: message) else { continue }
                reliable.append(String(buffer: payload))
            case .unreliable:
                unreliable += 1
            default:
                continue
            }
        }
        #expect(reliable == stride(from: 10, through: sent, by: 10).map { "\($0)" })
        #expect(unreliable < 64 * sent, "some unreliable data was given up")
        await victim.close()
        await sender.close()
        try await server.stop()
    }

    @Test func aResumeWhoseBacklogIsOverTheOutboundBoundIsNoSlowConsumer() async throws {
        // One pass hands the resumed connection ten times the mark: a client that reads is
        // given its grace to take it, and takes it.
        let server = try await RunningNativeServer.start { $0.maxOutboundBytes = 4096 }
        let (a, pa) = try await server.login("burst-a")
        let (b, pb) = try await server.login("burst-b")
        let match = try await relayPair(a, b, bPlayer: pb.playerID)
        await b.close()
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .disconnected, reason: .none))
        let payload = ByteBuffer(repeating: 0x42, count: 1000)
        for _ in 0..<40 {
            try await a.sendReliable(.sendData(matchID: match, targets: [], payload: payload))
        }
        #expect(try await a.drain() == [])

        let back = try await server.handshake()
        back.continueSequences(from: b)
        try await back.send(.resume(sessionID: pb.sessionID, resumeToken: pb.resumeToken, lastReceived: b.lastReceived))
        guard case .resumed = try await back.next() else { throw TestClientError.unexpected("no RESUMED") }
        for _ in 0..<40 {
            #expect(try await back.nextMessage() == .matchData(matchID: match, sender: pa.playerID, payload: payload))
        }
        #expect(try await a.nextMessage() == .presence(matchID: match, playerID: pb.playerID, change: .reconnected, reason: .none))
        #expect(try await server.listener.counts().connections == 2)
        await a.close()
        await back.close()
        try await server.stop()
    }

    @Test func overTheConnectionLimitANewConnectionIsToldAndClosedUntilOneCloses() async throws {
        let log = LogLines()
        let server = try await RunningNativeServer.start(logger: log.logger) { $0.maxConnections = 2 }
        let (first, _) = try await server.login("full-1")
        let second = try await server.handshake()  // answered: the server has counted it
        let refused = try await server.connect()
        #expect(try await refused.closingError().code == .serverFull)
        let again = try await server.connect()
        #expect(try await again.closingError().code == .serverFull)
        #expect(try await server.listener.counts().connections == 2)
        // The refused did not disturb the others, and a place that frees up is taken.
        #expect(try await first.response(to: try await first.request(.leaveMatch(1))).failure?.code == .notInMatch)
        await second.close()
        try await server.waitForConnections(atMost: 1)
        let (admitted, _) = try await server.login("full-2")
        #expect(try await admitted.response(to: try await admitted.request(.leaveMatch(1))).failure?.code == .notInMatch)
        let limitLines = log.all.filter { $0.contains("connection limit reached") }
        #expect(limitLines.count == 1, "said once, not per refused connection")
        #expect(limitLines.first?.hasPrefix("warning") == true && limitLines.first?.contains("port=native") == true)
        #expect(log.all.contains { $0.hasPrefix("notice accepting connections again") })
        try await server.stop()
    }

    /// Sessions outlive their connections for the grace: --max-sessions bounds them, and a
    /// player's own new login or resume is never refused by it.
    @Test func overTheSessionLimitANewLoginIsToldWhileAResumeAndAReplacementGetIn() async throws {
        let server = try await RunningNativeServer.start {
            $0.maxSessions = 2
            $0.sessionGrace = .seconds(600)
        }
        let (first, issued) = try await server.login("sessions-1")
        let (second, secondIssued) = try await server.login("sessions-2")
        // Both connections drop: their sessions wait for a resume, and still count.
        await first.close()
        await second.close()
        try await server.waitForConnections(atMost: 0)
        #expect(try await server.listener.counts().sessions == 2)

        let refused = try await server.handshake()
        try await refused.send(.authenticate(.device(id: "sessions-3", secret: "")))
        let error = try await refused.closingError()
        #expect(error.code == .serverFull)
        #expect(error.message.contains("--max-sessions"))

        // The first player signs in again: its new session replaces its old one.
        let (again, replaced) = try await server.login("sessions-1", secret: issued.deviceSecret)
        #expect(replaced.playerID == issued.playerID)
        // The second resumes.
        let back = try await server.handshake()
        try await back.send(.resume(sessionID: secondIssued.sessionID, resumeToken: secondIssued.resumeToken, lastReceived: 0))
        guard case .resumed = try await back.next() else { throw TestClientError.unexpected("no RESUMED") }
        #expect(try await server.listener.counts().sessions == 2)

        // A session that ends makes room. The refused device was not registered: its first
        // contact is made again, and its secret issued now.
        try await back.send(.goodbye)
        try await back.waitUntilClosed()
        let (third, thirdIssued) = try await server.login("sessions-3")
        #expect(!thirdIssued.deviceSecret.isEmpty)
        #expect(try await third.response(to: try await third.request(.leaveMatch(1))).failure?.code == .notInMatch)
        for connection in [again, third] { await connection.close() }
        try await server.stop()
    }

    @Test func oneNetworkGetsAtMostItsShareOfConnectionsAndOthersStillGetIn() async throws {
        let log = LogLines()
        let server = try await RunningNativeServer.start(logger: log.logger) { $0.maxConnectionsPerAddress = 2 }
        let (first, _) = try await server.login("net-1")
        let second = try await server.handshake()
        for _ in 0..<3 {
            let refused = try await server.connect()
            let error = try await refused.closingError()
            #expect(error.code == .serverFull)
            #expect(error.message == "127.0.0.1 has the most connections one network may open (2, --max-connections-per-address); close one or try again later")
        }
        // Another address is another network (Linux answers for all of 127/8 on loopback).
        let elsewhere = try await server.connect(from: "127.0.0.2")
        try await elsewhere.send(.hello(version: 1, gameID: "matchhost"))
        guard case .welcome = try await elsewhere.next() else { throw TestClientError.unexpected("no WELCOME from 127.0.0.2") }
        #expect(try await server.listener.counts().connections == 3)
        // A place that frees up on 127.0.0.1 is taken.
        await second.close()
        try await server.waitForConnections(atMost: 2)
        let (admitted, _) = try await server.login("net-3")
        #expect(try await admitted.response(to: try await admitted.request(.leaveMatch(1))).failure?.code == .notInMatch)
        #expect(try await first.response(to: try await first.request(.leaveMatch(1))).failure?.code == .notInMatch)
        let lines = log.all.filter { $0.contains("connection limit of a network reached") }
        #expect(lines.count == 1, "said once, not per refused connection")
        #expect(lines.first?.contains("source=127.0.0.1") == true)
        try await server.stop()
    }

    @Test func aBurstOfConnectionsIsAdmittedUpToTheLimitExactly() async throws {
        // On a loaded machine the 40 handshakes can take long; admitted connections that say
        // nothing meanwhile are kept by `quietClientIdleTimeout`.
        let server = try await RunningNativeServer.start {
            $0.maxConnections = 5
            $0.heartbeatInterval = .seconds(60)
        }
        let connections = try await withThrowingTaskGroup(of: TestNativeConnection.self) { group in
            for _ in 0..<40 { group.addTask { try await server.connect() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var refused = 0
        for connection in connections {
            // A refused connection may be closed already; its ERROR is in its inbox all the same.
            try? await connection.send(.hello(version: 1, gameID: "matchhost"))
            switch try await connection.next(timeout: .seconds(10)) {
            case .welcome: continue
            case .error(let error) where error.code == .serverFull: refused += 1
            case let other: throw TestClientError.unexpected("\(other)")
            }
        }
        #expect(refused == 35)
        // The refused ones are closing; the admitted ones stay.
        try await server.waitForConnections(atMost: 5)
        #expect(try await server.listener.counts().connections == 5)
        for connection in connections { await connection.close() }
        try await server.stop()
    }

    @Test func newPlayersFromOneNetworkAreLimitedButKnownDevicesAndTokensAreNot() async throws {
        let server = try await RunningNativeServer.start { $0.maxNewPlayersPerMinute = 2 }
        let (_, first) = try await server.login("new-1")
        _ = try await server.login("new-2")
        let third = try await server.handshake()
        try await third.send(.authenticate(.device(id: "new-3", secret: "")))
        let refusal = try await third.closingError()
        #expect(refusal.code == .rateLimited)
        #expect(refusal.message.contains("--max-new-players-per-minute"))
        // Returning players are not new players.
        _ = try await server.login("new-1", secret: first.deviceSecret)
        let byToken = try await server.handshake()
        try await byToken.send(.authenticate(.token(first.sessionToken)))
        guard case .authenticated(let again) = try await byToken.next() else { throw TestClientError.unexpected("token refused") }
        #expect(again.playerID == first.playerID)
        try await server.stop()
    }

    @Test func aCloseIsLoggedAsLoudAsItIsUnusual() async throws {
        let log = LogLines()
        var logger = log.logger
        logger.logLevel = .debug
        let server = try await RunningNativeServer.start(logger: logger)
        let (bad, _) = try await server.login("loud-bad")
        try await bad.sendRaw([0, 0, 0, 1, 0x7e])
        #expect(try await bad.closingError().code == .badMessage)
        let (first, auth) = try await server.login("loud-again")
        _ = try await server.login("loud-again", secret: auth.deviceSecret)
        #expect(try await first.closingError().code == .sessionReplaced)
        // What every client does after a restart: RESUME a session the server no longer has.
        let returning = try await server.handshake()
        try await returning.send(.resume(sessionID: "0123456789abcdef0123456789abcdef", resumeToken: auth.resumeToken, lastReceived: 0))
        #expect(try await returning.closingError().code == .sessionNotFound)
        _ = try await server.login("loud-stopped")
        try await server.stop()

        let closes = log.all.filter { $0.contains("closing connection") }
        func level(of code: NativeErrorCode) -> [String] {
            closes.filter { $0.contains("reason=\(code)") }.map { String($0.prefix { $0 != " " }) }
        }
        #expect(level(of: .badMessage) == ["warning"])
        #expect(level(of: .sessionReplaced) == ["info"])
        #expect(level(of: .sessionNotFound) == ["info"])
        // The stop ends three sessions (the bad one's is away, within its grace) and closes the two
        // connections still open, each only at debug: the stop itself is one line.
        #expect(level(of: .shuttingDown) == ["debug", "debug"])
        let sessionsEnded = log.all.filter { $0.contains("session ended") && $0.contains("SHUTTING_DOWN") }
        #expect(sessionsEnded.map { String($0.prefix { $0 != " " }) } == ["debug", "debug", "debug"])
        #expect(log.all.filter { $0.hasPrefix("info ending every session") && $0.contains("sessions=3") }.count == 1)
    }
}

/// A small deterministic generator, so random-input tests repeat exactly.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { self.state = seed }
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct NativeCatRaceTests {
    private func event(_ message: NativeServerMessage) throws -> CatRaceServerMessage? {
        guard case .matchEvent(_, let body) = message else { return nil }
        return try CatRaceServerMessage(frameBody: body)
    }

    private func input(_ message: CatRaceClientMessage) -> ByteBuffer {
        var buffer = ByteBuffer()
        message.encodeFrame(into: &buffer)
        return buffer.getSlice(at: 4, length: buffer.readableBytes - 4)!
    }

    @Test func aCatRaceOverTheNativeProtocolRunsToGameOverWithTheServerDecidingMoves() async throws {
        let server = try await RunningNativeServer.start { $0.maxTapRate = 100_000 }  // tap as fast as the socket allows
        let (a, pa) = try await server.login("cat-a")
        let (b, pb) = try await server.login("cat-b")
        let created = try #require(try await a.response(to: try await a.request(.createMatch(mode: "catrace", maxPlayers: 2, label: "race"))).joined)
        #expect(created.mode == "catrace")
        #expect(try event(try await a.nextMessage())?.matchStarted?.racers.map(\.playerID) == [pa.playerID])
        _ = try #require(try await b.response(to: try await b.request(.joinMatch(created.matchID))).joined)
        #expect(try await a.nextMessage() == .presence(matchID: created.matchID, playerID: pb.playerID, change: .joined, reason: .none))
        #expect(try event(try await a.nextMessage())?.matchStarted?.racers.map(\.playerID) == [pa.playerID, pb.playerID])
        #expect(try event(try await b.nextMessage())?.matchStarted?.racers.map(\.posX) == [25, 25])

        // A jump to the finish moves the racer a bucketful of steps (5), no more: the other
        // racer is told where the server put it.
        try await a.sendReliable(.matchInput(matchID: created.matchID, input: input(.movedSelf(MovedSelf(posX: 445)))))
        #expect(try event(try await b.nextMessage()) == .playerMoved(PlayerMoved(playerIndex: 0, posX: 75)))
        var x: UInt32 = 75
        while x < CatRaceTrack.finishX {
            x += 10
            try await a.sendReliable(.matchInput(matchID: created.matchID, input: input(.movedSelf(MovedSelf(posX: x)))))
            #expect(try event(try await b.nextMessage()) == .playerMoved(PlayerMoved(playerIndex: 0, posX: x)))
        }
        #expect(try event(try await b.nextMessage()) == .gameOver(GameOver(winnerIndex: 0)))
        #expect(try event(try await a.nextMessage()) == .gameOver(GameOver(winnerIndex: 0)))

        // Input the game cannot read closes that connection with BAD_MESSAGE.
        try await b.sendReliable(.matchInput(matchID: created.matchID, input: ByteBuffer(bytes: [99])))
        #expect(try await b.closingError().code == .badMessage)
        try await server.stop()
    }

    /// A native racer is shown by the alias it set (SET_ALIAS), read from the store as it
    /// takes its seat: the line-up goes out again with it; one that never set one is shown by
    /// the start of its id, with no second line-up.
    @Test func aNativeRacerIsShownByItsAlias() async throws {
        let server = try await RunningNativeServer.start()
        let (a, pa) = try await server.login("alias-cat-a")
        let (b, pb) = try await server.login("alias-cat-b")
        #expect(try await b.ask(.setAlias("Bo 🐈")) == .success(.done))
        let created = try #require(try await a.response(to: try await a.request(.createMatch(mode: "catrace", maxPlayers: 2, label: ""))).joined)
        let alone = try await a.nextLineUp(in: created.matchID) { _ in true }
        #expect(alone.racers.map(\.alias) == [String(pa.playerID.prefix(8))])
        _ = try #require(try await b.response(to: try await b.request(.joinMatch(created.matchID))).joined)
        let named = [String(pa.playerID.prefix(8)), "Bo 🐈"]
        let lineUp = try await b.nextLineUp(in: created.matchID) { $0.racers.count == 2 && $0.racers[1].alias == "Bo 🐈" }
        #expect(lineUp.racers.map(\.alias) == named)
        #expect(lineUp.racers.map(\.playerID) == [pa.playerID, pb.playerID])
        // A saw three line-ups: alone, with B as its id's start, with B's alias. Its own alias
        // is its id's start already, so its read sent none (A's read was made before B joined).
        var seen: [[String]] = [alone.racers.map(\.alias)]
        while seen.last != named {
            if let started = try event(try await a.nextMessage())?.matchStarted { seen.append(started.racers.map(\.alias)) }
        }
        seen += try await a.drain().compactMap { try event($0)?.matchStarted?.racers.map(\.alias) }
        #expect(seen == [[named[0]], [named[0], String(pb.playerID.prefix(8))], named])
        try await server.stop()
    }

    /// `--max-racers` bounds a race on the native port as on the tutorial's: created, and queued for.
    @Test func aNativeRaceHoldsAtMostMaxRacers() async throws {
        let server = try await RunningNativeServer.start { $0.maxRacers = 3 }
        let (a, _) = try await server.login("racers-a")
        #expect(
            try await a.ask(.createMatch(mode: "catrace", maxPlayers: 4, label: ""))
                == .failure(NativeError(.badArgument, "maxPlayers for catrace must be 2 to 3 (--max-players, --max-racers), or 0 for 3")))
        let queued = try await a.ask(.matchmake(NativeTicketRequest(mode: "catrace", minPlayers: 2, maxPlayers: 4)))
        #expect(queued == .failure(NativeError(.badArgument, "catrace takes 2 to 3 players (--max-players, --max-racers), min ≤ max; asked 2 to 4")))
        let created = try #require(try await a.response(to: try await a.request(.createMatch(mode: "catrace", maxPlayers: 0, label: ""))).joined)
        #expect(created.capacity == 3)
        // Other games keep --max-players.
        let (b, _) = try await server.login("racers-b")
        #expect(try #require(try await b.response(to: try await b.request(.createMatch(mode: "relay", maxPlayers: 0, label: ""))).joined).capacity == 16)
        try await server.stop()
    }

    /// As on the tutorial's port: a race's GAME_OVER goes out once the match's standing is stored.
    @Test(.timeLimit(.minutes(1))) func aRacesGameOverWaitsUntilItsStandingIsStored() async throws {
        let store = HeldInterimStore()
        let server = try await RunningNativeServer.start {
            $0.maxTapRate = 100_000
            $0.store = store
        }
        let (a, pa) = try await server.login("cat-a")
        let (b, pb) = try await server.login("cat-b")
        let created = try #require(try await a.response(to: try await a.request(.createMatch(mode: "catrace", maxPlayers: 2, label: ""))).joined)
        _ = try await a.nextMessage()
        _ = try #require(try await b.response(to: try await b.request(.joinMatch(created.matchID))).joined)
        #expect(try event(try await b.nextMessage())?.matchStarted?.racers.count == 2)
        var x: UInt32 = 25
        while x < CatRaceTrack.finishX {
            x += 10
            try await b.sendReliable(.matchInput(matchID: created.matchID, input: input(.movedSelf(MovedSelf(posX: x)))))
        }
        await store.reached.wait()
        let meanwhile = try await a.drain().compactMap { try event($0) }
        // The line-up with b in it, b's 42 steps to the finish, and no GAME_OVER yet.
        #expect(meanwhile.count == 1 + 42)
        #expect(meanwhile.last == .playerMoved(PlayerMoved(playerIndex: 1, posX: CatRaceTrack.finishX)))
        await store.release.open()
        #expect(try event(try await a.nextMessage()) == .gameOver(GameOver(winnerIndex: 1)))
        let interrupted = try await store.inner.endInterruptedMatches(at: 1_000, reason: "crash", notice: nil)
        #expect(
            interrupted.map(\.state) == [
                .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: pa.playerID, outcome: .lost, score: 0, summary: "won 0 races"),
                        PlayerResultRecord(playerID: pb.playerID, outcome: .won, score: 1, summary: "won 1 race"),
                    ]))
            ])
        try await server.stop()
    }
}
