import Foundation

/// The `matchhost` binary built beside the test bundle, for tests that run it as a user would.
public enum MatchHostBinary {
    /// Where it is: beside the test bundle, or where `swift build` (or `swift test`, which
    /// builds every product) puts it.
    public static var url: URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("matchhost")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/matchhost")
    }
}

/// Runs `body`, which blocks (on a child process, say), on a thread of its own and waits for it
/// without holding a thread of Swift's cooperative pool: the pool has a thread per core (two
/// in CI), and a test blocked on one slows or stalls every other test's tasks, whose timeouts
/// then run out.
public func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// How a `matchhost` process that ran to its end ended.
public struct FinishedProcess: Sendable {
    /// Its exit status.
    public var status: Int32
    /// What it printed on standard output (and standard error, if they were merged).
    public var stdout: String
    /// What it printed on standard error, unless merged into ``stdout``.
    public var stderr: String
}

/// Runs the `matchhost` binary with `arguments` until it exits (see ``onOwnThread(_:)``);
/// with `mergingErrors`, standard error goes to the same pipe as standard output. A process
/// still running after `timeout` (a command that should have stopped at once but serves) is
/// sent SIGTERM, so that the test fails on its status instead of hanging.
public func runMatchHostToExit(
    _ arguments: [String], mergingErrors: Bool = false, timeout: Duration = .seconds(120)
) async throws -> FinishedProcess {
    try await onOwnThread {
        Result { () throws -> FinishedProcess in
            let process = Process()
            process.executableURL = MatchHostBinary.url
            process.arguments = arguments
            let output = Pipe()
            let errors = mergingErrors ? output : Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { if process.isRunning { process.terminate() } }
            let stderr = mergingErrors ? "" : String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return FinishedProcess(status: process.terminationStatus, stdout: stdout, stderr: stderr)
        }
    }.get()
}

/// Reads `output` until it holds `count` lines (or ends), without blocking the cooperative pool.
public func readLines(_ count: Int, from output: Pipe) async -> Data {
    let handle = output.fileHandleForReading
    return await onOwnThread {
        var printed = Data()
        while printed.filter({ $0 == UInt8(ascii: "\n") }).count < count {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        return printed
    }
}
