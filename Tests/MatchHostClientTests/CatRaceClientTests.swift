import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

@Suite(.serialized) struct CatRaceClientTests {
    /// Two clients connect, one starts the race, it taps to the finish; both see GAME_OVER,
    /// the other restarts, and both views follow every message.
    @Test func twoClientsRaceToGameOverAndRestart() async throws {
        let server = try await CatRaceTestServer.start()
        let ann = try await server.connect("G:Ann", alias: "Ann")
        let bo = try await server.connect("G:Bo", alias: "Bo")
        var annView = CatRaceRaceView(myPlayerID: ann.playerID)
        var boView = CatRaceRaceView(myPlayerID: bo.playerID)

        for client in [ann, bo] {
            #expect(try await client.expectNext() == .notInMatch)
        }
        annView.apply(.notInMatch)
        boView.apply(.notInMatch)
        #expect(annView.phase == .notInMatch)

        try await ann.startMatch(with: ["G:Ann", "G:Bo"])
        let started = try await ann.expectNext()
        #expect(try await bo.expectNext() == started)
        #expect(started.matchStarted?.racers.map(\.alias) == ["Ann", "Bo"])
        annView.apply(started)
        boView.apply(started)
        #expect(annView.myIndex == 0 && boView.myIndex == 1)
        #expect(annView.canTap && boView.canTap)

        // Ann taps to the finish: 42 steps of 10 from 25. Bo sees each move, then GAME_OVER.
        var taps = 0
        while let move = annView.tap() {
            try await ann.send(.movedSelf(move))
            taps += 1
            let seen = try await bo.expectNext()
            #expect(seen == .playerMoved(PlayerMoved(playerIndex: 0, posX: move.posX)))
            boView.apply(seen)
            if move.posX >= CatRaceTrack.finishX { break }
        }
        #expect(taps == 42)
        let over = try await bo.expectNext()
        #expect(over == .gameOver(GameOver(winnerIndex: 0)))
        boView.apply(over)
        #expect(try await ann.expectNext() == over)
        annView.apply(over)
        #expect(annView.iWon && annView.phase == .finished && !annView.canTap)
        #expect(boView.winner?.alias == "Ann" && !boView.iWon)
        #expect(boView.racers.map(\.posX) == [445, 25])

        try await bo.restartMatch()
        for client in [ann, bo] {
            let again = try await client.expectNext().matchStarted
            #expect(again?.state == .active)
            #expect(again?.racers.map(\.posX) == [25, 25])
        }

        await ann.close()
        #expect(!ann.isConnected)
        #expect(try await ann.next(timeout: .seconds(5)) == nil)
        await #expect(throws: CatRaceClientError.connectionClosed) { try await ann.restartMatch() }
        await bo.close()
        try await server.stop()
    }

    /// `messages` is an AsyncSequence that ends when the server closes the connection; a
    /// racer's NOT_IN_MATCH from the shutting-down server comes first.
    @Test func messagesEndWhenTheServerCloses() async throws {
        let server = try await CatRaceTestServer.start()
        let ann = try await server.connect("G:Ann")
        let bo = try await server.connect("G:Bo")
        #expect(try await ann.expectNext() == .notInMatch)
        #expect(try await bo.expectNext() == .notInMatch)
        try await bo.startMatch(with: ["G:Bo", "G:Ann"])
        #expect(try await ann.expectNext().matchStarted != nil)
        #expect(try await bo.expectNext().matchStarted != nil)

        try await server.stop()
        var received: [CatRaceServerMessage] = []
        for try await message in ann.messages {
            received.append(message)
        }
        #expect(received == [.notInMatch])
        #expect(try await ann.next() == nil)
        await ann.close()
        await bo.close()
    }

    /// A timeout leaves the connection usable: the message asked for later still arrives.
    @Test func aTimedOutWaitLeavesTheConnectionUsable() async throws {
        let server = try await CatRaceTestServer.start()
        let ann = try await server.connect("G:Ann")
        #expect(try await ann.expectNext() == .notInMatch)
        await #expect(throws: CatRaceClientError.timedOut) { try await ann.next(timeout: .milliseconds(50)) }
        // NOTIFY_READY naming ourselves comes back from the server.
        try await ann.notifyReady(inviter: "G:Ann")
        #expect(try await ann.expectNext() == .notifyReady(NotifyReady(playerID: "G:Ann")))
        await ann.close()
        try await server.stop()
    }

    /// A cancelled wait ends with CancellationError and takes no message away from later readers.
    @Test func aCancelledWaitTakesNoMessage() async throws {
        let server = try await CatRaceTestServer.start()
        let ann = try await server.connect("G:Ann")
        #expect(try await ann.expectNext() == .notInMatch)
        let waiting = Task { try await ann.next() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        try await ann.notifyReady(inviter: "G:Ann")
        #expect(try await ann.expectNext() == .notifyReady(NotifyReady(playerID: "G:Ann")))
        await ann.close()
        try await server.stop()
    }

    @Test func connectingToAClosedPortFails() async throws {
        let raw = try await RawTestServer.start(group: MultiThreadedEventLoopGroup.singleton)
        let port = raw.port
        await raw.stop()
        await #expect {
            _ = try await CatRaceClient.connect(host: "127.0.0.1", port: port, playerID: "G:X", alias: "X")
        } throws: { error in
            guard case CatRaceClientError.connectFailed(_, let failedPort, _)? = error as? CatRaceClientError else { return false }
            return failedPort == port
        }
    }

    /// A frame that is not a server message ends the connection with `badMessage`, after the
    /// messages that came before it.
    @Test func aBadFrameFromTheServerEndsTheConnection() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let raw = try await RawTestServer.start(group: group)
        let client = try await CatRaceClient.connect(host: "127.0.0.1", port: raw.port, playerID: "G:X", alias: "X", group: group)
        let peer = try await raw.nextAccepted()
        // NOT_IN_MATCH, then a MOVED_SELF (a client-only type).
        try await peer.writeAndFlush(ByteBuffer(bytes: [0, 0, 0, 1, 1, 0, 0, 0, 5, 4, 0, 0, 0, 35]))
        #expect(try await client.expectNext() == .notInMatch)
        await #expect(throws: CatRaceClientError.badMessage(.wrongDirection(messageType: 4))) {
            try await client.next(timeout: .seconds(10))
        }
        // The error stays: every later read reports it.
        await #expect(throws: CatRaceClientError.badMessage(.wrongDirection(messageType: 4))) {
            try await client.next(timeout: .seconds(10))
        }
        await client.close()
        #expect(!client.isConnected)
        await raw.stop()
    }

    /// With an inbox of 2 messages the client pauses and resumes reading thousands of times;
    /// every message still arrives, in order.
    @Test func aSmallInboxLosesNothing() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let raw = try await RawTestServer.start(group: group)
        var configuration = CatRaceClient.Configuration()
        configuration.maxBufferedMessages = 2
        let client = try await CatRaceClient.connect(
            host: "127.0.0.1", port: raw.port, playerID: "G:X", alias: "X", configuration: configuration, group: group)
        let peer = try await raw.nextAccepted()
        let count = 20_000
        var bytes = ByteBuffer()
        for index in 0..<count {
            PlayerMoved(playerIndex: UInt8(index % 16), posX: UInt32(index)).encodeFrame(into: &bytes)
        }
        try await peer.writeAndFlush(bytes)
        for index in 0..<count {
            let message = try await client.expectNext()
            guard message == .playerMoved(PlayerMoved(playerIndex: UInt8(index % 16), posX: UInt32(index))) else {
                Issue.record("message \(index) is \(message)")
                break
            }
        }
        try await peer.close()
        #expect(try await client.next(timeout: .seconds(10)) == nil)
        await client.close()
        await raw.stop()
    }

    /// Against a server that does not read, sends stop going to the channel once it is not
    /// writable: at most `maxPendingSends` wait, the rest fail at once. When the server reads
    /// again the waiting ones go out.
    @Test func sendsWaitForWritabilityAndTheQueueIsBounded() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let raw = try await RawTestServer.start(group: group, readsAutomatically: false, receiveBuffer: 4096)
        var configuration = CatRaceClient.Configuration()
        configuration.maxPendingSends = 3
        configuration.writeBufferHighWatermark = 64 * 1024
        configuration.writeBufferLowWatermark = 16 * 1024
        let client = try await CatRaceClient.connect(
            host: "127.0.0.1", port: raw.port, playerID: "G:X", alias: "X", configuration: configuration, group: group)
        let peer = try await raw.nextAccepted()

        // START_MATCH of 255 ids of 255 bytes: about 66 KB a frame, 26 MB in all, far more than
        // the kernel buffers between the two sockets hold.
        let big = CatRaceClientMessage.startMatch(
            StartMatch(playerIDs: (0..<255).map { String(repeating: "x", count: 250) + "-\(1000 + $0)" }))
        enum Outcome: Equatable { case sent, queueFull, other(String) }
        let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { tasks in
            for _ in 0..<400 {
                tasks.addTask {
                    do {
                        try await client.send(big)
                        return .sent
                    } catch CatRaceClientError.outboundQueueFull(let limit) where limit == 3 {
                        return .queueFull
                    } catch {
                        return .other("\(error)")
                    }
                }
            }
            var outcomes: [Outcome] = []
            var resumed = false
            while let outcome = try await tasks.next() {
                outcomes.append(outcome)
                if outcome == .queueFull, !resumed {
                    // The queue is full, so the channel is not writable: let the server read.
                    resumed = true
                    try await peer.setOption(.autoRead, value: true).get()
                    peer.read()
                }
            }
            return outcomes
        }
        #expect(outcomes.count == 400)
        #expect(outcomes.contains(.queueFull))
        #expect(outcomes.contains(.sent))
        #expect(outcomes.allSatisfy { $0 == .sent || $0 == .queueFull })
        await client.close()
        await raw.stop()
    }
}
