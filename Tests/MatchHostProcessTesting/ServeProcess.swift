import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `matchhost serve` process on 127.0.0.1 with free ports and a data directory of the
/// test's choosing: for what only a whole process shows (a crash, a restart on the same data).
public final class ServeProcess: @unchecked Sendable {
    /// The running process.
    public let process: ChildProcess
    /// The native port it bound.
    public let nativePort: Int
    /// The Cat Race port it bound.
    public let catRacePort: Int
    /// The port of its admin HTTP endpoints; nil when started with `--no-admin`.
    public let adminPort: Int?
    /// Its web port (the browser clients and the WebSocket); nil when started with `--no-web`.
    public let webPort: Int?
    /// Everything it writes to stderr, once it has ended; `nil` unless the log was captured.
    private let log: OutputReader?

    private init(process: ChildProcess, nativePort: Int, catRacePort: Int, adminPort: Int?, webPort: Int?, log: OutputReader?) {
        self.process = process
        self.nativePort = nativePort
        self.catRacePort = catRacePort
        self.adminPort = adminPort
        self.webPort = webPort
        self.log = log
    }

    /// Starts the server and waits until it prints its bound addresses.
    /// - Parameters:
    ///   - nativePort: the native port to bind; 0 (the default) picks a free one. A restart
    ///     passes the port of the process before it, so that clients find it again.
    ///   - capturingLog: keep its stderr (through a pipe, read as it comes) for ``loggedLines()``.
    public static func start(data: URL, nativePort: Int = 0, arguments: [String] = [], capturingLog: Bool = false) async throws -> ServeProcess {
        var attempt = 1
        while true {
            do {
                return try await onOwnThread {
                    Result { try Self.startBlocking(data: data, nativePort: nativePort, arguments: arguments, capturingLog: capturingLog) }
                }.get()
            } catch let error as ServeProcessDidNotStart
                where nativePort != 0 && attempt < 20 && error.printed.contains(where: { $0.hasPrefix("catrace listening") })
            {
                // It bound its Cat Race port (0: any) but not the native one: the port freed by
                // the process before was taken meanwhile, as the local port of one of the other
                // tests' short-lived client connections.
                attempt += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// The lines the server logged, once it has ended (stop it first); empty unless captured.
    public func loggedLines() async -> [String] {
        guard let log = self.log else { return [] }
        return await log.textWhenEnded.split(separator: "\n").map(String.init)
    }

    private static func startBlocking(data: URL, nativePort: Int, arguments: [String], capturingLog: Bool) throws -> ServeProcess {
        // The admin endpoints and the web port on free ports too, unless the test turns them off.
        let admin = !arguments.contains("--no-admin")
        let web = !arguments.contains("--no-web")
        let process = try ChildProcess(
            MatchHostBinary.url.path,
            [
                "serve", "--host", "127.0.0.1", "--catrace-port", "0", "--port", "\(nativePort)", "--data", data.path,
                "--log-level", "error",
            ] + (admin ? ["--admin-port", "0"] : []) + (web ? ["--web-port", "0"] : []) + arguments,
            standardOutput: .pipe, standardError: capturingLog ? .pipe : .discard)
        let log = process.standardError.map(OutputReader.init)
        var printed = Data()
        while printed.filter({ $0 == UInt8(ascii: "\n") }).count < 2 + (admin ? 1 : 0) + (web ? 1 : 0), let output = process.standardOutput {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n")
        func port(of listener: String) -> Int? {
            lines.first { $0.hasPrefix("\(listener) listening on ") }.flatMap { Int($0.split(separator: ":").last ?? "") }
        }
        guard let native = port(of: "native"), let catRace = port(of: "catrace"), !admin || port(of: "admin") != nil,
            !web || port(of: "web") != nil
        else {
            process.terminate()
            throw ServeProcessDidNotStart(printed: lines.map(String.init))
        }
        return ServeProcess(
            process: process, nativePort: native, catRacePort: catRace, adminPort: port(of: "admin"), webPort: port(of: "web"), log: log)
    }

    /// Sends `signal` and waits for the process to end.
    public func stop(with signal: Int32) async {
        self.process.send(signal)
        await onOwnThread { self.process.waitUntilExit() }
    }

    /// ``stop(with:)`` for `defer` and `deinit`, which cannot wait without blocking their thread.
    public func stopBlocking(with signal: Int32) {
        self.process.send(signal)
        self.process.waitUntilExit()
    }

    // A test that fails before its own stop must not leave a server running.
    deinit {
        if self.process.isRunning { self.stopBlocking(with: SIGKILL) }
    }
}

/// `matchhost serve` ended, or stopped printing, before it named every bound address.
public struct ServeProcessDidNotStart: Error, CustomStringConvertible {
    /// The lines it printed on standard output.
    public var printed: [String]
    /// What went wrong, for the test's failure.
    public var description: String { "the server did not print its bound addresses (it printed \(self.printed))" }
}
