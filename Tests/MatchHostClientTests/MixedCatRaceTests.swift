import Logging
import MatchHostClient
import MatchHostCore
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// One race with a tutorial client (port 1955 protocol) and a native client, both listeners
/// of one server sharing a loop, as `matchhost serve` runs them.
@Suite struct MixedCatRaceTests {
    /// Both listeners of one server on one loop, as `matchhost serve` binds them, on free ports.
    private static func startServer(store: (any GameStore)? = nil) async throws -> (CatRaceListener, NativeListener) {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.catRacePort = 0
        configuration.maxTapRate = 1e9
        configuration.maxMessageRate = 1_000_000
        configuration.store = store
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let group = MultiThreadedEventLoopGroup.singleton
        let tutorialPort = try await CatRaceListener.bind(configuration: configuration, group: group, logger: logger)
        let nativePort = try await NativeListener.bind(configuration: configuration, group: group, logger: logger, catRace: tutorialPort)
        return (tutorialPort, nativePort)
    }

    /// Moves a tutorial racer from the start to the finish line, step by step.
    private static func runToTheLine(_ tutorial: CatRaceClient) async throws {
        var x: UInt32 = 25
        while x < CatRaceTrack.finishX {
            x += CatRaceTrack.stepX
            try await tutorial.moved(to: x)
        }
    }

    @Test func aTutorialClientAndANativeClientRaceEachOther() async throws {
        let (tutorialPort, nativePort) = try await Self.startServer()

        // The tutorial client is connected and waiting before the native host names it.
        let tutorial = try await CatRaceClient.connect(
            host: "127.0.0.1", port: tutorialPort.localAddress.port!, playerID: "G:1417", alias: "Ray", continueMatch: true)
        #expect(try await tutorial.next(timeout: .seconds(10)) == .notInMatch)

        let hostClient = makeClient(port: nativePort.localAddress.port!)
        let hostID = try await hostClient.connect().playerID
        let host = try await CatRaceNativeClient.createMatch(on: hostClient, racers: 3)
        _ = try await host.nextMessage(timeout: .seconds(10))  // alone
        // The tutorial's host names the racers with START_MATCH: here, in the native match.
        try await host.send(.startMatch(StartMatch(playerIDs: [hostID, "G:1417", "G:late"])))
        let hostAlias = String(hostID.prefix(8))

        // The tutorial client is seated at once and sees the line-up, once, in its own
        // protocol; "G:late" has a reserved seat (alias unknown yet).
        guard case .matchStarted(let lineUp)? = try await tutorial.next(timeout: .seconds(10)) else {
            Issue.record("expected MATCH_STARTED")
            return
        }
        #expect(lineUp.racers.map(\.playerID) == [hostID, "G:1417", "G:late"])
        #expect(lineUp.racers.map(\.alias) == [hostAlias, "Ray", ""])
        // The native host hears of both arrivals as PRESENCE.
        var arrivals: [String] = []
        while arrivals.count < 2 {
            if case .presence(let player, .joined, _) = try #require(try await host.nextEvent(timeout: .seconds(10))) {
                arrivals.append(player)
            }
        }
        #expect(arrivals == ["G:1417", "G:late"])

        // The late tutorial client takes its reserved seat when it connects.
        let late = try await CatRaceClient.connect(
            host: "127.0.0.1", port: tutorialPort.localAddress.port!, playerID: "G:late", alias: "Lou", continueMatch: true)
        var lateView: MatchStarted?
        while lateView == nil {
            if case .matchStarted(let started) = try #require(try await late.next(timeout: .seconds(10))) { lateView = started }
        }
        #expect(lateView?.racers.map(\.alias) == [hostAlias, "Ray", "Lou"])
        // The first tutorial client's next message is that line-up too: it saw the first once.
        #expect(try await tutorial.next(timeout: .seconds(10)) == .matchStarted(try #require(lateView)))

        // The tutorial client runs to the line; everyone sees its moves and its win.
        try await Self.runToTheLine(tutorial)
        var hostView = CatRaceRaceView(myPlayerID: hostID)
        hostView.apply(.matchStarted(try #require(lateView)))
        while true {
            let message = try #require(try await host.nextMessage(timeout: .seconds(10)))
            hostView.apply(message)
            if case .gameOver = message { break }
        }
        #expect(hostView.winnerIndex == 1 && hostView.racers[1].posX == CatRaceTrack.finishX)
        var lateSaw: GameOver?
        while lateSaw == nil {
            if case .gameOver(let over) = try #require(try await late.next(timeout: .seconds(10))) { lateSaw = over }
        }
        #expect(lateSaw == GameOver(winnerIndex: 1))

        // The native host leaves: the race ends, and the tutorial clients are free again
        // (NOT_IN_MATCH, as on port 1955 when a racer leaves).
        try await host.leave()
        var tutorialFree = false
        while !tutorialFree {
            if try await tutorial.next(timeout: .seconds(10)) == .notInMatch { tutorialFree = true }
        }
        #expect(try await tutorialPort.counts().players == 2)
        await tutorial.close()
        await late.close()
        await host.close()
        await nativePort.close()
        await tutorialPort.close()
    }

    @Test func aTutorialRacerIsRecordedUnderItsStoredID() async throws {
        let store = InMemoryGameStore()
        let (tutorialPort, nativePort) = try await Self.startServer(store: store)

        let tutorial = try await CatRaceClient.connect(
            host: "127.0.0.1", port: tutorialPort.localAddress.port!, playerID: "G:1417", alias: "Ray", continueMatch: true)
        #expect(try await tutorial.next(timeout: .seconds(10)) == .notInMatch)
        let hostClient = makeClient(port: nativePort.localAddress.port!)
        let hostID = try await hostClient.connect().playerID
        let host = try await CatRaceNativeClient.createMatch(on: hostClient, racers: 2)
        try await host.send(.startMatch(StartMatch(playerIDs: [hostID, "G:1417"])))
        var lineUp: MatchStarted?
        while lineUp?.racers.count != 2 {
            guard case .matchStarted(let started) = try #require(try await tutorial.next(timeout: .seconds(10))) else { continue }
            lineUp = started
        }
        #expect(lineUp?.racers.map(\.alias) == [String(hostID.prefix(8)), "Ray"])

        // Ray wins one race; the host leaves, which ends the match.
        try await Self.runToTheLine(tutorial)
        while true {
            if case .gameOver = try #require(try await host.nextMessage(timeout: .seconds(10))) { break }
        }
        try await host.leave()
        while try await tutorial.next(timeout: .seconds(10)) != .notInMatch {}
        await tutorial.close()
        await host.close()
        await nativePort.close()
        await tutorialPort.close()

        // Ray is in the match's record under the id the server gave it, with its win.
        let ray = try #require(await store.player(externalIdentity: .catRaceTutorial("G:1417")))
        #expect(ray.alias == "Ray")
        let record = try #require(await store.match(id: host.matchID))
        #expect(record.game == "catrace")
        #expect(record.players == [hostID, ray.id])
        #expect(
            record.state
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: hostID, outcome: .lost, score: 0, summary: "won 0 races"),
                        PlayerResultRecord(playerID: ray.id, outcome: .won, score: 1, summary: "won 1 race"),
                    ])))
        #expect(await store.stats(game: "catrace", playerID: ray.id)?.won == 1)
        #expect(await store.stats(game: "catrace", playerID: hostID)?.lost == 1)
    }
}
