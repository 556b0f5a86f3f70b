import MatchHostClient
import MatchHostWire
import NIOCore

/// One bench player of a Four in a Row game: its native peer and its own view of the game,
/// kept from its own STATE and MOVED. Loop-confined.
final class FourInARowBenchPlayer {
    let peer: NativeBenchPeer
    /// The bench's seat: 0 creates the match (again when it ends), 1 joins it.
    let seat: Int
    unowned let game: FourInARowBenchGame
    /// The player's seat in the current match, from its STATE; nil before.
    var matchSeat: UInt8?
    var cells = FourInARowCells()
    /// The number the player's next MOVE carries.
    var nextMoveNumber: UInt16 = 1
    /// The player's next MOVE, while one is scheduled.
    var scheduledMove: Scheduled<Void>?
    var random: FourInARowBotRandom

    init(peer: NativeBenchPeer, seat: Int, game: FourInARowBenchGame) {
        self.peer = peer
        self.seat = seat
        self.game = game
        self.random = FourInARowBotRandom(seed: .random(in: 0...UInt64.max))
    }

    /// Forgets the last match's game (a new one starts from its STATE).
    func reset() {
        self.scheduledMove?.cancel()
        self.scheduledMove = nil
        self.matchSeat = nil
        self.cells = FourInARowCells()
        self.nextMoveNumber = 1
    }
}

/// One game of the bench: seat 0 creates the match (again when it ends), seat 1 joins it.
final class FourInARowBenchGame {
    let number: Int
    var players: [FourInARowBenchPlayer] = []
    var joinedCount = 0
    var matchID: UInt64 = 0
    var createRequest: UInt32 = 0
    /// Succeeded when both players have joined the first time.
    let started: EventLoopPromise<Void>
    /// The last two MOVEs sent in the game: their match, number, and when the mover sent them.
    /// Two, because one player's MOVED for move n may be read after the other player, which
    /// got its own MOVED n first, has sent move n + 1 (never later: move n + 2 waits for MOVED
    /// n + 1, which comes after MOVED n on the same connection).
    var recentMoves: [(matchID: UInt64, moveNumber: UInt16, sentAt: UInt64)] = []

    init(number: Int, started: EventLoopPromise<Void>) {
        self.number = number
        self.started = started
    }
}

/// Counters of one event loop. "In window" means received (or sent) inside the measured window.
struct FourInARowBenchCounters: Sendable {
    /// MOVEs sent in the window.
    var movesSent: UInt64 = 0
    /// Moves acknowledged (MOVED to the mover) in the window, and over the whole run.
    var acknowledged: UInt64 = 0
    var acknowledgedInRun: UInt64 = 0
    /// Acknowledgements that took 2 ms or more.
    var overTarget: UInt64 = 0
    /// MOVED received by the opponent in the window.
    var opponentMoved: UInt64 = 0
    /// MOVE_REFUSED by reason (must stay empty).
    var refused: [UInt8: UInt64] = [:]
    /// MOVED that disagreed with the player's own board (a row other than where the disc lands).
    var boardMismatches: UInt64 = 0
    /// MOVED for a move the bench never sent (must be 0).
    var unexpectedMoved: UInt64 = 0
    /// GAME_OVER (counted at seat 0, once per game) by reason, and matches created again.
    var gamesOver: [FourInARowEndReason: UInt64] = [:]
    var restarts: UInt64 = 0
    var states: UInt64 = 0
    /// MATCH_EVENT bodies that did not decode.
    var badEvents: UInt64 = 0
    var client = NativeBenchClientCounters()

    mutating func add(_ other: FourInARowBenchCounters) {
        self.movesSent += other.movesSent
        self.acknowledged += other.acknowledged
        self.acknowledgedInRun += other.acknowledgedInRun
        self.overTarget += other.overTarget
        self.opponentMoved += other.opponentMoved
        self.refused.merge(other.refused, uniquingKeysWith: +)
        self.boardMismatches += other.boardMismatches
        self.unexpectedMoved += other.unexpectedMoved
        self.gamesOver.merge(other.gamesOver, uniquingKeysWith: +)
        self.restarts += other.restarts
        self.states += other.states
        self.badEvents += other.badEvents
        self.client.add(other.client)
    }
}

/// What one loop hands back at the end.
struct FourInARowBenchLoopResult: Sendable {
    var counters: FourInARowBenchCounters
    /// MOVE to the mover's MOVED (the acknowledgement), and to the opponent's MOVED.
    var acknowledgement: BenchLatencyHistogram
    var opponent: BenchLatencyHistogram
    /// The highest move number of each match that any of its players got MOVED for: the
    /// server sends MOVED only once the move is committed, so moves 1 to it must be stored.
    var highestMoved: [UInt64: UInt16]
}

/// The games and players of one event loop, their moves, and the measurements. Loop-confined.
final class FourInARowBenchLoop: NativeBenchOwner, GroupedBenchLoop {
    let eventLoop: any EventLoop
    let settings: FourInARowBenchSettings
    private(set) var games: [FourInARowBenchGame] = []
    private var playerOfPeer: [ObjectIdentifier: FourInARowBenchPlayer] = [:]
    private var counters = FourInARowBenchCounters()
    private var acknowledgement = BenchLatencyHistogram()
    private var opponent = BenchLatencyHistogram()
    private var highestMoved: [UInt64: UInt16] = [:]
    private var window = BenchWindow()
    private var finished = false
    private let allocator = ByteBufferAllocator()

    init(eventLoop: any EventLoop, settings: FourInARowBenchSettings, gameNumbers: [Int]) {
        self.eventLoop = eventLoop
        self.settings = settings
        for number in gameNumbers {
            let game = FourInARowBenchGame(number: number, started: eventLoop.makePromise(of: Void.self))
            game.players = (0..<2).map { seat in
                let peer = NativeBenchPeer(
                    seat: seat, seats: 2, deviceID: settings.deviceID(game: number, seat: seat), gameID: settings.gameID,
                    reliable: true, payloadSize: NativeBenchPayload.minimumSize, acknowledgeEveryRead: false, owner: self)
                return FourInARowBenchPlayer(peer: peer, seat: seat, game: game)
            }
            for player in game.players { self.playerOfPeer[ObjectIdentifier(player.peer)] = player }
            self.games.append(game)
        }
        self.scheduleAcknowledgements(delay: 200_000_000)
    }

    func createGroups(spread: UInt64) {
        benchStagger(self.games.map(\.number), total: self.settings.games, spread: spread, on: self.eventLoop) { index in
            self.create(self.games[index])
        }
    }

    func peer(group index: Int, seat: Int) -> NativeBenchPeer {
        self.games[index].players[seat].peer
    }

    private func create(_ game: FourInARowBenchGame) {
        game.joinedCount = 0
        game.matchID = 0
        game.recentMoves.removeAll()
        for player in game.players { player.reset() }
        game.createRequest = game.players[0].peer.request(
            .createMatch(mode: "fourinarow", maxPlayers: 2, label: "bench-fourinarow-\(game.number)"))
    }

    /// Opens the measured window.
    func start(epoch: UInt64, window: BenchWindow) {
        self.window = window
    }

    /// Players hold acknowledgements up to `delay`, as the client library does, unless a frame of
    /// theirs carries them. The standalone ACKs are written a slice of the players at a time
    /// (a tenth every `delay / 40`, so every player is looked at every `delay / 4`): one pass over
    /// them all would hold up the loop for a burst of writes, and the MOVED behind it would
    /// look late.
    private func scheduleAcknowledgements(delay: UInt64) {
        let slices = 10
        let players = self.games.flatMap(\.players)
        var slice = 0
        func next() {
            self.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay / 4 / UInt64(slices)))) {
                guard !self.finished else { return }
                let deadline = benchNow() &- delay
                for index in stride(from: slice, to: players.count, by: slices) {
                    players[index].peer.acknowledgePending(receivedBefore: deadline)
                }
                slice = (slice + 1) % slices
                next()
            }
        }
        next()
    }

    /// Stops moving, hands back the measurements, and every player says GOODBYE.
    func finish() -> FourInARowBenchLoopResult {
        if !self.finished {
            self.finished = true
            for game in self.games {
                for player in game.players {
                    player.scheduledMove?.cancel()
                    player.scheduledMove = nil
                    self.counters.client.add(player.peer.counters)
                    player.peer.goodbye()
                }
            }
        }
        return FourInARowBenchLoopResult(
            counters: self.counters, acknowledgement: self.acknowledgement, opponent: self.opponent, highestMoved: self.highestMoved)
    }

    func serverWillBeKilled() {
        for game in self.games {
            for player in game.players { player.peer.expectClosure() }
        }
    }

    func failUnstartedGroups(_ error: BenchError) {
        for game in self.games { game.started.fail(error) }
    }

    // MARK: Moves

    /// The player's turn has started: its MOVE goes out a think time from now.
    private func scheduleMove(_ player: FourInARowBenchPlayer) {
        guard !self.finished else { return }
        player.scheduledMove?.cancel()
        let matchID = player.game.matchID
        player.scheduledMove = self.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(self.settings.randomThink())) {
            player.scheduledMove = nil
            self.move(player, matchID: matchID)
        }
    }

    private func move(_ player: FourInARowBenchPlayer, matchID: UInt64) {
        let game = player.game
        guard !self.finished, matchID != 0, matchID == game.matchID, player.peer.matchID == matchID,
            let seat = player.matchSeat
        else { return }
        var random = player.random
        guard let column = FourInARowStrategy.chooseColumn(in: player.cells, disc: FourInARowCells.disc(ofSeat: seat), using: &random)
        else { return }
        player.random = random
        let now = benchNow()
        let body = FourInARowClientMessage.move(FourInARowMove(moveNumber: player.nextMoveNumber, column: UInt8(column)))
            .encoded(allocator: self.allocator)
        if game.recentMoves.count == 2 { game.recentMoves.removeFirst() }
        game.recentMoves.append((matchID, player.nextMoveNumber, now))
        if self.window.contains(now) { self.counters.movesSent += 1 }
        player.peer.send(.matchInput(matchID: matchID, input: body))
    }

    // MARK: Events

    private func received(_ event: FourInARowServerMessage, matchID: UInt64, by player: FourInARowBenchPlayer, now: UInt64) {
        // Events of the game's current match only (seat 1's may come before its MATCH_JOINED is read).
        guard matchID == player.game.matchID else { return }
        switch event {
        case .state(let state):
            self.counters.states += 1
            player.matchSeat = state.players.first { $0.playerID == player.peer.playerID }?.seat
            player.cells = FourInARowCells(state.board)
            player.nextMoveNumber = state.moveNumber
            if state.phase == .playing, let seat = player.matchSeat, state.seatToMove == seat, player.scheduledMove == nil {
                self.scheduleMove(player)
            }
        case .moved(let moved):
            self.moved(moved, matchID: matchID, by: player, now: now)
        case .moveRefused(let refusal):
            self.counters.refused[refusal.reason.rawValue, default: 0] += 1
            // Still this player's turn by its own view: it tries again after another think.
            if player.matchSeat != nil { self.scheduleMove(player) }
        case .gameOver(let over):
            if player.seat == 0 { self.counters.gamesOver[over.reason, default: 0] += 1 }
        }
    }

    private func moved(_ moved: FourInARowMoved, matchID: UInt64, by player: FourInARowBenchPlayer, now: UInt64) {
        let game = player.game
        let inWindow = self.window.contains(now)
        let landing = player.cells.landingRow(column: Int(moved.column))
        if landing != Int(moved.row) { self.counters.boardMismatches += 1 }
        _ = player.cells.drop(FourInARowCells.disc(ofSeat: moved.seat), column: Int(moved.column))
        player.nextMoveNumber = moved.moveNumber &+ 1
        if moved.moveNumber > self.highestMoved[matchID, default: 0] { self.highestMoved[matchID] = moved.moveNumber }
        if let last = game.recentMoves.last(where: { $0.matchID == matchID && $0.moveNumber == moved.moveNumber }), now >= last.sentAt {
            let latency = now - last.sentAt
            if moved.seat == player.matchSeat {
                self.counters.acknowledgedInRun += 1
                if inWindow {
                    self.counters.acknowledged += 1
                    if latency >= FourInARowBenchSettings.targetP99 { self.counters.overTarget += 1 }
                    self.acknowledgement.record(latency)
                }
            } else if inWindow {
                self.counters.opponentMoved += 1
                self.opponent.record(latency)
            }
        } else if inWindow {
            self.counters.unexpectedMoved += 1
        }
        if let next = moved.nextSeat, next == player.matchSeat { self.scheduleMove(player) }
    }

    // MARK: NativeBenchOwner

    func peerAuthenticated(_ peer: NativeBenchPeer) {}

    func peer(_ peer: NativeBenchPeer, answered requestID: UInt32, with result: Result<NativeResponse, NativeError>) {
        guard let player = self.playerOfPeer[ObjectIdentifier(peer)] else { return }
        let game = player.game
        switch result {
        case .success(.matchJoined(let info)):
            peer.matchID = info.matchID
            if player.seat == 0, requestID == game.createRequest {
                game.matchID = info.matchID
                game.players[1].peer.request(.joinMatch(info.matchID))
            }
            game.joinedCount += 1
            if game.joinedCount == game.players.count { game.started.succeed() }
        case .success(let other):
            peer.count(error: "unexpected response \(other)")
        case .failure(let error):
            peer.count(error: "request refused: \(error.code)")
            game.started.fail(BenchError("request \(requestID) of seat \(player.seat) of game \(game.number) refused: \(error)"))
        }
    }

    func peer(_ peer: NativeBenchPeer, received message: NativeServerMessage, reliable: Bool, now: UInt64) {
        guard let player = self.playerOfPeer[ObjectIdentifier(peer)] else { return }
        switch message {
        case .matchEvent(let matchID, let body):
            do {
                self.received(try FourInARowServerMessage(body: body), matchID: matchID, by: player, now: now)
            } catch {
                self.counters.badEvents += 1
            }
        case .matchEnded(let matchID, _):
            if peer.matchID == matchID { peer.matchID = 0 }
            let game = player.game
            // Seat 0 starts the next game; seat 1 joins it when it answers.
            guard player.seat == 0, matchID == game.matchID, !self.finished else { return }
            self.counters.restarts += 1
            self.create(game)
        default:
            break
        }
    }

    func peer(_ peer: NativeBenchPeer, delivered: NativeBenchDelivery, now: UInt64) {}

    func peerCut(_ peer: NativeBenchPeer) {}

    func peerResumed(_ peer: NativeBenchPeer, now: UInt64) {}

    func peerLost(_ peer: NativeBenchPeer) {
        if let player = self.playerOfPeer[ObjectIdentifier(peer)] {
            let errors = peer.counters.errors.keys.sorted().joined(separator: "; ")
            player.game.started.fail(
                BenchError("seat \(player.seat) of game \(player.game.number)'s connection closed\(errors.isEmpty ? "" : " (\(errors))")"))
        }
    }
}
