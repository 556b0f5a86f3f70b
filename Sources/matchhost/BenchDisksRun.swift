import NIOCore
import NIOPosix

/// One Disks run: every player connects, then the matches are created within `--create-spread`
/// (so they play, and reach their time limit, together), then the warmup, the window, and GOODBYE.
struct DisksBenchRun: Sendable {
    let settings: DisksBenchSettings
    let loops: [any EventLoop]

    init(settings: DisksBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> DisksBenchReport {
        let settings = self.settings
        let loopCount = self.loops.count

        // Match m lives on loop m % threads, all its players with it.
        let (states, startedFutures) = try await benchPlaceGroups(settings.matches, on: self.loops) { loop, numbers in
            let benchLoop = DisksBenchLoop(eventLoop: loop, settings: settings, matchNumbers: numbers)
            return (benchLoop, benchLoop.matches.map { $0.started.futureResult })
        }

        var channels: [any Channel] = []
        do {
            let setupStart = benchNow()
            channels = try await benchConnectAll(total: settings.matches * settings.players, batch: settings.connectBatch) {
                [states] index in
                let match = index / settings.players
                let seat = index % settings.players
                let loopIndex = match % loopCount
                let loop = self.loops[loopIndex]
                let state = states[loopIndex]
                let peer = try await loop.submit {
                    NIOLoopBound(state.value.matches[match / loopCount].players[seat].peer, eventLoop: loop)
                }.get()
                return try await nativeBenchConnectAuthenticated(
                    peer, loop: loop, to: settings.address, host: settings.host, port: settings.port,
                    name: "player \(seat) of match \(match) (\(settings.deviceID(match: match, seat: seat)))")
            }
            let connected = benchNow()
            let spread = UInt64((settings.createSpread * 1e9).rounded())
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { state.value.createMatches(spread: spread) }.get()
                loop.scheduleTask(deadline: .now() + .seconds(30) + .nanoseconds(Int64(spread))) {
                    state.value.failUnstartedMatches(BenchError("match not joined by all within 30 s"))
                }
            }
            for future in startedFutures {
                try await future.get()
            }
            let started = benchNow()
            benchPrint(
                "setup: \(channels.count) players connected and authenticated in "
                    + "\(benchFormat(Double(connected - setupStart) / 1e9, 2))s, \(settings.matches) matches created and joined in "
                    + "\(benchFormat(Double(started - connected) / 1e9, 2))s")

            let (epoch, window) = BenchWindow.afterWarmup(settings.warmup, duration: settings.seconds)
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { [window] in state.value.start(epoch: epoch, window: window) }.get()
            }

            let usage = try await BenchUsage.measure(serverPID: settings.serverPID, over: window)
            try await Task.sleep(nanoseconds: 500_000_000)

            var results: [DisksBenchLoopResult] = []
            for (loop, state) in zip(self.loops, states) {
                results.append(try await loop.submit { state.value.finish() }.get())
            }
            // Give the GOODBYEs time to reach the server before the connections close.
            try await Task.sleep(nanoseconds: 300_000_000)
            await benchClose(channels)
            await self.failPending(states: states)
            return DisksBenchReport(settings: settings, connections: channels.count, results: results, usage: usage)
        } catch {
            for (loop, state) in zip(self.loops, states) {
                _ = try? await loop.submit { _ = state.value.finish() }.get()
            }
            await benchClose(channels)
            await self.failPending(states: states)
            throw error
        }
    }

    /// Completes every promise still open, so nothing is left waiting when the loops stop.
    private func failPending(states: [NIOLoopBound<DisksBenchLoop>]) async {
        for (loop, state) in zip(self.loops, states) {
            _ = try? await loop.submit { state.value.failUnstartedMatches(BenchError("bench stopped")) }.get()
        }
    }
}
