import MatchHostWire

/// The results of a Four in a Row run, merged over loops, and how they are printed.
struct FourInARowBenchReport: PrintableBenchReport {
    var settings: FourInARowBenchSettings
    var connections: Int
    var counters = FourInARowBenchCounters()
    var acknowledgement = BenchLatencyHistogram()
    var opponent = BenchLatencyHistogram()
    /// See ``FourInARowBenchLoopResult/highestMoved``.
    var highestMoved: [UInt64: UInt16] = [:]
    var usage: BenchUsage

    init(settings: FourInARowBenchSettings, connections: Int, results: [FourInARowBenchLoopResult], usage: BenchUsage) {
        self.settings = settings
        self.connections = connections
        for result in results {
            self.counters.add(result.counters)
            self.acknowledgement.merge(result.acknowledgement)
            self.opponent.merge(result.opponent)
            self.highestMoved.merge(result.highestMoved, uniquingKeysWith: max)
        }
        self.usage = usage
    }

    /// MOVE_REFUSED in all.
    var refusals: UInt64 { self.counters.refused.values.reduce(0, +) }

    /// Nothing went wrong that would make the latencies meaningless: no refusal, no lost
    /// connection, no error, every MOVED one the bench expected and consistent with its board.
    var isClean: Bool {
        let c = self.counters
        return self.refusals == 0 && c.client.connectionsLost == 0 && c.client.errors.isEmpty && c.unexpectedMoved == 0
            && c.boardMismatches == 0 && c.badEvents == 0
    }

    func print(json: Bool) {
        let s = self.settings
        let c = self.counters
        let movesPerSecond = Double(c.acknowledged) / s.seconds
        let overShare = c.acknowledged > 0 ? Double(c.overTarget) / Double(c.acknowledged) * 100 : Double.nan
        let gamesOver = c.gamesOver.values.reduce(0, +)
        let reasons = c.gamesOver.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key)" }
            .joined(separator: ", ")

        benchPrint(
            "moves: \(benchFormat(movesPerSecond))/s acknowledged (\(c.acknowledged) in the window, \(c.movesSent) MOVE sent in it), "
                + "refused: \(self.refusals)")
        benchPrint("MOVE -> MOVED to the mover (acknowledgement) ms: \(self.acknowledgement.summary)")
        benchPrint("MOVE -> MOVED to the opponent ms: \(self.opponent.summary)")
        benchPrint("acknowledgements of 2 ms or more: \(c.overTarget) (\(benchFormat(overShare, 3))%)")
        benchPrint(
            "games: \(gamesOver) GAME_OVER\(reasons.isEmpty ? "" : " (\(reasons))"), \(c.restarts) games started again; "
                + "moves acknowledged over the whole run: \(c.acknowledgedInRun); pings answered: \(c.client.pingsAnswered)")
        if s.killServer {
            let moves = self.highestMoved.values.reduce(0) { $0 + Int($1) }
            benchPrint(
                "server killed (SIGKILL) at the window's end with the games moving: \(self.highestMoved.count) matches, "
                    + "\(moves) moves that a player got MOVED for, each of which must be stored")
        }
        self.usage.print(threads: s.threads)
        if let micros = self.usage.serverMicrosecondsPerMessage(deliveredPerSecond: movesPerSecond) {
            benchPrint("server cpu per acknowledged move (everything the server did, divided by the moves): \(benchFormat(micros, 1)) µs")
        }

        var problems: [String] = []
        for (reason, count) in c.refused.sorted(by: { $0.key < $1.key }) {
            let name = FourInARowRefusalReason(rawValue: reason).map { "\($0)" } ?? "reason \(reason)"
            problems.append("\(count) MOVE_REFUSED \(name) (must be 0)")
        }
        if c.client.connectionsLost > 0 { problems.append("\(c.client.connectionsLost) connections closed during the run") }
        if c.unexpectedMoved > 0 { problems.append("\(c.unexpectedMoved) MOVED for a move the bench did not send") }
        if c.boardMismatches > 0 { problems.append("\(c.boardMismatches) MOVED with a row other than the player's board says") }
        if c.badEvents > 0 { problems.append("\(c.badEvents) MATCH_EVENT bodies that are not Four in a Row messages") }
        if c.client.duplicateFramesDropped > 0 {
            problems.append("\(c.client.duplicateFramesDropped) duplicate RELIABLE frames dropped")
        }
        for (kind, count) in c.client.errors.sorted(by: { $0.key < $1.key }) { problems.append("\(count)× \(kind)") }
        if let serverCPU = self.usage.serverCPU, serverCPU > 90 {
            problems.append("the server used \(benchFormat(serverCPU))% of one core: saturated, so latency is queueing")
        }
        if let clientCPU = self.usage.clientCPU, clientCPU > 85 * Double(s.threads) {
            problems.append("the client used \(benchFormat(clientCPU))% CPU: it may be the bottleneck (latency includes its queueing)")
        }
        for problem in problems { benchPrint("warning: \(problem)") }

        guard json else { return }
        var out = BenchJSON()
        out.add("bench", "fourinarow")
        out.add("games", s.games)
        out.add("think", s.think)
        out.add("seconds", s.seconds)
        out.add("warmup", s.warmup)
        out.add("create_spread", s.createSpread)
        out.add("threads", s.threads)
        out.add("connections", self.connections)
        out.add("moves_per_s", movesPerSecond)
        out.add("moves_sent", c.movesSent)
        out.add("acknowledged", c.acknowledged)
        out.add("acknowledged_in_run", c.acknowledgedInRun)
        out.add("refused", self.refusals)
        out.add("acknowledgement_ms", object: self.acknowledgement.json)
        out.add("opponent_ms", object: self.opponent.json)
        out.add("acknowledgements_over_2ms", c.overTarget)
        self.usage.add(to: &out)
        out.add("server_cpu_us_per_move", self.usage.serverMicrosecondsPerMessage(deliveredPerSecond: movesPerSecond))
        out.add("games_over", UInt64(gamesOver))
        out.add("restarts", c.restarts)
        out.add("unexpected_moved", c.unexpectedMoved)
        out.add("board_mismatches", c.boardMismatches)
        out.add("connections_lost", c.client.connectionsLost)
        out.add("errors", UInt64(c.client.errors.values.reduce(0, +)))
        benchPrint(out.line)
    }
}
