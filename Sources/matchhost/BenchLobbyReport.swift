/// The results of a lobby run, merged over loops, and how they are printed.
struct LobbyBenchReport: PrintableBenchReport {
    var settings: LobbyBenchSettings
    var driver: LobbyBenchDriverCounters
    var counters = LobbyBenchCounters()
    var histogram = BenchLatencyHistogram()
    /// Per change: request to its first subscriber (mostly the wait for the next publication).
    var firstArrival = BenchLatencyHistogram()
    /// Per change: first to last subscriber (the fan-out of one publication).
    var spread = BenchLatencyHistogram()
    var usage: BenchUsage

    init(settings: LobbyBenchSettings, driver: LobbyBenchDriverCounters, results: [LobbyBenchLoopResult], usage: BenchUsage) {
        self.settings = settings
        self.driver = driver
        var arrivals: [UInt64: LobbyBenchArrivals] = [:]
        for result in results {
            self.counters.add(result.counters)
            self.histogram.merge(result.histogram)
            arrivals.merge(result.arrivals) { var merged = $0; merged.merge($1); return merged }
        }
        for change in arrivals.values {
            self.firstArrival.record(change.first &- change.sentAt)
            self.spread.record(change.last &- change.first)
        }
        // A change not heard of is coalesced if a later change to the same match was heard of
        // (the server publishes a match's state, not its history), missing otherwise.
        let subscribers = UInt64(settings.subscribers)
        for key in driver.changeKeys {
            let heard = arrivals[key]?.count ?? 0
            guard heard < subscribers else { continue }
            let later = ((key & 3) + 1..<4).contains { arrivals[key & ~3 | $0] != nil }
            if later { self.coalesced += subscribers - heard } else { self.missing += subscribers - heard }
        }
        self.usage = usage
    }

    /// Change entries not delivered, where a later change to the same match was (merged into
    /// one publication when the server published late), and where none was.
    var coalesced: UInt64 = 0
    var missing: UInt64 = 0

    /// Every subscriber should hear of every change made in the window.
    var expected: UInt64 { self.driver.changesInWindow * UInt64(self.settings.subscribers) }

    func print(json: Bool) {
        let s = self.settings
        let c = self.counters
        let seconds = s.seconds
        let changesPerSecond = Double(self.driver.changesInWindow) / seconds
        let deliveredPerSecond = Double(c.delivered) / seconds
        let updatesPerSubscriber = Double(c.updatesInWindow) / Double(s.subscribers) / seconds
        let steps = LobbyBenchStep.allCases.map { "\($0)=\(self.driver.changesByStep[$0.rawValue])" }.joined(separator: " ")
        let lateShare = c.delivered > 0 ? Double(c.late) / Double(c.delivered) * 100 : Double.nan

        benchPrint(
            "changes: \(self.driver.changesInWindow) in the window (\(benchFormat(changesPerSecond))/s, target "
                + "\(benchFormatCompact(s.changesPerSecond))/s; \(steps))")
        benchPrint(
            "change entries delivered: \(c.delivered) of \(self.expected) expected (changes × \(s.subscribers) subscribers), "
                + "\(self.coalesced) coalesced with a later change, \(self.missing) missing; "
                + "\(benchFormat(deliveredPerSecond, 0))/s; LOBBY_UPDATE "
                + "\(benchFormat(updatesPerSubscriber, 2))/s per subscriber")
        benchPrint("latency request->LOBBY_UPDATE ms: \(self.histogram.summary)")
        benchPrint("  to the first subscriber, per change: \(self.firstArrival.summary)")
        benchPrint("  first to last subscriber, per change: \(self.spread.summary)")
        benchPrint(
            "over 100 ms: \(c.late) (\(benchFormat(lateShare, 3))%); latency includes the wait for the server's next "
                + "lobby publication (every \(benchFormatCompact(s.lobbyInterval * 1000)) ms, --lobby-interval)")
        benchPrint(
            "driver: \(self.driver.refused) requests refused, \(self.driver.skippedBusy) changes skipped (previous request "
                + "unanswered), slowest answer \(benchFormatMs(self.driver.slowestAnswer)) ms")
        self.usage.print(threads: s.threads, deliveredPerSecond: deliveredPerSecond)

        var problems: [String] = []
        let client = c.client.connectionsLost + self.driver.client.connectionsLost
        if client > 0 { problems.append("\(client) connections closed during the run") }
        if self.missing > 0 { problems.append("\(self.missing) change entries never arrived") }
        if self.coalesced > 0 {
            problems.append("\(self.coalesced) change entries merged with a later change to the match: publications ran late")
        }
        if c.delivered > self.expected { problems.append("\(c.delivered - self.expected) more change entries than expected") }
        if c.unexpected > 0 { problems.append("\(c.unexpected) lobby entries the driver did not cause") }
        if c.unattributed > 0 { problems.append("\(c.unattributed) entries whose request time never became known") }
        if self.driver.skippedBusy > 0 { problems.append("\(self.driver.skippedBusy) changes skipped: the server answered late") }
        var errors = c.client.errors
        errors.merge(self.driver.client.errors, uniquingKeysWith: +)
        for (kind, count) in errors.sorted(by: { $0.key < $1.key }) { problems.append("\(count)× \(kind)") }
        if let serverCPU = self.usage.serverCPU, serverCPU > 90 {
            problems.append("the server used \(benchFormat(serverCPU))% of one core: saturated, latency is mostly queueing")
        }
        if let clientCPU = self.usage.clientCPU, clientCPU > 85 * Double(s.threads) {
            problems.append("the client used \(benchFormat(clientCPU))% CPU: it may be the bottleneck")
        }
        if changesPerSecond < s.changesPerSecond * 0.97 { problems.append("changes below target") }
        for problem in problems { benchPrint("warning: \(problem)") }

        guard json else { return }
        var out = BenchJSON()
        out.add("bench", "lobby")
        out.add("subscribers", s.subscribers)
        out.add("changes_target_per_s", s.changesPerSecond)
        out.add("seconds", s.seconds)
        out.add("warmup", s.warmup)
        out.add("mode", s.mode)
        out.add("step_interval", s.stepInterval)
        out.add("lobby_interval", s.lobbyInterval)
        out.add("driver_matches", s.slots)
        out.add("threads", s.threads)
        out.add("changes", self.driver.changesInWindow)
        out.add("changes_per_s", changesPerSecond)
        out.add("expected", self.expected)
        out.add("delivered", c.delivered)
        out.add("coalesced", self.coalesced)
        out.add("missing", self.missing)
        out.add("delivered_per_s", deliveredPerSecond)
        out.add("updates_per_subscriber_per_s", updatesPerSubscriber)
        out.add("latency_ms", object: self.histogram.json)
        out.add("first_subscriber_ms", object: self.firstArrival.json)
        out.add("spread_ms", object: self.spread.json)
        out.add("over_100ms", c.late)
        self.usage.add(to: &out, deliveredPerSecond: deliveredPerSecond)
        out.add("skipped_busy", self.driver.skippedBusy)
        out.add("refused", self.driver.refused)
        out.add("unexpected", c.unexpected)
        out.add("unattributed", c.unattributed)
        out.add("arrived_before_send_time", c.arrivedBeforeSendTime)
        out.add("connections_lost", client)
        out.add("errors", UInt64(errors.values.reduce(0, +)))
        benchPrint(out.line)
    }
}
