import Foundation
import MatchHostProcessTesting

#if canImport(Glibc)
import Glibc
#endif

/// A real `matchhost serve` process on 127.0.0.1 with free ports and a data directory of the
/// test's choosing: for what only a whole process shows (a crash, a restart on the same data).
final class ServeProcess: @unchecked Sendable {
    let process: Process
    /// The native port it bound.
    let nativePort: Int
    /// The Cat Race port it bound.
    let catRacePort: Int

    private init(process: Process, nativePort: Int, catRacePort: Int) {
        self.process = process
        self.nativePort = nativePort
        self.catRacePort = catRacePort
    }

    /// Starts the server and waits until it prints its bound addresses.
    /// - Parameter nativePort: the native port to bind; 0 (the default) picks a free one. A
    ///   restart passes the port of the process before it, so that clients find it again.
    static func start(data: URL, nativePort: Int = 0, arguments: [String] = []) async throws -> ServeProcess {
        try await onOwnThread { Result { try Self.startBlocking(data: data, nativePort: nativePort, arguments: arguments) } }.get()
    }

    private static func startBlocking(data: URL, nativePort: Int, arguments: [String]) throws -> ServeProcess {
        let process = Process()
        process.executableURL = MatchHostBinary.url
        process.arguments =
            [
                "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "\(nativePort)", "--data", data.path,
                "--log-level", "error",
            ]
            + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var printed = Data()
        while printed.filter({ $0 == UInt8(ascii: "\n") }).count < 2 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n")
        func port(of listener: String) -> Int? {
            lines.first { $0.hasPrefix("\(listener) listening on ") }.flatMap { Int($0.split(separator: ":").last ?? "") }
        }
        guard let native = port(of: "native"), let catRace = port(of: "catrace") else {
            process.terminate()
            throw TimedOut(what: "the server's bound addresses (it printed \(lines))")
        }
        return ServeProcess(process: process, nativePort: native, catRacePort: catRace)
    }

    /// Sends `signal` and waits for the process to end.
    func stop(with signal: Int32) async {
        kill(self.process.processIdentifier, signal)
        await onOwnThread { self.process.waitUntilExit() }
    }

    /// ``stop(with:)`` for `defer` and `deinit`, which cannot wait without blocking their thread.
    func stopBlocking(with signal: Int32) {
        kill(self.process.processIdentifier, signal)
        self.process.waitUntilExit()
    }

    // A test that fails before its own stop must not leave a server running.
    deinit {
        if self.process.isRunning { self.stopBlocking(with: SIGKILL) }
    }
}
