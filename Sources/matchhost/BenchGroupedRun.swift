import NIOCore
import NIOPosix

/// What ``runGroupedBench(settings:loops:makeLoop:)`` needs of a bench whose players
/// play in groups created on the server (Disks matches, Four in a Row games).
protocol GroupedBenchSettings: Sendable {
    var host: String { get }
    var port: Int { get }
    var address: SocketAddress { get }
    var seconds: Double { get }
    var warmup: Double { get }
    var createSpread: Double { get }
    var serverPID: String? { get }
    var connectBatch: Int { get }
    /// How many groups, and players in each.
    var groupCount: Int { get }
    var seatsPerGroup: Int { get }
    /// What a group is called in messages ("match", "game"), and more than one ("matches").
    var groupNoun: String { get }
    var groupNounPlural: String { get }
    /// The device id of `seat` in group `group`.
    func deviceID(group: Int, seat: Int) -> String
    /// Kill the server at the window's end (``BenchPhases/killServer``).
    var killServer: Bool { get }
}

extension GroupedBenchSettings {
    /// Only the benches that check what a crash keeps kill the server.
    var killServer: Bool { false }
}

/// One event loop's groups of a grouped bench. Loop-confined.
protocol GroupedBenchLoop: BenchLoop {
    /// The peer of `seat` in the loop's group at `index` (the loop holds groups
    /// index, index + loops, ...).
    func peer(group index: Int, seat: Int) -> NativeBenchPeer
    /// Creates every group's first match, spread over `spread` ns (see ``benchStagger``).
    func createGroups(spread: UInt64)
}

/// Calls `create` for each of `numbers` (groups of `total`), group n at n/total of `spread` ns
/// from now, so that the groups' timers (ticks due at their start plus whole intervals, turns)
/// are spread out as independent groups' are, rather than all due at once.
func benchStagger(_ numbers: [Int], total: Int, spread: UInt64, on loop: any EventLoop, _ create: @escaping (Int) -> Void) {
    for (index, number) in numbers.enumerated() {
        let delay = UInt64(Double(spread) * Double(number) / Double(total))
        if delay == 0 {
            create(index)
        } else {
            loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay))) { create(index) }
        }
    }
}

/// A grouped bench run (``runLoadBench``): group g lives on loop g % loops with all its
/// players; every player connects and authenticates, the groups are created within
/// `createSpread`, then the warmup, the window, half a second of drain, and GOODBYE.
/// - Returns: each loop's result, the connections made, and the server's usage in the window.
func runGroupedBench<Settings: GroupedBenchSettings, Loop: GroupedBenchLoop>(
    settings: Settings, loops: [any EventLoop],
    makeLoop: @escaping @Sendable (any EventLoop, [Int]) -> (Loop, [EventLoopFuture<Void>])
) async throws -> (results: [Loop.LoopResult], connections: Int, usage: BenchUsage) {
    let loopCount = loops.count
    let seats = settings.seatsPerGroup
    let (states, startedFutures) = try await benchPlaceGroups(settings.groupCount, on: loops, make: makeLoop)
    let spread = UInt64((settings.createSpread * 1e9).rounded())
    let phases = BenchPhases(
        warmup: settings.warmup, seconds: settings.seconds, drain: .milliseconds(500), goodbye: .milliseconds(300),
        serverPID: settings.serverPID, killServer: settings.killServer, startTimeout: .seconds(30) + .nanoseconds(Int64(spread)),
        notStarted: "\(settings.groupNoun) not joined by all its players within 30 s")
    return try await runLoadBench(
        loops: loops, states: states, started: startedFutures, phases: phases,
        connect: {
            try await benchConnectAll(total: settings.groupCount * seats, batch: settings.connectBatch) { [states] index in
                let group = index / seats
                let seat = index % seats
                let loop = loops[group % loopCount]
                let state = states[group % loopCount]
                let peer = try await loop.submit {
                    NIOLoopBound(state.value.peer(group: group / loopCount, seat: seat), eventLoop: loop)
                }.get()
                return try await nativeBenchConnectAuthenticated(
                    peer, loop: loop, to: settings.address, host: settings.host, port: settings.port,
                    name: "player \(seat) of \(settings.groupNoun) \(group) (\(settings.deviceID(group: group, seat: seat)))")
            }
        },
        begin: { $0.createGroups(spread: spread) },
        setupLine: { connections, connectSeconds, startSeconds in
            "setup: \(connections) players connected and authenticated in \(benchFormat(connectSeconds, 2))s, "
                + "\(settings.groupCount) \(settings.groupNounPlural) created and joined in \(benchFormat(startSeconds, 2))s"
        })
}
