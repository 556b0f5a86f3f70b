import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

/// Cat Race over the native protocol: ``CatRaceNativeClient`` and the native code path of
/// `matchhost bot catrace --native`, against a real in-process native server.
@Suite(.serialized) struct CatRaceNativeBotTests {
    /// A native server whose Cat Race refills a step every nanosecond: no move of the tests,
    /// however fast they send them, is refused as too fast.
    static func startServer() async throws -> TestServer {
        try await TestServer.start { $0.maxTapRate = 1e9 }
    }

    /// One fast bot for the match `matchID` someone else created.
    static func oneBot(joining matchID: MatchIdentifier, on server: TestServer) -> CatRaceBot.Options {
        var options = CatRaceBot.Options()
        options.native = true
        options.port = server.port
        options.matchID = matchID
        options.botsPerRace = 1
        options.tapRate = 200
        options.roundTimeout = .seconds(30)
        return options
    }

    @Test func twoBotsRaceTwoRoundsInANativeMatch() async throws {
        let server = try await Self.startServer()
        var options = CatRaceBot.Options()
        options.native = true
        options.port = server.port
        options.botsPerRace = 2
        options.rounds = 2
        options.tapRate = 200
        options.roundTimeout = .seconds(30)
        let reported = ResultBox()
        let results = try await CatRaceBot.run(options) { reported.append($0) }

        #expect(results.map { [$0.race, $0.round] } == [[0, 0], [0, 1]])
        for result in results {
            #expect((0..<2).contains(result.winnerIndex))
            // Server-issued player ids; MATCH_STARTED shows their first 8 characters as aliases.
            #expect(result.winnerID.count == 32)
            #expect(result.winnerAlias == String(result.winnerID.prefix(8)))
        }
        #expect(Set(reported.values) == Set(results))
        // The first bot left the match after the last round, which ended it.
        #expect(try await server.listener.counts().matches == 0)
        await server.stop()
    }

    /// A bot joins a match someone else created (`--match`) and races them; the creator never
    /// taps, so the bot wins every round.
    @Test func aBotJoinsAGivenMatch() async throws {
        let server = try await Self.startServer()
        let human = makeClient(port: server.port)
        try await human.connect()
        let race = try await CatRaceNativeClient.createMatch(on: human, racers: 2)

        let results = try await CatRaceBot.run(Self.oneBot(joining: race.matchID, on: server))
        #expect(results.count == 1)
        #expect(results.first?.winnerIndex == 1)

        // What the creator saw: alone, then the bot, its moves and win, then the race ending.
        var view = CatRaceRaceView(myPlayerID: race.playerID)
        while let message = try await race.nextMessage(timeout: .seconds(10)) {
            view.apply(message)
            if message == .notInMatch { break }
        }
        #expect(view.raceEnded && view.winnerIndex == 1)
        #expect(view.racers.map(\.posX) == [25, 445])
        #expect(view.myIndex == 0)
        await race.close()
        await server.stop()
    }

    /// The server's stop ends a native race with MATCH_ENDED alone (no NOT_IN_MATCH): the bot
    /// fails at once with the reason, not after its round timeout.
    @Test func aBotWhoseMatchTheServerEndsFailsWithTheReason() async throws {
        let server = try await Self.startServer()
        let human = makeClient(port: server.port)
        try await human.connect()
        let race = try await CatRaceNativeClient.createMatch(on: human, racers: 2)

        var options = Self.oneBot(joining: race.matchID, on: server)
        options.tapRate = 0.1  // no race is over before the stop
        options.roundTimeout = .seconds(600)
        let bot = Task { try await CatRaceBot.run(options) }
        // The bot is in: the creator sees the line-up of two.
        while let message = try await race.nextMessage(timeout: .seconds(10)) {
            if case .matchStarted(let started) = message, started.racers.count == 2 { break }
        }
        await server.stop()
        await #expect(throws: CatRaceBotError("race 1 bot 1: the server ended the match (abandoned(server shutting down))")) {
            try await bot.value
        }
        // The creator, reading messages as the library gives them, is told too rather than left waiting.
        await #expect(throws: CatRaceClientError.matchEnded(reason: "abandoned(server shutting down)")) {
            while try await race.nextMessage(timeout: .seconds(10)) != nil {}
        }
        await race.close()
    }

    @Test func theAdapterDeliversDecodedCatRaceMessages() async throws {
        let server = try await Self.startServer()
        let annClient = makeClient(port: server.port)
        let boClient = makeClient(port: server.port)
        let annID = try await annClient.connect().playerID
        let boID = try await boClient.connect().playerID

        let ann = try await CatRaceNativeClient.createMatch(on: annClient, racers: 2)
        #expect(ann.playerID == annID)
        #expect(ann.capacity == 2)
        #expect(ann.match.mode == "catrace")
        let alone = MatchStarted(state: .active, racers: [.init(playerID: annID, alias: String(annID.prefix(8)), posX: 25)])
        #expect(try await ann.nextEvent(timeout: .seconds(10)) == .message(.matchStarted(alone)))

        let bo = try await CatRaceNativeClient.joinMatch(ann.matchID, on: boClient)
        #expect(bo.matchID == ann.matchID)
        #expect(bo.match.players.map(\.playerID) == [annID, boID])
        let both = MatchStarted(
            state: .active,
            racers: [
                .init(playerID: annID, alias: String(annID.prefix(8)), posX: 25),
                .init(playerID: boID, alias: String(boID.prefix(8)), posX: 25),
            ])
        // Ann sees Bo arrive (PRESENCE), then the new line-up; Bo sees the line-up.
        #expect(try await ann.nextEvent(timeout: .seconds(10)) == .presence(playerID: boID, change: .joined, reason: .none))
        #expect(try await ann.nextEvent(timeout: .seconds(10)) == .message(.matchStarted(both)))
        #expect(try await bo.nextMessage(timeout: .seconds(10)) == .matchStarted(both))

        // MOVED_SELF goes out as MATCH_INPUT; the other racer gets PLAYER_MOVED.
        try await ann.send(.movedSelf(MovedSelf(posX: 35)))
        #expect(try await bo.nextMessage(timeout: .seconds(10)) == .playerMoved(PlayerMoved(playerIndex: 0, posX: 35)))
        // Nothing else is on its way to Bo: a short wait times out and the adapter stays usable.
        await #expect(throws: CatRaceClientError.timedOut) { try await bo.nextEvent(timeout: .milliseconds(20)) }

        // Bo runs to the line: GAME_OVER to both.
        var x: UInt32 = 25
        while x < CatRaceTrack.finishX {
            x += CatRaceTrack.stepX
            try await bo.send(.movedSelf(MovedSelf(posX: x)))
        }
        #expect(try await bo.nextMessage(timeout: .seconds(10)) == .gameOver(GameOver(winnerIndex: 1)))
        var annView = CatRaceRaceView(myPlayerID: annID)
        annView.apply(.matchStarted(both))
        while true {
            let message = try #require(try await ann.nextMessage(timeout: .seconds(10)))
            annView.apply(message)
            if case .gameOver = message { break }
        }
        #expect(annView.winnerIndex == 1 && annView.racers[1].posX == CatRaceTrack.finishX)

        // RESTART_MATCH: everyone back at the start.
        try await ann.send(.restartMatch)
        let again = MatchStarted(state: .active, racers: both.racers)
        #expect(try await ann.nextMessage(timeout: .seconds(10)) == .matchStarted(again))
        #expect(try await bo.nextMessage(timeout: .seconds(10)) == .matchStarted(again))

        // Bo leaves: Ann hears who left, then that the race is over (NOT_IN_MATCH), then why
        // the match ended.
        try await bo.leave()
        #expect(try await ann.nextEvent(timeout: .seconds(10)) == .presence(playerID: boID, change: .left, reason: .asked))
        #expect(try await ann.nextEvent(timeout: .seconds(10)) == .message(.notInMatch))
        var endReason: String?
        if case .matchEnded(let reason) = try #require(try await ann.nextEvent(timeout: .seconds(10))) { endReason = reason }
        #expect(endReason?.contains(boID) == true)

        // After close(), what is left is read, then the events end.
        await ann.close()
        while try await ann.nextEvent(timeout: .seconds(10)) != nil {}
        await bo.close()
        await server.stop()
    }

    @Test func joiningSomethingElseIsRefused() async throws {
        let server = try await Self.startServer()
        let owner = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        try await owner.connect()
        let guestID = try await guest.connect().playerID
        let ownerEvents = Recorder(owner.events)
        let relay = try await owner.createMatch(mode: "relay", maxPlayers: 2)
        await #expect(throws: MatchHostClientError.self) { try await CatRaceNativeClient.joinMatch(relay.matchID, on: guest) }
        await expectNativeError(.noSuchMatch) { _ = try await CatRaceNativeClient.joinMatch(relay.matchID + 1000, on: guest) }
        // The guest left the relay match again.
        _ = try await ownerEvents.next("the guest leaving") { $0.isPresence(.left, of: guestID) }
        await owner.close()
        await guest.close()
        await server.stop()
    }

    @Test func nativeOptionsAreChecked() throws {
        var options = CatRaceBot.Options()
        options.native = true
        options.botsPerRace = 1
        #expect(throws: CatRaceBotError.self) { try options.validate() }  // a match of 1
        options.matchID = 7
        try options.validate()  // 1 bot joining someone's match
        options.races = 2
        #expect(throws: CatRaceBotError.self) { try options.validate() }
        options.races = 1
        options.extraPlayerIDs = ["G:Human"]
        #expect(throws: CatRaceBotError.self) { try options.validate() }
        options.extraPlayerIDs = []
        options.native = false
        #expect(throws: CatRaceBotError.self) { try options.validate() }  // a match id on port 1955
    }
}
