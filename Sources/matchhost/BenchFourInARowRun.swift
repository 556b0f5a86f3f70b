import NIOCore
import NIOPosix

/// One Four in a Row run (``runGroupedBench(settings:loops:makeLoop:)``): every player
/// connects, the games are created within `--create-spread`, then the warmup, the window, and
/// GOODBYE.
struct FourInARowBenchRun: Sendable {
    let settings: FourInARowBenchSettings
    let loops: [any EventLoop]

    init(settings: FourInARowBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> FourInARowBenchReport {
        let settings = self.settings
        let (results, connections, usage) = try await runGroupedBench(settings: settings, loops: self.loops) { loop, numbers in
            let benchLoop = FourInARowBenchLoop(eventLoop: loop, settings: settings, gameNumbers: numbers)
            return (benchLoop, benchLoop.games.map { $0.started.futureResult })
        }
        return FourInARowBenchReport(settings: settings, connections: connections, results: results, usage: usage)
    }
}

extension FourInARowBenchSettings: GroupedBenchSettings {
    var groupCount: Int { self.games }
    var seatsPerGroup: Int { 2 }
    var groupNoun: String { "game" }
    var groupNounPlural: String { "games" }
    func deviceID(group: Int, seat: Int) -> String { self.deviceID(game: group, seat: seat) }
}
