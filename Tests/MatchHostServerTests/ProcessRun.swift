import Foundation

/// Runs `body`, which blocks (on a child process, say), on a thread of its own and waits for it
/// without holding a thread of Swift's cooperative pool: the pool has a thread per core (two
/// in CI), and a test blocked on one slows or stalls every other test's tasks, whose timeouts
/// then run out.
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// How a `matchhost` process that ran to its end ended.
struct FinishedProcess: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the `matchhost` binary with `arguments` until it exits (see ``onOwnThread(_:)``).
func runMatchHostToExit(_ arguments: [String]) async throws -> FinishedProcess {
    try await onOwnThread {
        Result { () throws -> FinishedProcess in
            let process = Process()
            process.executableURL = ServeProcessTests.binary
            process.arguments = arguments
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return FinishedProcess(status: process.terminationStatus, stdout: stdout, stderr: stderr)
        }
    }.get()
}

/// Reads `output` until it holds `count` lines (or ends), without blocking the cooperative pool.
func readLines(_ count: Int, from output: Pipe) async -> Data {
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
