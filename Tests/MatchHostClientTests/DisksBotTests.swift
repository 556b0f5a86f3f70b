import Foundation
import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

/// Disks over the native protocol: ``DisksClient`` and ``DisksBot`` (`matchhost bot disks`)
/// against a real in-process native server, played to GAME_OVER.
///
/// The server's Disks matches are shortened through `ServerConfiguration.disksOptions`: first
/// to 3 points, a disk every 50 ms, so a bot match is over in well under a second.
@Suite(.serialized) struct DisksBotTests {
    static func startServer(spawnInterval: TimeAmount = .milliseconds(50), minimumPlayers: Int = 2) async throws -> TestServer {
        try await TestServer.start {
            $0.disksOptions.scoreLimit = 3
            $0.disksOptions.spawnInterval = spawnInterval
            $0.disksOptions.minimumPlayers = minimumPlayers
        }
    }

    static func fastBots(port: Int) -> DisksBot.Options {
        var options = DisksBot.Options()
        options.port = port
        options.reactionTime = .milliseconds(20)
        options.tapRate = 20
        options.matchTimeout = .seconds(20)
        return options
    }

    /// Checks a result of a match the bots played to the score limit with `players` seats.
    static func expectScoreLimitResult(_ result: DisksBot.MatchResult, players: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.reason == .scoreLimit, sourceLocation: sourceLocation)
        #expect(result.scores.map(\.seat) == (0..<players).map(UInt8.init), sourceLocation: sourceLocation)
        #expect(Set(result.scores.map(\.playerID)).count == players, sourceLocation: sourceLocation)
        #expect(result.scores.allSatisfy { $0.playerID.count == 32 }, sourceLocation: sourceLocation)
        // One winner, on exactly the score limit; everyone else below it.
        #expect(result.winners.count == 1, sourceLocation: sourceLocation)
        let winner = result.winners.first ?? -1
        for score in result.scores {
            if Int(score.seat) == winner {
                #expect(score.score == 3, sourceLocation: sourceLocation)
            } else {
                #expect(score.score < 3, sourceLocation: sourceLocation)
            }
        }
        #expect(result.winnerIDs == [result.scores[max(0, winner)].playerID], sourceLocation: sourceLocation)
    }

    @Test func twoBotsPlayAMatchToItsEnd() async throws {
        let server = try await Self.startServer()
        let reported = DisksResultBox()
        let started = ContinuousClock.now
        let results = try await DisksBot.run(Self.fastBots(port: server.port)) { reported.append($0) }
        let elapsed = ContinuousClock.now - started

        #expect(results.map(\.match) == [0])
        let result = try #require(results.first)
        Self.expectScoreLimitResult(result, players: 2)
        // The match's own duration: some time, within the run that played it.
        #expect(result.duration > .zero && result.duration <= elapsed)
        #expect(reported.values == results)
        // GAME_OVER ended the match on the server.
        #expect(try await server.listener.counts().matches == 0)
        await server.stop()
    }

    @Test func twoMatchesOfFourBots() async throws {
        let server = try await Self.startServer()
        var options = Self.fastBots(port: server.port)
        options.matches = 2
        options.botsPerMatch = 4
        let results = try await DisksBot.run(options)

        #expect(results.map(\.match) == [0, 1])
        #expect(Set(results.map(\.matchID)).count == 2)
        for result in results {
            Self.expectScoreLimitResult(result, players: 4)
        }
        // Eight different players.
        #expect(Set(results.flatMap { $0.scores.map(\.playerID) }).count == 8)
        await server.stop()
    }

    /// `--disks-min-players 16`, "wait until the match is full": a match of 3 starts when its
    /// third player arrives, not never.
    @Test func theMinimumPlayersAreCappedAtTheMatchCapacity() async throws {
        let server = try await Self.startServer(minimumPlayers: 16)
        var options = Self.fastBots(port: server.port)
        options.botsPerMatch = 3
        let results = try await DisksBot.run(options)
        let result = try #require(results.first)
        Self.expectScoreLimitResult(result, players: 3)
        await server.stop()
    }

    /// A bot joins a match a player created (`--match`); the player never taps, so the bot
    /// wins, and the player's view shows it.
    @Test func aBotJoinsAGivenMatch() async throws {
        let server = try await Self.startServer()
        let human = makeClient(port: server.port)
        try await human.connect()
        let disks = try await DisksClient.createMatch(on: human, players: 2, label: "friday")
        #expect(disks.match.label == "friday")

        var options = Self.fastBots(port: server.port)
        options.matchID = disks.matchID
        options.botsPerMatch = 1
        let results = try await DisksBot.run(options)
        let result = try #require(results.first)
        #expect(result.matchID == disks.matchID)
        #expect(result.winners == [1])
        #expect(result.scores.map(\.score) == [0, 3])
        #expect(result.scores.first?.playerID == disks.playerID)

        var view = DisksView(myPlayerID: disks.playerID)
        while let event = try await disks.nextEvent(timeout: .seconds(10)) {
            view.apply(event)
            if case .matchEnded = event { break }
        }
        #expect(view.phase == .over)
        #expect(view.mySeat == 0)
        #expect(!view.iWon)
        #expect(view.winners == [1])
        #expect(view.players.map(\.score) == [0, 3])
        #expect(view.hitCount == 3)
        #expect(view.matchEndReason != nil)
        await disks.close()
        await server.stop()
    }

    /// The adapter, message by message, in a match whose only disk is the first.
    @Test func theAdapterDeliversDecodedDisksMessages() async throws {
        let server = try await Self.startServer(spawnInterval: .seconds(100))
        let annClient = makeClient(port: server.port)
        let boClient = makeClient(port: server.port)
        let annID = try await annClient.connect().playerID
        let boID = try await boClient.connect().playerID

        let ann = try await DisksClient.createMatch(on: annClient, players: 2)
        #expect(ann.playerID == annID)
        #expect(ann.capacity == 2)
        #expect(ann.match.mode == "disks")
        // One STATE, after MATCH_JOINED; then, while waiting, nothing.
        guard case .message(.state(let state)) = try await ann.nextEvent(timeout: .seconds(10)) else {
            Issue.record("expected STATE")
            return
        }
        #expect(state.phase == .waiting)
        #expect(state.scoreLimit == 3)
        #expect(state.scores == [DisksScore(seat: 0, playerID: annID, score: 0)])
        await #expect(throws: DisksClientError.timedOut) { try await ann.nextEvent(timeout: .milliseconds(20)) }

        let bo = try await DisksClient.joinMatch(ann.matchID, on: boClient)
        #expect(bo.match.players.map(\.playerID) == [annID, boID])
        #expect(try await ann.nextEvent(timeout: .seconds(10)) == .presence(playerID: boID, change: .joined, reason: .none))

        // Both play until the first disk is up.
        var annView = DisksView(myPlayerID: annID)
        var boView = DisksView(myPlayerID: boID)
        while annView.liveDisks.isEmpty {
            annView.apply(try #require(try await ann.nextEvent(timeout: .seconds(10))))
        }
        while boView.liveDisks.isEmpty {
            boView.apply(try #require(try await bo.nextEvent(timeout: .seconds(10))))
        }
        #expect(annView.phase == .playing && boView.phase == .playing)
        #expect(annView.players.map(\.playerID) == [annID, boID])
        let disk = try #require(annView.liveDisks.first).disk
        #expect(boView.liveDisks.map(\.disk) == [disk])

        // Ann hits it: both see the hit in a TICK.
        try await ann.tap(x: disk.x, y: disk.y)
        while annView.hitCount == 0 {
            annView.apply(try #require(try await ann.nextEvent(timeout: .seconds(10))))
        }
        while boView.hitCount == 0 {
            boView.apply(try #require(try await bo.nextEvent(timeout: .seconds(10))))
        }
        for view in [annView, boView] {
            #expect(view.players.map(\.score) == [1, 0])
            #expect(view.hitDisks.map(\.disk.id) == [disk.id])
            #expect(view.hitDisks.first?.seat == 0)
            #expect(view.liveDisks.isEmpty)
        }

        // Bo is too late for it; a tap on nothing misses. TAP_MISSED goes to the tapper only.
        try await bo.tap(x: disk.x, y: disk.y)
        #expect(try await Self.nextMiss(bo) == DisksTapMissed(x: disk.x, y: disk.y, reason: .alreadyHit))
        try await ann.tap(x: 0, y: 0)
        #expect(try await Self.nextMiss(ann) == DisksTapMissed(x: 0, y: 0, reason: .noDisk))

        // Bo leaves: Ann sees it, wins (the others left), and the match ends.
        try await bo.leave()
        var sawLeave = false
        while true {
            let event = try #require(try await ann.nextEvent(timeout: .seconds(10)))
            annView.apply(event)
            if event == .presence(playerID: boID, change: .left, reason: .asked) { sawLeave = true }
            if case .matchEnded = event { break }
        }
        #expect(sawLeave)
        #expect(annView.gameOverReason == .opponentsLeft)
        #expect(annView.iWon)
        #expect(annView.players.map(\.hasLeft) == [false, true])

        // After close(), what is left is read, then the events end.
        await ann.close()
        while try await ann.nextEvent(timeout: .seconds(10)) != nil {}
        await bo.close()
        await server.stop()
    }

    @Test func joiningAnotherGameIsRefused() async throws {
        let server = try await Self.startServer()
        let owner = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        try await owner.connect()
        let guestID = try await guest.connect().playerID
        let ownerEvents = Recorder(owner.events)
        let relay = try await owner.createMatch(mode: "relay", maxPlayers: 2)
        await #expect(throws: MatchHostClientError.self) { try await DisksClient.joinMatch(relay.matchID, on: guest) }
        await expectNativeError(.noSuchMatch) { _ = try await DisksClient.joinMatch(relay.matchID + 1000, on: guest) }
        _ = try await ownerEvents.next("the guest leaving") { $0.isPresence(.left, of: guestID) }
        await #expect(throws: MatchHostClientError.self) { try await DisksClient.createMatch(on: guest, players: 1) }
        await owner.close()
        await guest.close()
        await server.stop()
    }

    @Test func optionsAreChecked() throws {
        var options = DisksBot.Options()
        try options.validate()
        options.botsPerMatch = 1
        #expect(throws: DisksBotError.self) { try options.validate() }  // a match of 1
        options.matchID = 7
        try options.validate()  // 1 bot joining someone's match
        options.matches = 2
        #expect(throws: DisksBotError.self) { try options.validate() }
        options.matches = 1
        options.reactionSpread = 1.5
        #expect(throws: DisksBotError.self) { try options.validate() }
        options.reactionSpread = 0
        options.tapRate = 0
        #expect(throws: DisksBotError.self) { try options.validate() }
        options.tapRate = 5
        options.matchTimeout = .zero
        #expect(throws: DisksBotError.self) { try options.validate() }
    }

    /// The next TAP_MISSED, skipping ticks.
    static func nextMiss(_ disks: DisksClient) async throws -> DisksTapMissed {
        while true {
            let event = try #require(try await disks.nextEvent(timeout: .seconds(10)))
            if case .message(.tapMissed(let missed)) = event { return missed }
        }
    }
}

/// Results reported from the bots' tasks.
final class DisksResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [DisksBot.MatchResult] = []

    func append(_ result: DisksBot.MatchResult) {
        self.lock.withLock { self.stored.append(result) }
    }

    var values: [DisksBot.MatchResult] {
        self.lock.withLock { self.stored }
    }
}
