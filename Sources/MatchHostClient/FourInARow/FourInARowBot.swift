import Logging
import MatchHostWire
import NIOCore
import NIOPosix

/// Headless Four in a Row players: `matchhost bot fourinarow`, and a way for tests to play
/// whole games over real sockets.
///
/// Each bot is a ``MatchHostClient`` with a device of its own (a new player). For each of
/// ``Options/games`` games, the first bot creates a private `fourinarow` match and the second
/// joins it by its invite code; or, with ``Options/matchID`` or ``Options/inviteCode``, one
/// bot joins that match (someone else's, a human's at a terminal say). Every bot then plays
/// by ``FourInARowStrategy`` whenever STATE or MOVED says it is its turn, until GAME_OVER,
/// and disconnects.
public enum FourInARowBot {
    /// Plays every game to its end.
    ///
    /// - Parameters:
    ///   - options: what to play.
    ///   - group: the event loops for the connections.
    ///   - onResult: called once per finished game, as it finishes (from any task).
    /// - Returns: every game's result, by game.
    /// - Throws: ``FourInARowBotError`` (bad options, a silent server, a move refused for a
    ///   reason a correct bot never earns, a match ended before its game), ``NativeError``
    ///   (the server refused a request: `NO_SUCH_MATCH`, `MATCH_FULL`, `JOIN_REFUSED`, ...) and
    ///   ``MatchHostClientError``. The other games are then stopped and every connection closed.
    public static func run(
        _ options: Options,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onResult: @escaping @Sendable (GameResult) -> Void = { _ in }
    ) async throws -> [GameResult] {
        try options.validate()
        return try await withThrowingTaskGroup(of: GameResult.self) { tasks in
            for game in 0..<options.games {
                tasks.addTask {
                    let result = try await self.runGame(game, options: options, group: group)
                    onResult(result)
                    return result
                }
            }
            var results: [GameResult] = []
            for try await result in tasks {
                results.append(result)
            }
            return results.sorted { $0.game < $1.game }
        }
    }

    /// Connects one game's bots, seats them, plays the game and disconnects.
    static func runGame(_ game: Int, options: Options, group: any EventLoopGroup) async throws -> GameResult {
        var clients: [MatchHostClient] = []
        do {
            var players: [FourInARowClient] = []
            for seat in 0..<options.botsPerGame {
                let client = MatchHostClient.bot(
                    host: options.host, port: options.port, gameID: options.gameID, tls: options.tls,
                    deviceID: options.deviceID(game: game, seat: seat), game: "fourinarow", group: group)
                clients.append(client)
                try await client.connect()
                if let first = players.first {
                    if let code = first.inviteCode {
                        players.append(try await FourInARowClient.joinMatch(code: code, on: client))
                    } else {
                        players.append(try await FourInARowClient.joinMatch(first.matchID, on: client))
                    }
                } else if let matchID = options.matchID {
                    players.append(try await FourInARowClient.joinMatch(matchID, on: client))
                } else if let code = options.inviteCode {
                    players.append(try await FourInARowClient.joinMatch(code: code, on: client))
                } else {
                    players.append(try await FourInARowClient.createMatch(on: client, isPrivate: true, label: "bots"))
                }
            }
            let result = try await withThrowingTaskGroup(of: GameResult?.self) { tasks in
                for (seat, player) in players.enumerated() {
                    tasks.addTask {
                        let result = try await self.play(player, game: game, bot: seat, options: options)
                        return seat == 0 ? result : nil
                    }
                }
                var first: GameResult?
                for try await result in tasks {
                    first = first ?? result
                }
                return first!
            }
            for client in clients {
                await client.close()
            }
            return result
        } catch {
            for client in clients {
                await client.close()
            }
            throw error
        }
    }

    /// One bot: moves whenever it is its turn, until GAME_OVER.
    static func play(_ player: FourInARowClient, game: Int, bot: Int, options: Options) async throws -> GameResult {
        let clock = ContinuousClock()
        let name = "game \(game + 1) bot \(bot + 1)"
        var generator = FourInARowBotRandom(seed: options.seed(game: game, seat: bot))
        var view = FourInARowView(myPlayerID: player.playerID)
        /// The number of the last MOVE sent: it is not sent again until the board moves on.
        var sentMove: UInt16?
        var moveDue: ContinuousClock.Instant?
        var idleDeadline = clock.now + options.idleTimeout
        var started: ContinuousClock.Instant?

        while true {
            if let result = view.result {
                return GameResult(
                    game: game, matchID: player.matchID, winnerSeat: result.winnerSeat.map(Int.init),
                    winnerID: result.winnerSeat.flatMap { view.playerID(seat: $0) }, reason: result.reason,
                    moves: view.moveCount, duration: clock.now - (started ?? clock.now))
            }
            let now = clock.now
            if view.isMyTurn, sentMove != view.nextMoveNumber {
                let due = moveDue ?? now + options.moveDelay
                moveDue = due
                if due <= now {
                    guard let seat = view.mySeat,
                        let column = FourInARowStrategy.chooseColumn(
                            in: view.cells, disc: FourInARowCells.disc(ofSeat: seat), using: &generator)
                    else {
                        throw FourInARowBotError("\(name): its turn on a full board")
                    }
                    sentMove = try await player.move(column: column)
                    moveDue = nil
                    continue
                }
            } else {
                moveDue = nil
            }
            guard now < idleDeadline else {
                throw FourInARowBotError("\(name): nothing from the server within \(options.idleTimeout)")
            }
            var wait = idleDeadline - now
            if let due = moveDue {
                wait = min(wait, due - now)
            }
            let event: FourInARowEvent?
            do {
                event = try await player.nextEvent(timeout: wait)
            } catch FourInARowClientError.timedOut {
                continue
            }
            guard let event else {
                throw FourInARowBotError("\(name): the connection closed before the game ended")
            }
            let received = clock.now
            idleDeadline = received + options.idleTimeout
            switch event {
            case .message(let message):
                view.apply(message, at: received)
                if case .state = message {
                    // A full board from the server (after a restart, say): a move sent before
                    // it that it does not show never arrived, so the turn is played again.
                    sentMove = nil
                }
                if started == nil, view.phase != .waiting {
                    started = received
                }
                if case .moveRefused(let refusal) = message {
                    try self.handle(refusal, sentMove: &sentMove, moveDue: &moveDue, at: received, name: name)
                }
            case .presence:
                break
            case .matchEnded(let reason):
                if view.result == nil {
                    throw FourInARowBotError("\(name): the match ended before the game did: \(reason)")
                }
            }
        }
    }

    /// A refused move: tried again later when the refusal is about timing, a failure when a
    /// correct bot should never have sent it.
    private static func handle(
        _ refusal: FourInARowMoveRefused, sentMove: inout UInt16?, moveDue: inout ContinuousClock.Instant?,
        at now: ContinuousClock.Instant, name: String
    ) throws {
        switch refusal.reason {
        case .moveBeingCommitted, .couldNotBeSaved:
            guard refusal.moveNumber == sentMove else { return }
            sentMove = nil
            moveDue = now + .milliseconds(100)
        case .staleMoveNumber, .gameNotRunning:
            // The board has moved on (or ended): the events that say so are on their way.
            break
        case .notYourTurn, .columnFull, .columnOutOfRange:
            throw FourInARowBotError("\(name): move \(refusal.moveNumber) refused: \(refusal.text)")
        }
    }
}
