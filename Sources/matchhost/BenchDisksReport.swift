/// The results of a Disks run, merged over loops, and how they are printed.
struct DisksBenchReport: PrintableBenchReport {
    var settings: DisksBenchSettings
    var connections: Int
    var counters = DisksBenchCounters()
    var histogram = BenchLatencyHistogram()
    var usage: BenchUsage

    init(settings: DisksBenchSettings, connections: Int, results: [DisksBenchLoopResult], usage: BenchUsage) {
        self.settings = settings
        self.connections = connections
        let merged = BenchMeasurements(merging: results)
        self.counters = merged.counters
        self.histogram = merged.histogram
        self.usage = usage
    }

    func print(json: Bool) {
        let s = self.settings
        let c = self.counters
        let seconds = s.seconds
        let ticksPerSecond = Double(c.ticks) / seconds
        let target = Double(s.matches * s.players * s.ticksPerSecond)
        let reliableShare = c.ticks > 0 ? Double(c.reliableTicks) / Double(c.ticks) * 100 : Double.nan

        benchPrint(
            "TICKs delivered: \(benchFormat(ticksPerSecond))/s (all players of all matches at \(s.ticksPerSecond)/s: "
                + "\(benchFormat(target, 0))/s), \(benchFormat(reliableShare))% in RELIABLE frames (ticks with news)")
        benchPrint("tick->delivery ms (from the tick's due time): \(self.histogram.summary)")
        let lateShare = c.ticks > 0 ? Double(c.late) / Double(c.ticks) * 100 : Double.nan
        benchPrint("over 10 ms: \(c.late) (\(benchFormat(lateShare, 3))%)")
        benchPrint(
            "missed ticks (gaps in tick numbers: UNRELIABLE TICKs dropped): \(c.missedTicks); ticks the server skipped "
                + "(late): \(c.serverSkippedTicks); out of order: \(c.outOfOrder)")
        benchPrint(
            "games: \(c.gamesOver) GAME_OVER, \(c.restarts) matches restarted (\(c.restartsInWindow) in the window); "
                + "taps: \(benchFormat(Double(c.taps) / seconds))/s sent, TAP_MISSED \(benchFormat(Double(c.tapsMissed) / seconds))/s; "
                + "pings answered: \(c.client.pingsAnswered)")
        self.usage.print(threads: s.threads, deliveredPerSecond: ticksPerSecond)

        var problems: [String] = []
        if c.client.connectionsLost > 0 { problems.append("\(c.client.connectionsLost) connections closed during the run") }
        if c.outOfOrder > 0 { problems.append("\(c.outOfOrder) TICKs out of order (must be 0)") }
        if c.future > 0 { problems.append("\(c.future) TICKs with a serverTime in the future (is the server on this machine?)") }
        if c.badEvents > 0 { problems.append("\(c.badEvents) MATCH_EVENT bodies that are not Disks messages") }
        if c.client.duplicateFramesDropped > 0 {
            problems.append("\(c.client.duplicateFramesDropped) duplicate RELIABLE frames dropped")
        }
        for (kind, count) in c.client.errors.sorted(by: { $0.key < $1.key }) { problems.append("\(count)× \(kind)") }
        if let serverCPU = self.usage.serverCPU, serverCPU > 90 {
            problems.append(
                "the server used \(benchFormat(serverCPU))% of one core: saturated, so ticks run late and latency is queueing")
        }
        if let clientCPU = self.usage.clientCPU, clientCPU > 85 * Double(s.threads) {
            problems.append("the client used \(benchFormat(clientCPU))% CPU: it may be the bottleneck (latency includes its queueing)")
        }
        if ticksPerSecond < target * 0.97 { problems.append("fewer TICKs than every player at the full tick rate") }
        for problem in problems { benchPrint("warning: \(problem)") }

        guard json else { return }
        var out = BenchJSON()
        out.add("bench", "disks")
        out.add("matches", s.matches)
        out.add("players", s.players)
        out.add("seconds", s.seconds)
        out.add("warmup", s.warmup)
        out.add("tap_rate", s.tapRate)
        out.add("create_spread", s.createSpread)
        out.add("ticks_per_second", s.ticksPerSecond)
        out.add("threads", s.threads)
        out.add("connections", self.connections)
        out.add("ticks_target_per_s", target)
        out.add("ticks_per_s", ticksPerSecond)
        out.add("ticks", c.ticks)
        out.add("reliable_ticks", c.reliableTicks)
        out.add("latency_ms", object: self.histogram.json)
        self.usage.add(to: &out, deliveredPerSecond: ticksPerSecond)
        out.add("over_10ms", c.late)
        out.add("missed_ticks", c.missedTicks)
        out.add("server_skipped_ticks", c.serverSkippedTicks)
        out.add("out_of_order", c.outOfOrder)
        out.add("future", c.future)
        out.add("games_over", c.gamesOver)
        out.add("restarts", c.restarts)
        out.add("restarts_in_window", c.restartsInWindow)
        out.add("taps", c.taps)
        out.add("taps_missed", c.tapsMissed)
        out.add("states", c.states)
        out.add("connections_lost", c.client.connectionsLost)
        out.add("errors", UInt64(c.client.errors.values.reduce(0, +)))
        benchPrint(out.line)
    }
}
