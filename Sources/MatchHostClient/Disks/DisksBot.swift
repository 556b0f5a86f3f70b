import Logging
import MatchHostWire
import NIOCore
import NIOPosix

/// Headless Disks players: `matchhost bot disks`, and a way for tests to play whole matches.
///
/// Each match connects its bots (a ``MatchHostClient`` with a device of its own each: new
/// players); the first creates a `disks` match for the match's bots, or joins
/// ``Options/matchID``, and the others join it (each a ``DisksClient``). Every bot folds what
/// it receives into a ``DisksView``; when a disk appears it plans a tap at it after a reaction
/// time drawn around ``Options/reactionTime``, and taps (at ``DisksView/aimPoint(forDisk:)``)
/// when that time comes if the disk is still up, no faster than ``Options/tapRate``. So bots
/// race each other for every disk and different bots win.
///
/// A match is done at GAME_OVER: every bot checks that the scores it counted from the hits
/// match the server's, and that all bots saw the same GAME_OVER; then every bot disconnects.
public enum DisksBot {
    /// Plays every match to its GAME_OVER.
    ///
    /// - Parameters:
    ///   - options: what to play.
    ///   - group: the event loops for the connections.
    ///   - onResult: called once per finished match, as it finishes (from any task).
    /// - Returns: every match's result, in match order.
    /// - Throws: ``DisksBotError`` (bad options, a match not over in time, a match ended without
    ///   GAME_OVER, scores that do not add up), ``NativeError`` (the server refused a request:
    ///   `NO_SUCH_MATCH`, `MATCH_FULL`, ...) or ``MatchHostClientError``. The other matches
    ///   are then stopped and every connection is closed.
    public static func run(
        _ options: Options,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onResult: @escaping @Sendable (MatchResult) -> Void = { _ in }
    ) async throws -> [MatchResult] {
        try options.validate()
        return try await withThrowingTaskGroup(of: MatchResult.self) { tasks in
            for match in 0..<options.matches {
                tasks.addTask {
                    let result = try await self.runMatch(match, options: options, group: group)
                    onResult(result)
                    return result
                }
            }
            var results: [MatchResult] = []
            for try await result in tasks {
                results.append(result)
            }
            return results.sorted { $0.match < $1.match }
        }
    }

    /// Connects one match's bots, creates or joins the match, plays it and disconnects.
    static func runMatch(_ match: Int, options: Options, group: any EventLoopGroup) async throws -> MatchResult {
        var clients: [MatchHostClient] = []
        do {
            // Everyone connects first, so that the seats fill in quick succession: play starts
            // as soon as two players are connected.
            for seat in 0..<options.botsPerMatch {
                let client = MatchHostClient.bot(
                    host: options.host, port: options.port, gameID: options.gameID, tls: options.tls,
                    deviceID: options.deviceID(match: match, seat: seat), game: "disks", group: group)
                clients.append(client)
                try await client.connect()
            }
            var players: [DisksClient] = []
            for client in clients {
                if let matchID = players.first?.matchID ?? options.matchID {
                    players.append(try await DisksClient.joinMatch(matchID, on: client))
                } else {
                    players.append(try await DisksClient.createMatch(on: client, players: options.botsPerMatch))
                }
            }
            let outcomes = try await withThrowingTaskGroup(of: (Int, BotOutcome).self) { tasks in
                for (bot, player) in players.enumerated() {
                    tasks.addTask { (bot, try await self.play(player, match: match, bot: bot, options: options)) }
                }
                var outcomes: [(Int, BotOutcome)] = []
                for try await outcome in tasks {
                    outcomes.append(outcome)
                }
                return outcomes.sorted { $0.0 < $1.0 }.map(\.1)
            }
            let first = outcomes[0]
            for (bot, outcome) in outcomes.enumerated() where outcome.gameOver != first.gameOver {
                throw DisksBotError(
                    "match \(match + 1): bots 1 and \(bot + 1) saw different GAME_OVERs: \(first.gameOver) and \(outcome.gameOver)")
            }
            for client in clients {
                await client.close()
            }
            return MatchResult(
                match: match, matchID: players[0].matchID, reason: first.gameOver.reason,
                winners: first.gameOver.winners.map(Int.init), scores: first.gameOver.scores, duration: first.duration)
        } catch {
            for client in clients {
                await client.close()
            }
            throw error
        }
    }

    /// What one bot saw of its match's end.
    struct BotOutcome {
        var gameOver: DisksGameOver
        /// From the start of play (or this bot's arrival during play) to GAME_OVER.
        var duration: Duration
    }

    /// One bot: taps the disks it sees until GAME_OVER.
    ///
    /// A reaction counts from when the disk appeared on the server (its TICK's `serverTime`,
    /// turned into local time with the smallest arrival delay this bot has seen), not from
    /// when this bot got round to reading it: bots sharing a busy machine then race on their
    /// reactions, not on their place in the scheduler's queues.
    static func play(_ player: DisksClient, match: Int, bot: Int, options: Options) async throws -> BotOutcome {
        let name = "match \(match + 1) bot \(bot + 1)"
        let tapInterval = TimeAmount.nanoseconds(Int64(1e9 / options.tapRate))
        var random = SystemRandomNumberGenerator()
        var view = DisksView(myPlayerID: player.playerID)
        // Planned taps by disk id, and every disk planned for (a tapped disk stays live until
        // the TICK reporting its hit comes).
        var plans: [UInt32: NIODeadline] = [:]
        var planned: Set<UInt32> = []
        var nextTapAllowed = NIODeadline.now()
        var playStart: NIODeadline?
        // Local uptime minus server time, the least seen: where the server's clock is here.
        var serverOffset: Int64?
        let deadline = NIODeadline.now() + TimeAmount(options.matchTimeout)

        while true {
            let now = NIODeadline.now()
            if view.phase == .playing, nextTapAllowed <= now,
                let next = plans.min(by: { $0.value < $1.value }), next.value <= now
            {
                plans[next.key] = nil
                if let point = view.aimPoint(forDisk: next.key) {
                    try await player.tap(x: point.x, y: point.y)
                    nextTapAllowed = now + tapInterval
                }
                continue
            }
            guard now < deadline else {
                throw DisksBotError("\(name): no GAME_OVER within \(options.matchTimeout)")
            }
            var wait = deadline - now
            if view.phase == .playing, let due = plans.values.min() {
                wait = min(wait, max(due, nextTapAllowed) - now)
            }
            let event: DisksEvent?
            do {
                event = try await player.nextEvent(timeout: .nanoseconds(max(0, wait.nanoseconds)))
            } catch DisksClientError.timedOut {
                continue
            }
            guard let event else { throw DisksBotError("\(name): the client closed before GAME_OVER") }
            let arrival = NIODeadline.now()

            var sentAt: UInt64?
            switch event {
            case .message(.gameOver(let over)):
                // Every hit came in a reliable TICK: the scores counted from them must be the server's.
                let counted = over.scores.map { score in
                    view.players.indices.contains(Int(score.seat)) ? view.players[Int(score.seat)].score : 0
                }
                guard counted == over.scores.map(\.score) else {
                    throw DisksBotError(
                        "\(name): counted scores \(counted) from the hits, GAME_OVER says \(over.scores.map(\.score))")
                }
                let played = arrival - (playStart ?? arrival)
                return BotOutcome(gameOver: over, duration: .nanoseconds(played.nanoseconds))
            case .matchEnded(let reason):
                throw DisksBotError("\(name): the match ended without GAME_OVER (\(reason))")
            case .message(.tick(let tick)):
                sentAt = tick.serverTime
            case .message(.state(let state)):
                sentAt = state.serverTime
            default:
                break
            }
            view.apply(event)
            if view.phase == .playing, playStart == nil {
                playStart = arrival
            }
            guard let sentAt else { continue }
            let delay = Int64(truncatingIfNeeded: arrival.uptimeNanoseconds &- sentAt)
            serverOffset = min(serverOffset ?? delay, delay)
            // Plan a tap at each disk seen for the first time; forget plans for disks gone.
            let shown = NIODeadline.uptimeNanoseconds(UInt64(clamping: Int64(clamping: sentAt) &+ (serverOffset ?? 0)))
            for live in view.liveDisks where !planned.contains(live.disk.id) {
                planned.insert(live.disk.id)
                plans[live.disk.id] = shown + TimeAmount(options.drawReaction(using: &random))
            }
            if plans.contains(where: { view.liveDisk(id: $0.key) == nil }) {
                plans = plans.filter { view.liveDisk(id: $0.key) != nil }
            }
        }
    }
}
