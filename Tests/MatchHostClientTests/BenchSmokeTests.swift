import Foundation
import MatchHostProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every `matchhost bench` load generator, tiny and short, against a real `matchhost serve`
/// process: the benchmarks are how the issues' targets are shown, so they must not rot. Each
/// bench exits non-zero on a protocol error, a lost connection, a refused move or a missing
/// delivery, and prints one JSON line with `--json`; nothing here reads a timing.
@Suite(.serialized) struct BenchSmokeTests {
    /// Runs `matchhost bench` with `arguments` and `--json`; returns its exit status, what it
    /// printed, and its JSON line decoded.
    private func bench(_ arguments: [String]) async throws -> (status: Int32, output: String, json: [String: Any]?) {
        let run = try await runMatchHostToExit(["bench"] + arguments + ["--json"], mergingErrors: true)
        let (status, printed) = (run.status, run.stdout)
        let line = printed.split(separator: "\n").last { $0.hasPrefix("{") }
        let json = line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return (status, printed, json)
    }

    @Test func everyLoadGeneratorRunsCleanAgainstARealServer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-bench-smoke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        // Every bench player is a new device from this machine (as the bench scripts, it lifts the limit).
        let server = try await ServeProcess.start(data: data, arguments: ["--max-new-players-per-minute", "1000000", "--max-new-matches-per-minute", "1000000"])
        let native = ["--port", "\(server.nativePort)", "--server-pid", "\(server.process.processIdentifier)"]
        let catRace = ["--port", "\(server.catRacePort)", "--server-pid", "\(server.process.processIdentifier)"]
        let runs: [(name: String, arguments: [String])] = [
            ("catrace", ["catrace", "--races", "2", "--racers", "4", "--duration", "1", "--warmup", "0.2"] + catRace),
            ("connections", ["connections", "--count", "50", "--settle", "0.2", "--hold", "0"] + catRace),
            ("connections", ["connections", "--native", "--count", "50", "--settle", "0.2", "--hold", "0"] + native),
            ("native", ["native", "--matches", "2", "--players", "4", "--duration", "1", "--warmup", "0.2"] + native),
            (
                "native",
                ["native", "--websocket", "--matches", "2", "--players", "4", "--duration", "1", "--warmup", "0.2", "--port", "\(try #require(server.webPort))"]
            ),
            ("resume", ["resume", "--pairs", "2", "--rounds", "2", "--interval", "0.3", "--warmup", "0.2"] + native),
            ("disks", ["disks", "--matches", "2", "--players", "4", "--seconds", "1", "--warmup", "0"] + native),
            ("fourinarow", ["fourinarow", "--games", "4", "--think", "0.05", "--seconds", "1", "--warmup", "0"] + native),
            ("lobby", ["lobby", "--subscribers", "20", "--changes-per-second", "10", "--seconds", "1", "--warmup", "0"] + native),
            ("matchmaker", ["matchmaker", "--tickets", "500", "--seconds", "3", "--warmup", "1", "--slice", "1"]),
        ]
        for run in runs {
            let result = try await self.bench(run.arguments)
            #expect(result.status == 0, "bench \(run.name) failed:\n\(result.output)")
            #expect(result.json?["bench"] as? String == run.name, "bench \(run.name) printed no JSON line of its own:\n\(result.output)")
        }
        await server.stop(with: SIGTERM)
    }
}
