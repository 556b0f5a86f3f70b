import Foundation
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// `matchhost serve` as a user runs it: a real process, a real port, a real signal.
@Suite(.serialized) struct ServeProcessTests {
    /// The `matchhost` binary built beside this test bundle.
    static var binary: URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("matchhost")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        // `swift build` (or `swift test`, which builds every product) puts it here.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/matchhost")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func servePrintsItsAddressAndExitsZeroOnSignal(signal: Int32) async throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--host", "127.0.0.1", "--catrace-port", "0", "--log-level", "warning"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The first stdout line names the bound address.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix("catrace listening on 127.0.0.1:"))
        let port = try #require(Int(text.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        #expect(port > 0)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = try await TestCatRaceClient.connect(port: port, group: group, id: "G:Proc")
        #expect(try await client.next() == .notInMatch)

        kill(process.processIdentifier, signal)
        try await client.waitUntilClosed()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        try await group.shutdownGracefully()
    }
}
