import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a load bench keeps on each of its event loops: its groups of players (races,
/// matches, games), their measurements, and their sending schedule. Loop-confined.
protocol BenchLoop: AnyObject, SendableMetatype {
    associatedtype LoopResult: Sendable
    /// Fails the `started` promise of every group that has not started (a no-op for the others).
    func failUnstartedGroups(_ error: BenchError)
    /// Starts the loop's sending; the warmup is over at `window.start`, and `epoch` is the run's time zero.
    func start(epoch: UInt64, window: BenchWindow)
    /// Stops, says goodbye on every connection, and hands back the loop's measurements.
    func finish() -> LoopResult
    /// The server is about to be killed (``BenchPhases/killServer``): its connections' closes
    /// are expected from now on.
    func serverWillBeKilled()
}

extension BenchLoop {
    /// Benches that never kill the server have nothing to prepare.
    func serverWillBeKilled() {}
}

/// How long a load bench's phases last.
struct BenchPhases: Sendable {
    /// Seconds of sending before the measured window, and the window's length.
    var warmup: Double
    var seconds: Double
    /// After the window, for answers still on their way (a move or message sent at the
    /// window's end arrives a little later, and counts in whole-run totals).
    var drain: Duration
    /// After `finish()`, for the goodbyes to reach the server before the connections close
    /// (so that it ends sessions and matches at once rather than after their grace periods).
    var goodbye: Duration
    /// The server whose CPU and memory are measured over the window.
    var serverPID: String?
    /// Kill the server (SIGKILL) at the window's end, with the load still running, instead of
    /// draining and saying goodbye: what was acknowledged must be stored.
    var killServer = false
    /// How long after the connections (and `begin`) every group must have started, and the
    /// error of one that has not.
    var startTimeout: TimeAmount = .seconds(30)
    var notStarted: String
}

/// A load bench's run once its groups are placed on `loops` (`states`, one per loop, and each
/// group's `started` future): `connect` opens every connection; `begin` runs on every loop
/// (groups the server creates on request are asked for there); every group must start within
/// the phases' `startTimeout`; `setupLine` prints how long connecting (first argument) and starting (second) took;
/// then the warmup, the window (the server measured over it), the drain, `finish()` and the
/// goodbyes. Whatever fails, every loop is finished, every connection closed and every promise
/// completed before it returns or throws.
/// - Returns: each loop's result, the connections made, and the server's usage in the window.
func runLoadBench<Loop: BenchLoop>(
    loops: [any EventLoop], states: [NIOLoopBound<Loop>], started: [EventLoopFuture<Void>], phases: BenchPhases,
    connect: () async throws -> [any Channel],
    begin: @escaping @Sendable (Loop) -> Void = { _ in },
    setupLine: (_ connections: Int, _ connectSeconds: Double, _ startSeconds: Double) -> String
) async throws -> (results: [Loop.LoopResult], connections: Int, usage: BenchUsage) {
    /// Runs `body` on every loop with its state, in loop order.
    func onEveryLoop<T: Sendable>(_ body: @escaping @Sendable (Loop) -> T) async throws -> [T] {
        var answers: [T] = []
        for (loop, state) in zip(loops, states) {
            answers.append(try await loop.submit { body(state.value) }.get())
        }
        return answers
    }
    /// Completes every promise still open, so nothing is left waiting when the loops stop.
    func failPending() async {
        _ = try? await onEveryLoop { $0.failUnstartedGroups(BenchError("bench stopped")) }
    }

    var channels: [any Channel] = []
    do {
        let setupStart = benchNow()
        channels = try await connect()
        let connected = benchNow()
        _ = try await onEveryLoop(begin)
        for (loop, state) in zip(loops, states) {
            loop.scheduleTask(in: phases.startTimeout) { [notStarted = phases.notStarted] in
                state.value.failUnstartedGroups(BenchError(notStarted))
            }
        }
        for future in started {
            try await future.get()
        }
        benchPrint(setupLine(channels.count, Double(connected - setupStart) / 1e9, Double(benchNow() - connected) / 1e9))

        let (epoch, window) = BenchWindow.afterWarmup(phases.warmup, duration: phases.seconds)
        _ = try await onEveryLoop { $0.start(epoch: epoch, window: window) }
        let usage = try await BenchUsage.measure(serverPID: phases.serverPID, over: window)
        let killed = phases.killServer ? phases.serverPID.flatMap { pid_t($0) } : nil
        if let killed {
            _ = try await onEveryLoop { $0.serverWillBeKilled() }
            kill(killed, SIGKILL)
        }
        // Answers on their way (from a killed server: what it wrote before it died) arrive.
        try await Task.sleep(for: phases.drain)
        let results = try await onEveryLoop { $0.finish() }
        // No goodbye can reach a killed server.
        if killed == nil { try await Task.sleep(for: phases.goodbye) }
        await benchClose(channels)
        await failPending()
        return (results, channels.count, usage)
    } catch {
        _ = try? await onEveryLoop { _ = $0.finish() }
        await benchClose(channels)
        await failPending()
        throw error
    }
}

/// A bench's counters, added up over its event loops.
protocol BenchCounterSet: Sendable {
    init()
    mutating func add(_ other: Self)
}

/// What one event loop of a bench measured, or all of them merged: its counters and one
/// latency histogram.
struct BenchMeasurements<Counters: BenchCounterSet>: Sendable {
    var counters = Counters()
    var histogram = BenchLatencyHistogram()

    init(counters: Counters, histogram: BenchLatencyHistogram) {
        self.counters = counters
        self.histogram = histogram
    }

    /// Every loop's measurements, merged.
    init(merging loops: [Self]) {
        for loop in loops {
            self.counters.add(loop.counters)
            self.histogram.merge(loop.histogram)
        }
    }
}
