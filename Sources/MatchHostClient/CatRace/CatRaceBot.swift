import Logging
import MatchHostWire
import NIOCore
import NIOPosix

/// Headless Cat Race racers: `matchhost bot catrace`, and a way for tests to play whole races.
///
/// On port 1955 (the default), each race connects its bots (one ``CatRaceClient`` each),
/// waits for every bot's NOT_IN_MATCH, then its first bot sends START_MATCH for all of them
/// (and any ``Options/extraPlayerIDs``, such as a human at a terminal).
///
/// Over the native protocol (``Options/native``), each bot is a ``MatchHostClient`` with a
/// device of its own (a new player); the first bot creates a `catrace` match for the race's
/// bots, or joins ``Options/matchID``, and the others join it (each a ``CatRaceNativeClient``).
///
/// Then, on either protocol, every bot waits until the race's line-up is complete and taps
/// at ``Options/tapRate`` (each interval jittered by up to ±25 %; taps missed while the bot
/// was held up are skipped, not bunched) until GAME_OVER. After a round the first bot sends
/// RESTART_MATCH until ``Options/rounds`` rounds are done, then ends the race on the server
/// (PLAYER_CONNECTED with continueMatch 0 on port 1955, LEAVE_MATCH natively) and every bot
/// disconnects.
public enum CatRaceBot {
    /// What to play.
    public struct Options: Sendable {
        /// The server's host. Default 127.0.0.1.
        public var host = "127.0.0.1"
        /// The server's port: its Cat Race port (default 1955), or its native port (the
        /// server's `--port`, 7355 by default) with ``native``.
        public var port = 1955
        /// Play in `catrace` matches of the native protocol instead of on port 1955.
        public var native = false
        /// Native only: the match the bots join instead of creating one (one race only), e.g.
        /// one a human created with `matchhost play catrace --native`. Its line-up must fill
        /// up (its capacity) before the bots tap.
        public var matchID: MatchIdentifier?
        /// Native only: the game id sent in HELLO. Default `matchhost`.
        public var gameID = "matchhost"
        /// Native only: how the bots speak TLS (a server with `--tls-certificate`); nil (the
        /// default) speaks plaintext.
        public var tls: MatchHostClient.TLS?
        /// Races played at the same time. Default 1.
        public var races = 1
        /// Bots in each race. Default 2.
        public var botsPerRace = 2
        /// Port 1955 only: other players (not bots) seated in every race after the bots, e.g. a
        /// human playing `matchhost play catrace`. A player not connected yet gets a reserved seat.
        public var extraPlayerIDs: [String] = []
        /// Taps per second of each bot. Default 5 (the server refuses more than its
        /// `--max-tap-rate`, 20 by default, beyond a burst of 5).
        public var tapRate: Double = 5
        /// Rounds per race: the first, then one per RESTART_MATCH. Default 1.
        public var rounds = 1
        /// Wait between a round's GAME_OVER and the RESTART_MATCH of the next. Default none.
        public var restartPause: Duration = .zero
        /// The longest a round may take, from its start (or the previous GAME_OVER) to its
        /// GAME_OVER, before the run fails. Default 60 s.
        public var roundTimeout: Duration = .seconds(60)
        /// Part of every bot's player id (`bot-<runID>-<race>-<seat>`; natively its device id),
        /// so concurrent runs do not collide. Default: random.
        public var runID = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)

        /// The default options.
        public init() {}

        /// The player id of bot `seat` of race `race` (both from 0).
        public func playerID(race: Int, seat: Int) -> String {
            "bot-\(self.runID)-\(race)-\(seat)"
        }

        /// The alias of bot `seat` of race `race` (both from 0).
        public func alias(race: Int, seat: Int) -> String {
            "bot \(race + 1).\(seat + 1)"
        }

        /// Checks the numbers, with a message naming the bad one.
        public func validate() throws {
            guard (0...65535).contains(self.port) else { throw CatRaceBotError("the port must be 0-65535") }
            guard self.races >= 1 else { throw CatRaceBotError("there must be at least 1 race") }
            guard self.botsPerRace >= 1 else { throw CatRaceBotError("a race needs at least 1 bot") }
            if self.native {
                guard self.extraPlayerIDs.isEmpty else {
                    throw CatRaceBotError("other players are seated by id on port 1955 only; natively they join the match")
                }
                if self.matchID == nil {
                    guard (2...16).contains(self.botsPerRace) else {
                        throw CatRaceBotError("a match the bots create needs 2-16 bots, not \(self.botsPerRace)")
                    }
                } else {
                    guard self.races == 1 else { throw CatRaceBotError("bots can join a given match in only 1 race") }
                    guard self.botsPerRace <= 15 else { throw CatRaceBotError("at most 15 bots can join a match") }
                }
            } else {
                guard self.matchID == nil else { throw CatRaceBotError("a match id is for the native protocol only") }
                let racers = self.botsPerRace + self.extraPlayerIDs.count
                guard (2...16).contains(racers) else {
                    throw CatRaceBotError("a race needs 2-16 racers (bots and other players), not \(racers)")
                }
                guard self.extraPlayerIDs.isEmpty || self.races == 1 else {
                    throw CatRaceBotError("other players can race in only 1 race at a time")
                }
            }
            guard self.tapRate > 0, self.tapRate.isFinite else { throw CatRaceBotError("the tap rate must be positive") }
            guard self.rounds >= 1 else { throw CatRaceBotError("there must be at least 1 round") }
            guard self.roundTimeout > .zero else { throw CatRaceBotError("the round timeout must be positive") }
            guard self.restartPause >= .zero else { throw CatRaceBotError("the restart pause must not be negative") }
        }
    }

    /// One finished round.
    public struct RoundResult: Sendable, Hashable, CustomStringConvertible {
        /// The race, from 0.
        public var race: Int
        /// The round, from 0.
        public var round: Int
        /// The winner's seat.
        public var winnerIndex: Int
        /// The winner's player id.
        public var winnerID: String
        /// The winner's alias.
        public var winnerAlias: String
        /// From the round's MATCH_STARTED to its GAME_OVER, as the first bot saw them.
        public var duration: Duration

        /// Creates a result.
        public init(race: Int, round: Int, winnerIndex: Int, winnerID: String, winnerAlias: String, duration: Duration) {
            self.race = race
            self.round = round
            self.winnerIndex = winnerIndex
            self.winnerID = winnerID
            self.winnerAlias = winnerAlias
            self.duration = duration
        }

        /// "race 1 round 1: winner seat 2 bot 1.2 (bot-…-0-1) in 8.4 s", counting from 1.
        public var description: String {
            let seconds = Double(self.duration.components.seconds) + Double(self.duration.components.attoseconds) / 1e18
            let tenths = (seconds * 10).rounded() / 10
            return "race \(self.race + 1) round \(self.round + 1): winner seat \(self.winnerIndex + 1) "
                + "\(self.winnerAlias.isEmpty ? "?" : self.winnerAlias) (\(self.winnerID)) in \(tenths) s"
        }
    }

    /// Plays every race to its last round.
    ///
    /// - Parameters:
    ///   - options: what to play.
    ///   - group: the event loops for the connections.
    ///   - onResult: called once per finished round, as it finishes (from any task).
    /// - Returns: every round's result, by race then round.
    /// - Throws: ``CatRaceBotError`` (bad options, a round not finished in time, a race the
    ///   server ended early), ``CatRaceClientError`` (a port-1955 connection failed), or
    ///   natively ``NativeError`` (the server refused a request: `NO_SUCH_MATCH`,
    ///   `MATCH_FULL`, ...) and ``MatchHostClientError``. The other races are then stopped and
    ///   every connection is closed.
    public static func run(
        _ options: Options,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onResult: @escaping @Sendable (RoundResult) -> Void = { _ in }
    ) async throws -> [RoundResult] {
        try options.validate()
        return try await withThrowingTaskGroup(of: [RoundResult].self) { tasks in
            for race in 0..<options.races {
                tasks.addTask {
                    if options.native {
                        return try await self.runNativeRace(race, options: options, group: group, onResult: onResult)
                    }
                    return try await self.runRace(race, options: options, group: group, onResult: onResult)
                }
            }
            var results: [RoundResult] = []
            for try await raceResults in tasks {
                results += raceResults
            }
            return results.sorted { ($0.race, $0.round) < ($1.race, $1.round) }
        }
    }

    /// Port 1955: connects one race's bots, starts the race, plays its rounds and disconnects.
    static func runRace(
        _ race: Int, options: Options, group: any EventLoopGroup, onResult: @escaping @Sendable (RoundResult) -> Void
    ) async throws -> [RoundResult] {
        var clients: [CatRaceClient] = []
        do {
            let seats = 0..<options.botsPerRace
            for seat in seats {
                clients.append(
                    try await CatRaceClient.connect(
                        host: options.host, port: options.port, playerID: options.playerID(race: race, seat: seat),
                        alias: options.alias(race: race, seat: seat), group: group))
            }
            for (seat, client) in clients.enumerated() {
                let answer = try await self.next(client, within: options.roundTimeout, race: race, seat: seat, waitingFor: "NOT_IN_MATCH")
                guard answer == .notInMatch else {
                    throw CatRaceBotError("race \(race + 1) bot \(seat + 1): expected NOT_IN_MATCH, got \(answer)")
                }
            }
            let ids = seats.map { options.playerID(race: race, seat: $0) } + options.extraPlayerIDs
            try await clients[0].startMatch(with: ids)

            let leaderResults = try await self.playAllRounds(clients, race: race, lineUp: ids.count, options: options, onResult: onResult)

            // End the race now rather than leave its seats to the server's grace timers: the
            // first bot quits its match (continueMatch 0) and waits for the NOT_IN_MATCH proving it.
            let leader = clients[0]
            try await leader.send(.playerConnected(PlayerConnected(playerID: leader.playerID, alias: leader.alias, continueMatch: false)))
            while try await self.next(leader, within: .seconds(10), race: race, seat: 0, waitingFor: "NOT_IN_MATCH") != .notInMatch {}
            for client in clients {
                await client.close()
            }
            return leaderResults
        } catch {
            for client in clients {
                await client.close()
            }
            throw error
        }
    }

    /// Native: connects one race's bots (a new device each), creates the race's `catrace`
    /// match or joins ``Options/matchID``, plays its rounds, leaves the match and disconnects.
    static func runNativeRace(
        _ race: Int, options: Options, group: any EventLoopGroup, onResult: @escaping @Sendable (RoundResult) -> Void
    ) async throws -> [RoundResult] {
        var clients: [MatchHostClient] = []
        do {
            var racers: [CatRaceNativeClient] = []
            for seat in 0..<options.botsPerRace {
                let client = MatchHostClient.bot(
                    host: options.host, port: options.port, gameID: options.gameID, tls: options.tls,
                    deviceID: options.playerID(race: race, seat: seat), game: "catrace", group: group)
                clients.append(client)
                try await client.connect()
                if let matchID = racers.first?.matchID ?? options.matchID {
                    racers.append(try await CatRaceNativeClient.joinMatch(matchID, on: client))
                } else {
                    racers.append(try await CatRaceNativeClient.createMatch(on: client, racers: options.botsPerRace))
                }
            }
            let leaderResults = try await self.playAllRounds(
                racers, race: race, lineUp: racers[0].capacity, options: options, onResult: onResult)

            // End the race now rather than leave it to the sessions' ends: LEAVE_MATCH ends it
            // for everyone, and its answer proves it.
            try await racers[0].leave()
            for client in clients {
                await client.close()
            }
            return leaderResults
        } catch {
            for client in clients {
                await client.close()
            }
            throw error
        }
    }

    /// Every bot of a race plays its rounds at once; returns the first bot's results.
    static func playAllRounds(
        _ connections: [any CatRaceConnection], race: Int, lineUp: Int, options: Options,
        onResult: @escaping @Sendable (RoundResult) -> Void
    ) async throws -> [RoundResult] {
        try await withThrowingTaskGroup(of: [RoundResult].self) { tasks in
            for (seat, connection) in connections.enumerated() {
                tasks.addTask {
                    try await self.playRounds(connection, race: race, seat: seat, lineUp: lineUp, options: options, onResult: onResult)
                }
            }
            var results: [RoundResult] = []
            for try await botResults in tasks {
                results += botResults
            }
            return results
        }
    }

    /// One bot: taps through `options.rounds` rounds. The first bot (seat 0) also reports
    /// each round and restarts the race between rounds.
    ///
    /// A round is on once MATCH_STARTED (active) lists this bot and at least `lineUp` racers:
    /// a native `catrace` match runs from its creation and shows every join as a new
    /// MATCH_STARTED, so the bots wait for the whole line-up before they tap.
    static func playRounds(
        _ connection: any CatRaceConnection, race: Int, seat: Int, lineUp: Int, options: Options,
        onResult: @Sendable (RoundResult) -> Void
    ) async throws -> [RoundResult] {
        let clock = ContinuousClock()
        let isLeader = seat == 0
        let interval = Duration.seconds(1 / options.tapRate)
        var view = CatRaceRaceView(myPlayerID: connection.playerID)
        var results: [RoundResult] = []
        var deadline = clock.now + options.roundTimeout
        var nextTap: ContinuousClock.Instant?
        var roundStart = clock.now
        /// Whether a round with the whole line-up is running.
        var running = false

        while results.count < options.rounds {
            let now = clock.now
            if let due = nextTap, running, due <= now {
                if let move = view.tap() {
                    try await connection.send(.movedSelf(move))
                }
                // A bot that fell behind (a loaded machine) skips the taps it missed rather than
                // send them all at once: catching up, it would read nothing, GAME_OVER included,
                // and where a send takes longer than an interval it would never catch up.
                let sent = clock.now
                let next = due + interval * Double.random(in: 0.75...1.25)
                nextTap = next > sent ? next : sent + interval * Double.random(in: 0.75...1.25)
                continue
            }
            guard now < deadline else {
                throw CatRaceBotError(
                    "race \(race + 1) bot \(seat + 1): round \(results.count + 1) not over within \(options.roundTimeout)")
            }
            var wait = deadline - now
            if running, let due = nextTap {
                wait = min(wait, due - now)
            }
            let message: CatRaceServerMessage?
            do {
                message = try await connection.nextMessage(timeout: wait)
            } catch CatRaceClientError.timedOut {
                continue
            } catch CatRaceClientError.matchEnded(let reason) {
                throw CatRaceBotError("race \(race + 1) bot \(seat + 1): the server ended the match (\(reason))")
            }
            guard let message else {
                throw CatRaceBotError("race \(race + 1) bot \(seat + 1): the server closed the connection")
            }
            let wasRunning = running
            view.apply(message)
            running = view.canTap && view.racers.count >= lineUp
            switch message {
            case .matchStarted:
                if running && !wasRunning {
                    roundStart = clock.now
                    // Racers start their taps at different moments of their first interval.
                    nextTap = roundStart + interval * Double.random(in: 0...1)
                }
            case .gameOver:
                guard wasRunning else { break }
                nextTap = nil
                let now = clock.now
                let winner = view.winner
                let result = RoundResult(
                    race: race, round: results.count, winnerIndex: view.winnerIndex ?? -1,
                    winnerID: winner?.playerID ?? "?", winnerAlias: winner?.alias ?? "", duration: now - roundStart)
                results.append(result)
                if isLeader {
                    onResult(result)
                }
                deadline = now + options.roundTimeout
                if results.count < options.rounds, isLeader {
                    if options.restartPause > .zero {
                        try await clock.sleep(for: options.restartPause)
                    }
                    try await connection.send(.restartMatch)
                }
            case .notInMatch:
                throw CatRaceBotError("race \(race + 1) bot \(seat + 1): the server ended the race (NOT_IN_MATCH)")
            default:
                break
            }
        }
        return isLeader ? results : []
    }

    private static func next(
        _ connection: any CatRaceConnection, within timeout: Duration, race: Int, seat: Int, waitingFor what: String
    ) async throws -> CatRaceServerMessage {
        do {
            guard let message = try await connection.nextMessage(timeout: timeout) else {
                throw CatRaceBotError("race \(race + 1) bot \(seat + 1): the server closed the connection before \(what)")
            }
            return message
        } catch CatRaceClientError.timedOut {
            throw CatRaceBotError("race \(race + 1) bot \(seat + 1): no \(what) within \(timeout)")
        }
    }
}

/// Why a ``CatRaceBot`` run failed.
public struct CatRaceBotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, naming the race and bot.
    public var description: String

    /// Creates an error with this message.
    public init(_ description: String) {
        self.description = description
    }
}
