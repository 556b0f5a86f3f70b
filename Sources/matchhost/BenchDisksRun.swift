import NIOCore
import NIOPosix

/// One Disks run (``runGroupedBench(settings:loops:makeLoop:)``): every player connects, then
/// the matches are created within `--create-spread` (so they play, and reach their time limit,
/// together), then the warmup, the window, and GOODBYE.
struct DisksBenchRun: Sendable {
    let settings: DisksBenchSettings
    let loops: [any EventLoop]

    init(settings: DisksBenchSettings, group: MultiThreadedEventLoopGroup) {
        self.settings = settings
        self.loops = Array(group.makeIterator())
    }

    func run() async throws -> DisksBenchReport {
        let settings = self.settings
        let (results, connections, usage) = try await runGroupedBench(settings: settings, loops: self.loops) { loop, numbers in
            let benchLoop = DisksBenchLoop(eventLoop: loop, settings: settings, matchNumbers: numbers)
            return (benchLoop, benchLoop.matches.map { $0.started.futureResult })
        }
        return DisksBenchReport(settings: settings, connections: connections, results: results, usage: usage)
    }
}

extension DisksBenchSettings: GroupedBenchSettings {
    var groupCount: Int { self.matches }
    var seatsPerGroup: Int { self.players }
    var groupNoun: String { "match" }
    var groupNounPlural: String { "matches" }
    func deviceID(group: Int, seat: Int) -> String { self.deviceID(match: group, seat: seat) }
}
