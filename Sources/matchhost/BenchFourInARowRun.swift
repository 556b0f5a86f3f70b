import NIOCore
import NIOPosix

/// One Four in a Row run: every player connects, the games are created within `--create-spread`,
/// then the warmup, the window, and GOODBYE.
struct FourInARowBenchRun: Sendable {
    let settings: FourInARowBenchSettings
    let loops: [any EventLoop]

    init(settings: FourInARowBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> FourInARowBenchReport {
        let settings = self.settings
        let loopCount = self.loops.count

        // Game g lives on loop g % threads, both its players with it.
        let (states, startedFutures) = try await benchPlaceGroups(settings.games, on: self.loops) { loop, numbers in
            let benchLoop = FourInARowBenchLoop(eventLoop: loop, settings: settings, gameNumbers: numbers)
            return (benchLoop, benchLoop.games.map { $0.started.futureResult })
        }

        var channels: [any Channel] = []
        do {
            let setupStart = benchNow()
            channels = try await benchConnectAll(total: settings.games * 2, batch: settings.connectBatch) { [states] index in
                let game = index / 2
                let seat = index % 2
                let loopIndex = game % loopCount
                let loop = self.loops[loopIndex]
                let state = states[loopIndex]
                let peer = try await loop.submit {
                    NIOLoopBound(state.value.games[game / loopCount].players[seat].peer, eventLoop: loop)
                }.get()
                return try await nativeBenchConnectAuthenticated(
                    peer, loop: loop, to: settings.address, host: settings.host, port: settings.port,
                    name: "player \(seat) of game \(game) (\(settings.deviceID(game: game, seat: seat)))")
            }
            let connected = benchNow()
            let spread = UInt64((settings.createSpread * 1e9).rounded())
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { state.value.createGames(spread: spread) }.get()
                loop.scheduleTask(deadline: .now() + .seconds(30) + .nanoseconds(Int64(spread))) {
                    state.value.failUnstartedGames(BenchError("game not joined by both players within 30 s"))
                }
            }
            for future in startedFutures {
                try await future.get()
            }
            let started = benchNow()
            benchPrint(
                "setup: \(channels.count) players connected and authenticated in "
                    + "\(benchFormat(Double(connected - setupStart) / 1e9, 2))s, \(settings.games) games created and joined in "
                    + "\(benchFormat(Double(started - connected) / 1e9, 2))s")

            let (_, window) = BenchWindow.afterWarmup(settings.warmup, duration: settings.seconds)
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { [window] in state.value.start(window: window) }.get()
            }

            let usage = try await BenchUsage.measure(serverPID: settings.serverPID, over: window)
            // Moves sent at the window's end are acknowledged a little later: they count in the
            // whole-run total that the stored move log is checked against.
            try await Task.sleep(nanoseconds: 500_000_000)

            var results: [FourInARowBenchLoopResult] = []
            for (loop, state) in zip(self.loops, states) {
                results.append(try await loop.submit { state.value.finish() }.get())
            }
            // Give the GOODBYEs time to reach the server before the connections close.
            try await Task.sleep(nanoseconds: 300_000_000)
            await benchClose(channels)
            await self.failPending(states: states)
            return FourInARowBenchReport(settings: settings, connections: channels.count, results: results, usage: usage)
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
    private func failPending(states: [NIOLoopBound<FourInARowBenchLoop>]) async {
        for (loop, state) in zip(self.loops, states) {
            _ = try? await loop.submit { state.value.failUnstartedGames(BenchError("bench stopped")) }.get()
        }
    }
}
