import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

@Suite("Native client: requests, relay and presence")
struct NativeRelayTests {
    @Test("two players: create, join, presence, reliable and unreliable data to all and to one")
    func relay() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        let carol = makeClient(port: server.port)
        let aliceID = try await alice.connect().playerID
        let bobID = try await bob.connect().playerID
        let carolID = try await carol.connect().playerID
        let aliceEvents = Recorder(alice.events)
        let bobEvents = Recorder(bob.events)
        let carolEvents = Recorder(carol.events)

        let created = try await alice.createMatch(mode: "relay", maxPlayers: 3, label: "friday")
        #expect(created.mode == "relay")
        #expect(created.label == "friday")
        #expect(created.capacity == 3)
        #expect(created.players.map(\.playerID) == [aliceID])

        let joined = try await bob.joinMatch(created.matchID)
        #expect(joined.matchID == created.matchID)
        #expect(Set(joined.players.map(\.playerID)) == [aliceID, bobID])
        #expect(try await aliceEvents.next("bob joined") == .presence(matchID: created.matchID, playerID: bobID, change: .joined, reason: .none))
        _ = try await carol.joinMatch(created.matchID)
        _ = try await aliceEvents.next("carol joined") { $0.isPresence(.joined, of: carolID) }
        _ = try await bobEvents.next("carol joined") { $0.isPresence(.joined, of: carolID) }

        // Reliable, to everyone else.
        try await alice.send([1, 2, 3], in: created.matchID)
        for recorder in [bobEvents, carolEvents] {
            let event = try await recorder.next("alice's data") { $0.isMatchData }
            #expect(event == .matchData(matchID: created.matchID, sender: aliceID, payload: ByteBuffer(bytes: [1, 2, 3]), reliable: true))
        }
        // Unreliable, to everyone else.
        try await bob.send(ByteBuffer(bytes: [4]), in: created.matchID, reliable: false)
        #expect(
            try await aliceEvents.next("bob's data") { $0.isMatchData }
                == .matchData(matchID: created.matchID, sender: bobID, payload: ByteBuffer(bytes: [4]), reliable: false))
        #expect(try await carolEvents.next("bob's data") { $0.isMatchData }.payload == ByteBuffer(bytes: [4]))
        // To one chosen player: Carol gets it, Bob does not (his next data is the one after).
        try await alice.send([5], to: [carolID], in: created.matchID)
        try await alice.send([6], to: [bobID], in: created.matchID)
        #expect(try await carolEvents.next("data for carol") { $0.isMatchData }.payload == ByteBuffer(bytes: [5]))
        #expect(try await bobEvents.next("data for bob") { $0.isMatchData }.payload == ByteBuffer(bytes: [6]))
        try await alice.send([7], to: [bobID, carolID], in: created.matchID, reliable: false)
        #expect(try await bobEvents.next("unreliable data for bob") { $0.isMatchData }.payload == ByteBuffer(bytes: [7]))
        #expect(try await carolEvents.next("unreliable data for carol") { $0.isMatchData }.payload == ByteBuffer(bytes: [7]))
        // A player named 255 times gets one copy (no amplifying a message onto another's backlog).
        try await alice.send([8], to: Array(repeating: bobID, count: 255), in: created.matchID)
        try await alice.send([9], to: [bobID], in: created.matchID)
        #expect(try await bobEvents.next("data for bob named 255 times") { $0.isMatchData }.payload == ByteBuffer(bytes: [8]))
        #expect(try await bobEvents.next("the next data for bob") { $0.isMatchData }.payload == ByteBuffer(bytes: [9]))

        // Leave: the others see it, with reason "asked".
        try await carol.leaveMatch(created.matchID)
        #expect(
            try await aliceEvents.next("carol left") { $0.isPresence(.left, of: carolID) }
                == .presence(matchID: created.matchID, playerID: carolID, change: .left, reason: .asked))
        // Close: the others see the session end.
        await bob.close()
        #expect(
            try await aliceEvents.next("bob left") { $0.isPresence(.left, of: bobID) }
                == .presence(matchID: created.matchID, playerID: bobID, change: .left, reason: .sessionEnded))
        // Bob's events finish normally after his close().
        _ = try? await bobEvents.next("the end of bob's events", timeout: 5) { _ in false }
        #expect(await bobEvents.ending.map { $0 == nil } == true)

        await alice.close()
        await carol.close()
        await server.stop()
    }

    @Test("request errors come back as NativeError and the session goes on")
    func requestErrors() async throws {
        let server = try await TestServer.start()
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        try await alice.connect()
        try await bob.connect()
        await expectNativeError(.noSuchMatch) { _ = try await alice.joinMatch(123_456_789) }
        await expectNativeError(.unknownMode) { _ = try await alice.createMatch(mode: "no-such-mode") }
        let match = try await alice.createMatch(maxPlayers: 2)
        await expectNativeError(.alreadyInMatch) { _ = try await alice.joinMatch(match.matchID) }
        await expectNativeError(.notInMatch) { try await bob.leaveMatch(match.matchID) }
        _ = try await bob.joinMatch(match.matchID)
        let carol = makeClient(port: server.port)
        try await carol.connect()
        await expectNativeError(.matchFull) { _ = try await carol.joinMatch(match.matchID) }
        #expect(await alice.state == .connected)
        await alice.close()
        await bob.close()
        await carol.close()
        await server.stop()
    }

    @Test("events end with the error when the session is replaced by another login")
    func sessionReplaced() async throws {
        let server = try await TestServer.start()
        let deviceID = newDeviceID()
        let first = makeClient(port: server.port, credentials: .device(id: deviceID, secret: ""))
        let secret = try await first.connect().deviceSecret
        let states = Recorder(first.stateChanges())
        let events = Recorder(first.events)
        let second = makeClient(port: server.port, credentials: .device(id: deviceID, secret: secret))
        try await second.connect()

        let closed = try await states.next("closed") { $0.isClosed }
        guard case .closed(.serverError(let error)) = closed else {
            Issue.record("expected a server error, got \(closed)")
            return
        }
        #expect(error.code == .sessionReplaced)
        _ = try? await events.next("the end of events", timeout: 5)
        let ending = await events.ending
        #expect((ending ?? nil).map { "\($0)" } == "\(MatchHostClientError.closed(.serverError(error)))")
        await #expect(throws: MatchHostClientError.closed(.serverError(error))) { _ = try await first.createMatch() }
        await second.close()
        await server.stop()
    }

    @Test("the largest message the server accepts is relayed; a larger one is refused before sending")
    func messageSizes() async throws {
        let server = try await TestServer.start { $0.maxFrameBytes = 1024 }
        let alice = makeClient(port: server.port)
        let bob = makeClient(port: server.port)
        let aliceID = try await alice.connect().playerID
        try await bob.connect()
        let bobEvents = Recorder(bob.events)
        let match = try await alice.createMatch()
        _ = try await bob.joinMatch(match.matchID)
        // A RELIABLE frame body: kind, sequence, ack (17), SEND_DATA: type, match, count, length (14).
        let largest = 1024 - 17 - 14
        do {
            try await alice.send(ByteBuffer(repeating: 1, count: largest + 1), in: match.matchID)
            Issue.record("a message over the server's frame limit was accepted")
        } catch MatchHostClientError.messageTooLarge(let bytes, let limit) {
            #expect(bytes == 1025)
            #expect(limit == 1024)
        }
        // Relayed, it makes a MATCH_DATA frame somewhat over the limit (the sender's id is added).
        try await alice.send(ByteBuffer(repeating: 2, count: largest), in: match.matchID)
        let event = try await bobEvents.next("the largest message") { $0.isMatchData }
        #expect(event == .matchData(matchID: match.matchID, sender: aliceID, payload: ByteBuffer(repeating: 2, count: largest), reliable: true))
        #expect(await alice.state == .connected)
        await alice.close()
        await bob.close()
        await server.stop()
    }
}
