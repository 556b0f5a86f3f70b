import Logging
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// A Cat Race listener on 127.0.0.1, port 0, for one test.
struct RunningServer {
    let listener: CatRaceListener
    let group: MultiThreadedEventLoopGroup
    var port: Int { self.listener.localAddress.port! }

    static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> RunningServer {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.catRacePort = 0
        configuration.maxTapRate = 100_000  // tests tap as fast as the socket allows
        configuration.maxMessageRate = 100_000
        configuration.idleTimeout = quietClientIdleTimeout
        configure(&configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let listener = try await CatRaceListener.bind(
            configuration: configuration, group: group, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        return RunningServer(listener: listener, group: group)
    }

    func client(_ id: String = "", alias: String? = nil, continueMatch: Bool = true) async throws -> TestCatRaceClient {
        try await TestCatRaceClient.connect(port: self.port, group: self.group, id: id, alias: alias, continueMatch: continueMatch)
    }

    func stop() async throws {
        await self.listener.close()
        try await self.group.shutdownGracefully()
    }
}

/// Connects two racers and starts their race.
private func startRace(_ server: RunningServer, _ a: String, _ b: String) async throws -> (TestCatRaceClient, TestCatRaceClient) {
    let ca = try await server.client(a)
    #expect(try await ca.next() == .notInMatch)
    let cb = try await server.client(b)
    #expect(try await cb.next() == .notInMatch)
    try await ca.send(.startMatch(StartMatch(playerIDs: [a, b])))
    #expect(try await ca.next().matchStarted?.racers.map(\.playerID) == [a, b])
    #expect(try await cb.next().matchStarted?.racers.map(\.playerID) == [a, b])
    return (ca, cb)
}

/// Taps `mover` from `from` to the finish; `watcher` must see each move, then GAME_OVER.
private func raceToFinish(mover: TestCatRaceClient, seat: UInt8, watcher: TestCatRaceClient, from: UInt32 = 25) async throws {
    var x = from
    while x < CatRaceTrack.finishX {
        x += 10
        try await mover.send(.movedSelf(MovedSelf(posX: x)))
        #expect(try await watcher.next() == .playerMoved(PlayerMoved(playerIndex: seat, posX: x)))
    }
    #expect(try await watcher.next() == .gameOver(GameOver(winnerIndex: seat)))
    #expect(try await mover.next() == .gameOver(GameOver(winnerIndex: seat)))
}

extension CatRaceServerMessage {
    var matchStarted: MatchStarted? {
        if case .matchStarted(let message) = self { return message }
        return nil
    }
}

@Suite(.serialized) struct CatRaceEndToEndTests {
    @Test func aRaceToGameOverThenRestartAndReconnects() async throws {
        let server = try await RunningServer.start()
        let (a, b) = try await startRace(server, "G:A", "G:B")
        try await raceToFinish(mover: a, seat: 0, watcher: b)

        try await b.send(.restartMatch)
        for client in [a, b] {
            let snapshot = try await client.next().matchStarted
            #expect(snapshot?.state == .active)
            #expect(snapshot?.racers.map(\.posX) == [25, 25])
        }
        try await b.send(.movedSelf(MovedSelf(posX: 35)))
        #expect(try await a.next() == .playerMoved(PlayerMoved(playerIndex: 1, posX: 35)))

        // B's link drops; B comes back with continueMatch 1 and alone gets the race as it is.
        await b.close()
        let b2 = try await server.client("G:B", alias: "Bee")
        let snapshot = try await b2.next().matchStarted
        #expect(snapshot?.racers.map(\.posX) == [25, 35])
        #expect(snapshot?.racers.map(\.alias) == ["alias-G:A", "Bee"], "a player back under a new alias is shown under it (Q8)")
        #expect(try await a.expectNothingPending().isEmpty)

        // B drops again and comes back with continueMatch 0: the match is over for everyone.
        await b2.close()
        let b3 = try await server.client("G:B", continueMatch: false)
        #expect(try await b3.next() == .notInMatch)
        #expect(try await a.next() == .notInMatch)
        #expect(try await server.listener.counts().matches == 0)
        try await server.stop()
    }

    @Test func aReservedSeatIsFilledLate() async throws {
        let server = try await RunningServer.start()
        let a = try await server.client("G:A", alias: "Ann")
        #expect(try await a.next() == .notInMatch)
        try await a.send(.startMatch(StartMatch(playerIDs: ["G:A", "G:Late"])))
        #expect(try await a.next().matchStarted?.racers.map(\.alias) == ["Ann", ""])
        let late = try await server.client("G:Late", alias: "Lou", continueMatch: false)
        let snapshot = try await late.next()
        #expect(snapshot.matchStarted?.racers.map(\.alias) == ["Ann", "Lou"])
        #expect(try await a.next() == snapshot)
        try await raceToFinish(mover: late, seat: 1, watcher: a)
        try await server.stop()
    }

    @Test func notifyReadyIsRelayedToTheInviter() async throws {
        let server = try await RunningServer.start()
        let inviter = try await server.client("G:Inviter")
        let invitee = try await server.client("G:Invitee")
        #expect(try await inviter.next() == .notInMatch)
        #expect(try await invitee.next() == .notInMatch)
        try await invitee.send(.notifyReady(NotifyReady(playerID: "G:Inviter")))
        #expect(try await inviter.next() == .notifyReady(NotifyReady(playerID: "G:Invitee")))
        #expect(try await invitee.expectNothingPending().isEmpty)
        try await server.stop()
    }

    /// Each kind of bad input, named so the test log says which one ran.
    enum BadInput: String, CaseIterable, CustomTestStringConvertible {
        case hugeLength, bodyOverMaximum, truncatedString, unknownType, serverOnlyType, randomBytes

        var testDescription: String { self.rawValue }

        var bytes: [UInt8] {
            switch self {
            case .hugeLength: return [0x7F, 0xFF, 0xFF, 0xFF, 0, 1, 2, 3]
            case .bodyOverMaximum: return [0, 0, 4, 1] + Array(repeating: 4, count: 1025)  // max is 1024
            case .truncatedString: return [0, 0, 0, 8, 0, 0, 0, 0, 10, 65, 66, 67]
            case .unknownType: return [0, 0, 0, 1, 99]
            case .serverOnlyType: return [0, 0, 0, 2, 6, 0]
            case .randomBytes:
                // A fixed pseudo-random sequence (LCG), the same on every run.
                var state: UInt32 = 0xC0FF_EE11
                return (0..<4096).map { _ in
                    state = state &* 1_664_525 &+ 1_013_904_223
                    return UInt8(truncatingIfNeeded: state >> 24)
                }
            }
        }
    }

    @Test(arguments: BadInput.allCases)
    func badInputClosesOnlyItsOwnConnection(_ input: BadInput) async throws {
        let server = try await RunningServer.start { $0.maxFrameBytes = 1024 }
        let (a, b) = try await startRace(server, "G:A", "G:B")
        for x in stride(from: 35 as UInt32, through: 225, by: 10) {
            try await a.send(.movedSelf(MovedSelf(posX: x)))
            #expect(try await b.next() == .playerMoved(PlayerMoved(playerIndex: 0, posX: x)))
        }
        let bad = try await server.client()
        try await bad.sendRaw(input.bytes)
        try await bad.waitUntilClosed()
        // The race on the other connections goes on to its end.
        try await raceToFinish(mover: a, seat: 0, watcher: b, from: 225)
        #expect(try await server.listener.counts().connections == 2)
        try await server.stop()
    }

    /// The tutorial client says who it is at once and then may stay quiet for as long as it
    /// likes; a connection that never says who it is, or sends a frame a byte at a time, holds
    /// nothing past --idle-timeout.
    @Test func silenceBeforePlayerConnectedAndATrickledFrameAreClosedButAQuietRacerIsNot() async throws {
        let server = try await RunningServer.start { $0.idleTimeout = .milliseconds(1_000) }
        let quiet = try await server.client("G:Quiet")
        #expect(try await quiet.next() == .notInMatch)
        let mute = try await server.client()
        let trickler = try await server.client("G:Trickle")
        #expect(try await trickler.next() == .notInMatch)
        try await trickler.sendRaw([0, 0, 0, 100])  // a frame of 96 bytes begins
        let trickle = trickleBytes(through: trickler.sendRaw)
        try await mute.waitUntilClosed()
        try await trickler.waitUntilClosed()
        trickle.cancel()
        #expect(await trickle.value < 60, "closed while the client was still trickling")
        // Well past the timeout, the quiet racer is still served.
        try await quiet.send(.playerConnected(PlayerConnected(playerID: "G:Quiet", alias: "Quiet", continueMatch: true)))
        #expect(try await quiet.next() == .notInMatch)
        #expect(try await server.listener.counts().connections == 1)
        try await server.stop()
    }

    @Test func aConnectionOverTheMessageRateIsClosed() async throws {
        let server = try await RunningServer.start { $0.maxMessageRate = 50 }
        let polite = try await server.client("G:Polite")
        #expect(try await polite.next() == .notInMatch)
        let flooder = try await server.client("G:Flood")
        #expect(try await flooder.next() == .notInMatch)
        var flood = ByteBuffer()
        for _ in 0..<200 { RestartMatch().encodeFrame(into: &flood) }
        try await flooder.channel.writeAndFlush(flood)
        try await flooder.waitUntilClosed()
        #expect(try await polite.expectNothingPending().isEmpty)
        try await server.stop()
    }

    @Test func aConnectionOverTheByteRateIsClosed() async throws {
        // A burst of 200 bytes; the message rate is out of the way.
        let server = try await RunningServer.start {
            $0.maxInboundBytesPerSecond = 200
            $0.maxFrameBytes = 64
        }
        let polite = try await server.client("G:Polite")
        #expect(try await polite.next() == .notInMatch)
        let flooder = try await server.client("G:Flood")
        #expect(try await flooder.next() == .notInMatch)
        var flood = ByteBuffer()
        for _ in 0..<100 { RestartMatch().encodeFrame(into: &flood) }
        #expect(flood.readableBytes > 400)
        try await flooder.channel.writeAndFlush(flood)
        try await flooder.waitUntilClosed()
        #expect(try await polite.expectNothingPending().isEmpty)
        try await server.stop()
    }

    @Test func overTheConnectionLimitANewClientIsClosedWithNothingSent() async throws {
        let server = try await RunningServer.start { $0.maxConnections = 1 }
        let racer = try await server.client("G:Inside")
        #expect(try await racer.next() == .notInMatch)
        // The tutorial protocol has no error message: the close is all a refused client gets.
        let refused = try await server.client()  // says nothing: the server may close before it could
        #expect(try await refused.nextEvent() == .closed)
        #expect(try await racer.expectNothingPending().isEmpty)
        await racer.close()
        try await server.stop()
    }

    @Test func overItsNetworksLimitANewClientIsClosedWithNothingSent() async throws {
        let server = try await RunningServer.start { $0.maxConnectionsPerAddress = 1 }
        let racer = try await server.client("G:Inside")
        #expect(try await racer.next() == .notInMatch)
        let refused = try await server.client()
        #expect(try await refused.nextEvent() == .closed)
        #expect(try await racer.expectNothingPending().isEmpty)
        #expect(try await server.listener.counts().connections == 1)
        await racer.close()
        try await server.stop()
    }

    @Test func aClientThatDoesNotReadIsDisconnected() async throws {
        // With the default grace of 10 s it is the hard bound (twice --max-outbound) that closes it.
        let server = try await RunningServer.start { $0.maxOutboundBytes = 4096 }
        let victim = try await TestCatRaceClient.connect(
            port: server.port, group: server.group, id: "G:Victim", autoRead: false, receiveBuffer: 4096)
        let spammer = try await server.client("G:" + String(repeating: "s", count: 200))
        #expect(try await spammer.next() == .notInMatch)
        // Every NOTIFY_READY naming the victim sends it ~210 bytes it never reads.
        var burst = ByteBuffer()
        for _ in 0..<1000 { NotifyReady(playerID: "G:Victim").encodeFrame(into: &burst) }
        var closed = false
        for _ in 0..<100 where !closed {
            try await spammer.channel.writeAndFlush(burst)
            closed = try await server.listener.counts().connections == 1
        }
        #expect(closed, "the server kept a client that reads nothing")
        #expect(try await spammer.expectNothingPending().isEmpty)
        await victim.close()
        try await server.stop()
    }

    @Test func racersWhoVanishTogetherEndTheirRaceOnceAndTheServerLivesOn() async throws {
        // Their grace timers fall due in the same event-loop pass: the first ends the race,
        // and the others, already dequeued by the loop, must find it gone without harm.
        let server = try await RunningServer.start { $0.gracePeriod = .milliseconds(50) }
        let ids = (0..<4).map { "G:Gone\($0)" }
        var racers: [TestCatRaceClient] = []
        for id in ids {
            let racer = try await server.client(id)
            #expect(try await racer.next() == .notInMatch)
            racers.append(racer)
        }
        try await racers[0].send(.startMatch(StartMatch(playerIDs: ids)))
        for racer in racers { #expect(try await racer.next().matchStarted != nil) }
        for racer in racers { await racer.close() }
        // Wait on the server's own grace timers (real time: this is the production clock).
        let deadline = NIODeadline.now() + .seconds(5)
        while try await server.listener.counts().matches > 0, NIODeadline.now() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await server.listener.counts().matches == 0)
        try await Task.sleep(for: .milliseconds(100))
        let probe = try await server.client("G:Probe")
        #expect(try await probe.next() == .notInMatch)
        #expect(try await server.listener.counts().players == 1)
        try await server.stop()
    }

    @Test func shutdownTellsRacersAndClosesConnections() async throws {
        let server = try await RunningServer.start()
        let (a, b) = try await startRace(server, "G:A", "G:B")
        await server.listener.close()
        #expect(try await a.next() == .notInMatch)
        #expect(try await b.next() == .notInMatch)
        try await a.waitUntilClosed()
        try await b.waitUntilClosed()
        try await server.group.shutdownGracefully()
    }
}
