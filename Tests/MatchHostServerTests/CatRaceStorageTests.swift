import Foundation
import MatchHostProcessTesting
import Logging
import MatchHostCore
import MatchHostServer
import MatchHostSQLite
import MatchHostStoreTesting
import MatchHostWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// Both listeners on one store, as `matchhost serve` runs them, on 127.0.0.1 with free ports.
private struct StoredServer {
    let catRace: CatRaceListener
    let native: NativeListener
    let group: MultiThreadedEventLoopGroup
    var port: Int { self.catRace.localAddress.port! }

    static func start(
        store: any GameStore, logger: Logger = silentLogger, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> StoredServer {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.catRacePort = 0
        configuration.port = 0
        configuration.maxTapRate = 100_000
        configuration.maxMessageRate = 100_000
        configuration.store = store
        configuration.idleTimeout = quietClientIdleTimeout
        configure(&configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let catRace = try await CatRaceListener.bind(configuration: configuration, group: group, logger: logger)
        let native = try await NativeListener.bind(configuration: configuration, group: group, logger: logger, catRace: catRace)
        return StoredServer(catRace: catRace, native: native, group: group)
    }

    func client(_ id: String, alias: String, continueMatch: Bool = true) async throws -> TestCatRaceClient {
        try await TestCatRaceClient.connect(port: self.port, group: self.group, id: id, alias: alias, continueMatch: continueMatch)
    }

    /// Closes the listeners as `serve` does: native, then Cat Race (each waits for its store
    /// writes). The clients' loops keep running until ``stop()``.
    func close() async {
        await self.native.close()
        await self.catRace.close()
    }

    func stop() async throws {
        await self.close()
        try await self.group.shutdownGracefully()
    }
}

private let silentLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

/// A store that fails every lookup of one tutorial id, as a broken page of a disk would;
/// everything else goes to an in-memory store.
private struct OneIdentityFailingStore: ForwardingGameStore {
    let failing: ExternalIdentity
    let inner: any GameStore = InMemoryGameStore()
    /// The failing identity's lookups fail only once this opens, so that a test knows they are
    /// still under way.
    let failure = Gate()

    func player(externalIdentity identity: ExternalIdentity) async throws -> PlayerRecord? {
        if identity == self.failing { try await self.fail() }
        return try await self.inner.player(externalIdentity: identity)
    }
    func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] {
        if claims.contains(where: { $0.identity == self.failing }) { try await self.fail() }
        return try await self.inner.findOrCreatePlayers(claims, at: at)
    }
    private func fail() async throws {
        await self.failure.wait()
        throw GameStoreError.storageFailed(reason: "disk on fire")
    }
}

/// Taps `mover` (at `seat`) from the start to the finish; `watcher` sees each move, then both see GAME_OVER.
private func win(_ mover: TestCatRaceClient, seat: UInt8, against watcher: TestCatRaceClient) async throws {
    var x: UInt32 = CatRaceTrack.startX
    while x < CatRaceTrack.finishX {
        x += CatRaceTrack.stepX
        try await mover.send(.movedSelf(MovedSelf(posX: x)))
        #expect(try await watcher.next() == .playerMoved(PlayerMoved(playerIndex: seat, posX: x)))
    }
    #expect(try await watcher.next() == .gameOver(GameOver(winnerIndex: seat)))
    #expect(try await mover.next() == .gameOver(GameOver(winnerIndex: seat)))
}

/// The Cat Race port with a store: tutorial players keep their alias (the latest they connected
/// with) and their results across restarts of the server on the same database.
@Suite(.serialized) struct CatRaceStorageTests {
    @Test func aTutorialPlayerKeepsItsWinAndItsNewAliasAcrossARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-catrace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }

        // First run: Abby beats Bo.
        var store = try await SQLiteGameStore.open(directory: data.path)
        var server = try await StoredServer.start(store: store)
        let abby = try await server.client("G:1036727375", alias: "Abby")
        #expect(try await abby.next() == .notInMatch)
        let bo = try await server.client("G:2", alias: "Bo")
        #expect(try await bo.next() == .notInMatch)
        try await abby.send(.startMatch(StartMatch(playerIDs: ["G:1036727375", "G:2"])))
        #expect(try await abby.next().matchStarted?.racers.map(\.alias) == ["Abby", "Bo"])
        #expect(try await bo.next().matchStarted?.racers.map(\.alias) == ["Abby", "Bo"])
        try await win(abby, seat: 0, against: bo)
        // A graceful stop ends the race; its tally (Abby 1, Bo 0) is its result.
        await server.close()
        #expect(try await abby.next() == .notInMatch)
        try await server.stop()
        try await store.close()

        // Second run on the same file: Abby comes back calling herself Zed.
        store = try await SQLiteGameStore.open(directory: data.path)
        server = try await StoredServer.start(store: store)
        let zed = try await server.client("G:1036727375", alias: "Zed")
        #expect(try await zed.next() == .notInMatch)
        let bo2 = try await server.client("G:2", alias: "Bo")
        #expect(try await bo2.next() == .notInMatch)
        try await bo2.send(.startMatch(StartMatch(playerIDs: ["G:2", "G:1036727375"])))
        let lineUp = try await bo2.next().matchStarted
        #expect(lineUp?.racers.map(\.playerID) == ["G:2", "G:1036727375"], "the wire still carries the tutorial ids")
        #expect(lineUp?.racers.map(\.alias) == ["Bo", "Zed"], "a player back under a new alias is shown under it (Q8)")
        #expect(try await zed.next().matchStarted == lineUp)
        try await server.stop()
        try await store.close()

        // What the database says.
        store = try await SQLiteGameStore.open(directory: data.path)
        let abbyRecord = try #require(try await store.player(externalIdentity: .catRaceTutorial("G:1036727375")))
        let boRecord = try #require(try await store.player(externalIdentity: .catRaceTutorial("G:2")))
        #expect(abbyRecord.alias == "Zed", "and stored under it")
        #expect(abbyRecord.id != "G:1036727375", "stored under an id of the server's, not the claimed one")
        #expect(try await store.deviceIdentity(deviceID: "G:1036727375") == nil)
        let abbyStats = try #require(try await store.stats(game: "catrace", playerID: abbyRecord.id))
        #expect([abbyStats.played, abbyStats.won, abbyStats.lost] == [Int]([1, 1, 0]))
        let boStats = try #require(try await store.stats(game: "catrace", playerID: boRecord.id))
        #expect([boStats.played, boStats.won, boStats.lost] == [Int]([1, 0, 1]))
        #expect(abbyStats.rating > boStats.rating)
        let top = try await store.leaderboard(game: "catrace", limit: 10)
        #expect(top.map(\.playerID) == [abbyRecord.id, boRecord.id])
        #expect(top.map(\.alias) == ["Zed", "Bo"])
        let history = try await store.matchHistory(playerID: abbyRecord.id, limit: 10)
        #expect(history.count == 2)
        let first = try #require(history.last)
        let second = try #require(history.first)
        #expect(first.game == "catrace" && first.players == [abbyRecord.id, boRecord.id])
        #expect(
            first.state
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: abbyRecord.id, outcome: .won, score: 1, summary: "won 1 race"),
                        PlayerResultRecord(playerID: boRecord.id, outcome: .lost, score: 0, summary: "won 0 races"),
                    ])))
        #expect(second.id > first.id, "ids continue after the restart")
        #expect(second.players == [boRecord.id, abbyRecord.id])
        #expect(second.state == .abandoned(reason: "server shutting down"), "no race of it was won")
        try await store.close()

        // And what `matchhost player` and `matchhost leaderboard` print from it.
        let player = try await runMatchHostToExit(["player", abbyRecord.id, "--data", data.path])
        #expect(player.status == 0)
        #expect(player.stdout.contains("alias      Zed"))
        #expect(player.stdout.contains("catrace    played 1, won 1, lost 0"))
        #expect(player.stdout.contains("won (won 1 race)"))
        // The tutorial's playerId finds the same player.
        let byTutorialID = try await runMatchHostToExit(["player", "G:1036727375", "--data", data.path])
        #expect(byTutorialID.status == 0)
        #expect(byTutorialID.stdout.contains("player     \(abbyRecord.id)"))
        #expect(byTutorialID.stdout.contains("catrace id G:1036727375"))
        #expect(byTutorialID.stdout.contains("catrace    played 1, won 1, lost 0"))
        #expect(try await runMatchHostToExit(["player", "G:404", "--data", data.path]).status == 1)
        let board = try await runMatchHostToExit(["leaderboard", "catrace", "--data", data.path])
        #expect(board.status == 0)
        let rows = board.stdout.split(separator: "\n").dropFirst()
        #expect(rows.first?.contains(abbyRecord.id) == true && rows.first?.hasSuffix("Zed") == true)
        #expect(rows.dropFirst().first?.contains(boRecord.id) == true)
    }

    /// A race's GAME_OVER is its result told: it goes out only once the match's standing is
    /// stored, and until then the race takes no restart.
    @Test(.timeLimit(.minutes(1))) func gameOverWaitsUntilTheRacesStandingIsStored() async throws {
        let store = HeldInterimStore()
        let server = try await StoredServer.start(store: store)
        let abby = try await server.client("G:abby", alias: "Abby")
        #expect(try await abby.next() == .notInMatch)
        let bo = try await server.client("G:bo", alias: "Bo")
        #expect(try await bo.next() == .notInMatch)
        try await abby.send(.startMatch(StartMatch(playerIDs: ["G:abby", "G:bo"])))
        #expect(try await abby.next().matchStarted != nil)
        #expect(try await bo.next().matchStarted != nil)
        var x: UInt32 = CatRaceTrack.startX
        while x < CatRaceTrack.finishX {
            x += CatRaceTrack.stepX
            try await abby.send(.movedSelf(MovedSelf(posX: x)))
            #expect(try await bo.next() == .playerMoved(PlayerMoved(playerIndex: 0, posX: x)))
        }
        await store.reached.wait()
        try await bo.send(.restartMatch)
        #expect(try await abby.expectNothingPending().isEmpty, "no GAME_OVER before the standing is stored")
        #expect(try await bo.expectNothingPending().isEmpty, "and no restart")

        await store.release.open()
        #expect(try await abby.next() == .gameOver(GameOver(winnerIndex: 0)))
        #expect(try await bo.next() == .gameOver(GameOver(winnerIndex: 0)))
        // The restart Bo asked for meanwhile is made then.
        #expect(try await abby.next().matchStarted?.racers.map(\.posX) == [CatRaceTrack.startX, CatRaceTrack.startX])
        #expect(try await bo.next().matchStarted?.racers.map(\.posX) == [CatRaceTrack.startX, CatRaceTrack.startX])
        // What a crash now would leave: the match finished with Abby's race.
        let abbyRecord = try #require(try await store.inner.player(externalIdentity: .catRaceTutorial("G:abby")))
        let boRecord = try #require(try await store.inner.player(externalIdentity: .catRaceTutorial("G:bo")))
        let interrupted = try await store.inner.endInterruptedMatches(at: 1_000, reason: "crash", notice: nil)
        #expect(interrupted.count == 1)
        #expect(
            interrupted.first?.state
                == .finished(
                    MatchResultRecord(players: [
                        PlayerResultRecord(playerID: abbyRecord.id, outcome: .won, score: 1, summary: "won 1 race"),
                        PlayerResultRecord(playerID: boRecord.id, outcome: .lost, score: 0, summary: "won 0 races"),
                    ])))
        try await server.stop()
    }

    @Test func aStoreFailureClosesOnlyTheConnectionItConcerns() async throws {
        let log = LogLines()
        let store = OneIdentityFailingStore(failing: .catRaceTutorial("G:broken"))
        var logger = log.logger
        logger.logLevel = .debug
        let server = try await StoredServer.start(store: store, logger: logger)
        let ann = try await server.client("G:ann", alias: "Ann")
        #expect(try await ann.next() == .notInMatch)

        // The broken player's later frames wait behind its lookup and die with its connection:
        // a second PLAYER_CONNECTED, handled, would have been answered with NOT_IN_MATCH.
        let broken = try await server.client("G:broken", alias: "Bad")
        try await broken.send(.playerConnected(PlayerConnected(playerID: "G:fine", alias: "Fine", continueMatch: true)))
        await store.failure.open()
        #expect(try await broken.nextEvent() == .closed)

        // Everyone else goes on: Ann races a newcomer.
        let cy = try await server.client("G:cy", alias: "Cy")
        #expect(try await cy.next() == .notInMatch)
        try await ann.send(.startMatch(StartMatch(playerIDs: ["G:ann", "G:cy"])))
        #expect(try await ann.next().matchStarted?.racers.map(\.alias) == ["Ann", "Cy"])
        #expect(try await cy.next().matchStarted?.racers.map(\.alias) == ["Ann", "Cy"])
        #expect(try await ann.expectNothingPending().isEmpty)
        #expect(try await store.inner.player(externalIdentity: .catRaceTutorial("G:broken")) == nil)
        #expect(try await store.inner.player(externalIdentity: .catRaceTutorial("G:fine")) == nil)
        #expect(try await server.catRace.counts().connections == 2)
        // The database failed: the outage is told once, the connection it closed at debug.
        let closing = log.all.filter { $0.contains("closing connection") }
        #expect(closing.count == 1)
        #expect(closing.first?.hasPrefix("debug") == true)
        #expect(closing.first?.contains("G:broken could not be looked up or created in the database") == true)
        #expect(closing.first?.contains("disk on fire") == true)
        #expect(log.all.filter { $0.contains("storage failing") }.count == 1)
        try await server.stop()
    }

    /// Fails the first contacts of tutorial clients and of devices while `failing`.
    private struct NewcomersFailingStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let failing = NIOLockedValueBox(true)
        private func failIfFull() throws {
            if self.failing.withLockedValue({ $0 }) { throw GameStoreError.storageFailed(reason: "database or disk is full") }
        }
        func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] {
            try self.failIfFull()
            return try await self.inner.findOrCreatePlayers(claims, at: at)
        }
        func createPlayerWithDevice(id: PlayerID, alias: String, deviceID: String, secretHash: [UInt8], createdAt: UnixMillis) async throws {
            try self.failIfFull()
            try await self.inner.createPlayerWithDevice(id: id, alias: alias, deviceID: deviceID, secretHash: secretHash, createdAt: createdAt)
        }
    }

    @Test func oneFullDiskIsOneOutageInTheLogWhicheverPortMeetsIt() async throws {
        let log = LogLines()
        let store = NewcomersFailingStore()
        let server = try await StoredServer.start(store: store, logger: log.logger)
        let port = server.native.localAddress.port!
        let tutorial = try await server.client("G:newcomer", alias: "New")
        #expect(try await tutorial.nextEvent() == .closed)
        let device = try await TestNativeConnection.handshake(port: port, group: server.group)
        try await device.send(.authenticate(.device(id: "newcomer-device", secret: "")))
        #expect(try await device.closingError().code == .storageFailed)
        #expect(log.all.filter { $0.contains("storage failing") }.count == 1, "\(log.all)")
        #expect(log.all.first { $0.contains("storage failing") }?.contains("listener=") == false, "the store's, not a port's")

        store.failing.withLockedValue { $0 = false }
        _ = try await TestNativeConnection.login(port: port, group: server.group, device: "newcomer-device")
        #expect(log.all.filter { $0.contains("storage recovered") }.count == 1)
        try await server.stop()
    }

    /// A player the port holds, back under a new alias: the alias is stored before it is
    /// answered; while the database fails, the player races under its stored alias.
    @Test func aNewAliasIsStoredBeforeItIsShownAndAFailingDatabaseKeepsTheOld() async throws {
        let store = NewcomersFailingStore()
        store.failing.withLockedValue { $0 = false }
        let server = try await StoredServer.start(store: store)
        let ann = try await server.client("G:ann", alias: "Ann")
        #expect(try await ann.next() == .notInMatch)
        let bo = try await server.client("G:bo", alias: "Bo")
        #expect(try await bo.next() == .notInMatch)

        // Ann again on a new connection, as Anna: stored before the answer.
        let anna = try await server.client("G:ann", alias: "Anna")
        #expect(try await anna.next() == .notInMatch)
        #expect(try await store.inner.player(externalIdentity: .catRaceTutorial("G:ann"))?.alias == "Anna")

        // As Annie while the database fails: answered, not closed, and still Anna.
        store.failing.withLockedValue { $0 = true }
        let annie = try await server.client("G:ann", alias: "Annie")
        #expect(try await annie.next() == .notInMatch)
        try await annie.send(.startMatch(StartMatch(playerIDs: ["G:ann", "G:bo"])))
        #expect(try await annie.next().matchStarted?.racers.map(\.alias) == ["Anna", "Bo"])
        #expect(try await bo.next().matchStarted?.racers.map(\.alias) == ["Anna", "Bo"])
        #expect(try await store.inner.player(externalIdentity: .catRaceTutorial("G:ann"))?.alias == "Anna")
        try await server.stop()
    }

    @Test func framesSentBehindAPlayerConnectedWaitForItsLookup() async throws {
        let server = try await StoredServer.start(store: InMemoryGameStore())
        let ann = try await server.client("G:ann", alias: "Ann")
        #expect(try await ann.next() == .notInMatch)

        // PLAYER_CONNECTED and START_MATCH in one write: the START_MATCH must not overtake the
        // lookup (it would be refused from a player the world does not hold yet).
        let bo = try await TestCatRaceClient.connect(port: server.port, group: server.group, id: "")
        var frames = ByteBuffer()
        CatRaceClientMessage.playerConnected(PlayerConnected(playerID: "G:bo", alias: "Bo", continueMatch: true)).encodeFrame(into: &frames)
        CatRaceClientMessage.startMatch(StartMatch(playerIDs: ["G:bo", "G:ann"])).encodeFrame(into: &frames)
        try await bo.sendRaw(Array(frames.readableBytesView))
        #expect(try await bo.next() == .notInMatch)
        #expect(try await bo.next().matchStarted?.racers.map(\.alias) == ["Bo", "Ann"])
        #expect(try await ann.next().matchStarted?.racers.map(\.alias) == ["Bo", "Ann"])
        try await server.stop()
    }
    /// Creating matches and leaving them would fill the database: one network makes at most
    /// --max-new-matches-per-minute, on both ports together; another network is not held up.
    @Test func newMatchesCountAgainstOneBudgetPerNetworkForBothPorts() async throws {
        let server = try await StoredServer.start(store: InMemoryGameStore()) { $0.maxNewMatchesPerMinute = 2 }
        let nativePort = server.native.localAddress.port!
        let (native, _) = try await TestNativeConnection.login(port: nativePort, group: server.group, device: "match-maker")
        for _ in 0..<2 {
            let created = try #require(try await native.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined)
            #expect(try await native.ask(.leaveMatch(created.matchID)) == .success(.matchLeft(created.matchID)))
        }
        let refused = try await native.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).failure
        #expect(refused?.code == .rateLimited)
        #expect(refused?.message.contains("--max-new-matches-per-minute") == true)
        // A matchmaker ticket asks for a new match too: matched, left, again would store without end.
        let ticket = NativeTicketRequest(mode: "fourinarow", minPlayers: 2, maxPlayers: 2)
        #expect(try await native.ask(.matchmake(ticket)).failure?.code == .rateLimited)

        // The Cat Race port draws on the same budget: its START_MATCH is refused (silently).
        let ann = try await server.client("G:ann", alias: "Ann")
        #expect(try await ann.next() == .notInMatch)
        let bo = try await server.client("G:bo", alias: "Bo")
        #expect(try await bo.next() == .notInMatch)
        try await ann.send(.startMatch(StartMatch(playerIDs: ["G:ann", "G:bo"])))
        #expect(try await ann.expectNothingPending().isEmpty)
        #expect(try await server.catRace.counts().matches == 0)

        // Another network still creates.
        let elsewhere = try await TestNativeConnection.connect(port: nativePort, group: server.group, from: "127.0.0.2")
        try await elsewhere.send(.hello(version: 1, gameID: "matchhost"))
        guard case .welcome = try await elsewhere.next() else { throw TestClientError.unexpected("no WELCOME") }
        try await elsewhere.send(.authenticate(.device(id: "elsewhere", secret: "")))
        guard case .authenticated = try await elsewhere.next() else { throw TestClientError.unexpected("no AUTHENTICATED") }
        #expect(try await elsewhere.ask(.createMatch(mode: "relay", maxPlayers: 0, label: "")).joined != nil)
        try await server.stop()
    }

    @Test func newTutorialPlayersCountAgainstTheNetworksBudgetWhichTheNativePortShares() async throws {
        let store = InMemoryGameStore()
        let old = ExternalIdentityClaim(identity: .catRaceTutorial("G:old"), newPlayerID: "0ld", alias: "Old")
        _ = try await store.findOrCreatePlayers([old], at: UnixMillis(milliseconds: 1))
        let server = try await StoredServer.start(store: store) { $0.maxNewPlayersPerMinute = 2 }
        let one = try await server.client("G:one", alias: "One")
        #expect(try await one.next() == .notInMatch)
        #expect(try await server.client("G:two", alias: "Two").next() == .notInMatch)
        // The third unknown id from 127.0.0.1 is one new player too many: closed, not stored.
        let third = try await server.client("G:three", alias: "Three")
        #expect(try await third.nextEvent() == .closed)
        #expect(await store.player(externalIdentity: .catRaceTutorial("G:three")) == nil)
        // A stored player is no new player: it comes back (under the alias it sends now).
        let returning = try await server.client("G:old", alias: "Renamed")
        #expect(try await returning.next() == .notInMatch)
        try await returning.send(.startMatch(StartMatch(playerIDs: ["G:old", "G:one"])))
        #expect(try await returning.next().matchStarted?.racers.map(\.alias) == ["Renamed", "One"])
        #expect(await store.player(externalIdentity: .catRaceTutorial("G:old"))?.id == "0ld")
        // One budget for both ports: the native port has none left for this network either.
        let device = try await TestNativeConnection.handshake(port: server.native.localAddress.port!, group: server.group)
        try await device.send(.authenticate(.device(id: "after-the-tutorials", secret: "")))
        #expect(try await device.closingError().code == .rateLimited)
        try await server.stop()
    }
}
