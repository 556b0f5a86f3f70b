import NIOCore
import NIOPosix

/// One lobby run: subscribers connect and subscribe, the driver connects and changes the
/// lobby through the warmup and the window, then everything drains and says GOODBYE.
struct LobbyBenchRun: Sendable {
    let settings: LobbyBenchSettings
    let loops: [any EventLoop]

    init(settings: LobbyBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> LobbyBenchReport {
        let settings = self.settings
        let loopCount = self.loops.count

        // Subscriber i lives on loop i % threads; the driver on the first loop.
        var states: [NIOLoopBound<LobbyBenchLoop>] = []
        for (loopIndex, loop) in self.loops.enumerated() {
            let numbers = Array(stride(from: loopIndex, to: settings.subscribers, by: loopCount))
            states.append(
                try await loop.submit {
                    NIOLoopBound(LobbyBenchLoop(eventLoop: loop, settings: settings, subscriberNumbers: numbers), eventLoop: loop)
                }.get())
        }
        let driverLoop = self.loops[0]
        let driver = try await driverLoop.submit {
            NIOLoopBound(LobbyBenchDriver(eventLoop: driverLoop, settings: settings), eventLoop: driverLoop)
        }.get()

        var channels: [any Channel] = []
        do {
            let setupStart = benchNow()
            channels = try await benchConnectAll(total: settings.subscribers, batch: settings.connectBatch) { [states] index in
                let loopIndex = index % loopCount
                let loop = self.loops[loopIndex]
                let state = states[loopIndex]
                let peer = try await loop.submit { NIOLoopBound(state.value.peers[index / loopCount], eventLoop: loop) }.get()
                return try await nativeBenchConnectAuthenticated(
                    peer, loop: loop, to: settings.address, host: settings.host, port: settings.port,
                    name: "subscriber \(index) (\(settings.subscriberDeviceID(index)))")
            }
            let connected = benchNow()
            for (loop, state) in zip(self.loops, states) {
                loop.scheduleTask(in: .seconds(30)) { state.value.fail(BenchError("not every subscriber subscribed within 30 s")) }
            }
            var listed: UInt64 = 0
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { state.value.allSubscribed.futureResult }.get().get()
            }
            let subscribed = benchNow()

            let driverPeers = try await driverLoop.submit { driver.value.peers.map { NIOLoopBound($0, eventLoop: driverLoop) } }.get()
            channels += try await benchConnectAll(total: driverPeers.count, batch: settings.connectBatch) { index in
                try await nativeBenchConnectAuthenticated(
                    driverPeers[index], loop: driverLoop, to: settings.address, host: settings.host, port: settings.port,
                    name: "driver session \(index)")
            }
            for (loop, state) in zip(self.loops, states) {
                listed += try await loop.submit { state.value.counters.listedAtSubscribe }.get()
            }
            benchPrint(
                "setup: \(settings.subscribers) subscribers connected in \(benchFormat(Double(connected - setupStart) / 1e9, 2))s, "
                    + "subscribed in \(benchFormat(Double(subscribed - connected) / 1e9, 2))s "
                    + "(\(listed) matches listed at subscription); driver: \(driverPeers.count) sessions")

            // Changes start at the epoch; the window opens after the warmup.
            let period = UInt64((settings.slotPeriodSeconds * 1e9).rounded())
            let (epoch, window) = BenchWindow.afterWarmup(settings.warmup, duration: settings.seconds)
            for (loop, state) in zip(self.loops, states) {
                try await loop.submit { [window] in state.value.start(window: window) }.get()
            }
            let audiences = zip(self.loops, states).map { LobbyBenchDriver.Audience(loop: $0, state: $1) }
            try await driverLoop.submit { [window] in
                driver.value.start(audiences: audiences, epoch: epoch, period: period, window: window)
            }.get()

            let usage = try await BenchUsage.measure(serverPID: settings.serverPID, over: window)

            // Changes stopped at the window's end; the last ones are published within an interval.
            try await Task.sleep(nanoseconds: UInt64(max(1, 4 * settings.lobbyInterval) * 1e9))

            let driverCounters = try await driverLoop.submit { driver.value.finish() }.get()
            var results: [LobbyBenchLoopResult] = []
            for (loop, state) in zip(self.loops, states) {
                results.append(try await loop.submit { state.value.finish() }.get())
            }
            // Give the GOODBYEs time to reach the server before the connections close.
            try await Task.sleep(nanoseconds: 300_000_000)
            await benchClose(channels)
            return LobbyBenchReport(settings: settings, driver: driverCounters, results: results, usage: usage)
        } catch {
            _ = try? await driverLoop.submit { _ = driver.value.finish() }.get()
            for (loop, state) in zip(self.loops, states) {
                _ = try? await loop.submit {
                    state.value.fail(BenchError("bench stopped"))
                    _ = state.value.finish()
                }.get()
            }
            await benchClose(channels)
            throw error
        }
    }
}
