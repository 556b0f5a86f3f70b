import Foundation
import MatchHostClient
import MatchHostServer
import MatchHostWire
import Testing

/// The code path of `matchhost bot catrace`, against a real server.
@Suite(.serialized) struct CatRaceBotTests {
    @Test func botsPlayEveryRoundOfEveryRace() async throws {
        let server = try await CatRaceTestServer.start()
        var options = CatRaceBot.Options()
        options.port = server.port
        options.races = 2
        options.botsPerRace = 3
        options.rounds = 2
        options.tapRate = 200
        options.roundTimeout = .seconds(30)
        let reported = ResultBox()
        let results = try await CatRaceBot.run(options) { reported.append($0) }

        #expect(results.map { [$0.race, $0.round] } == [[0, 0], [0, 1], [1, 0], [1, 1]])
        for result in results {
            #expect((0..<3).contains(result.winnerIndex))
            #expect(result.winnerID == options.playerID(race: result.race, seat: result.winnerIndex))
            #expect(result.winnerAlias == options.alias(race: result.race, seat: result.winnerIndex))
        }
        #expect(Set(reported.values) == Set(results))
        // The bots ended their races rather than leave them to the grace timers.
        #expect(try await server.listener.counts().matches == 0)
        try await server.stop()
    }

    /// A bot races a player that never taps (a human at `matchhost play`), seated with `--with`.
    @Test func aBotRacesAnotherPlayer() async throws {
        let server = try await CatRaceTestServer.start()
        let human = try await server.connect("G:Human", alias: "Hu")
        #expect(try await human.expectNext() == .notInMatch)

        var options = CatRaceBot.Options()
        options.port = server.port
        options.botsPerRace = 1
        options.extraPlayerIDs = ["G:Human"]
        options.tapRate = 200
        options.roundTimeout = .seconds(30)
        let results = try await CatRaceBot.run(options)
        #expect(results.count == 1)
        #expect(results.first?.winnerIndex == 0)

        // What the human saw: the race, the bot's moves, the bot's win, then the race ending.
        var view = CatRaceRaceView(myPlayerID: "G:Human")
        while let message = try await human.next(timeout: .seconds(10)) {
            view.apply(message)
            if message == .notInMatch { break }
        }
        #expect(view.raceEnded && view.winner?.playerID == options.playerID(race: 0, seat: 0))
        #expect(view.racers.map(\.posX) == [445, 25])
        #expect(view.myIndex == 1)
        await human.close()
        try await server.stop()
    }

    /// A race that cannot start (the other player is already racing) fails with a timeout error.
    @Test func aRaceThatNeverStartsTimesOut() async throws {
        let server = try await CatRaceTestServer.start()
        let busy = try await server.connect("G:Busy")
        let other = try await server.connect("G:Other")
        #expect(try await busy.expectNext() == .notInMatch)
        #expect(try await other.expectNext() == .notInMatch)
        try await busy.startMatch(with: ["G:Busy", "G:Other"])
        #expect(try await busy.expectNext().matchStarted != nil)

        var options = CatRaceBot.Options()
        options.port = server.port
        options.botsPerRace = 1
        options.extraPlayerIDs = ["G:Busy"]
        options.roundTimeout = .milliseconds(300)
        await #expect(throws: CatRaceBotError.self) { try await CatRaceBot.run(options) }
        await busy.close()
        await other.close()
        try await server.stop()
    }

    @Test func badOptionsAreRefused() async throws {
        var options = CatRaceBot.Options()
        options.botsPerRace = 1
        #expect(throws: CatRaceBotError.self) { try options.validate() }
        options.botsPerRace = 17
        #expect(throws: CatRaceBotError.self) { try options.validate() }
        options.botsPerRace = 2
        options.tapRate = 0
        #expect(throws: CatRaceBotError.self) { try options.validate() }
        options.tapRate = 5
        options.races = 2
        options.extraPlayerIDs = ["G:Human"]
        #expect(throws: CatRaceBotError.self) { try options.validate() }
        options.races = 1
        try options.validate()
    }
}

/// Results reported from the bot's callback, which may run on any task.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [CatRaceBot.RoundResult] = []

    func append(_ result: CatRaceBot.RoundResult) {
        self.lock.withLock { self.stored.append(result) }
    }

    var values: [CatRaceBot.RoundResult] {
        self.lock.withLock { self.stored }
    }
}
