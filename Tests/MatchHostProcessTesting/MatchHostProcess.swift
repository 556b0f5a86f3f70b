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
            let process = try ChildProcess(
                MatchHostBinary.url.path, arguments, standardOutput: .pipe, standardError: mergingErrors ? .standardOutput : .pipe)
            defer { if process.isRunning { process.terminate() } }
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { if process.isRunning { process.terminate() } }
            // Read together: a child filling one pipe while this waits on the other would wait for ever.
            let errors = process.standardError.map(OutputReader.init)
            let stdout = String(decoding: process.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            process.waitUntilExit()
            return FinishedProcess(status: process.terminationStatus, stdout: stdout, stderr: errors?.text() ?? "")
        }
    }.get()
}

/// Reads `handle` until it holds `count` lines (or ends), without blocking the cooperative pool.
public func readLines(_ count: Int, from handle: FileHandle) async -> Data {
    await onOwnThread {
        var printed = Data()
        while printed.filter({ $0 == UInt8(ascii: "\n") }).count < count {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        return printed
    }
}

/// Reads a child's output to its end as it comes, on a thread of its own, so that a child
/// writing much never waits on a full pipe.
public final class OutputReader: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `handle`.
    public init(_ handle: FileHandle) {
        Thread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }.start()
    }

    /// What was read, once the writer has closed its end (blocks until then).
    public func text() -> String {
        self.done.wait()
        return String(decoding: self.data, as: UTF8.self)
    }

    /// ``text()`` without blocking the cooperative pool.
    public var textWhenEnded: String {
        get async { await onOwnThread { self.text() } }
    }
}
