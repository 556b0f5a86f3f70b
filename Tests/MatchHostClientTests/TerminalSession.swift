import Foundation
import MatchHostProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whether `tmux` can be run here: the terminal tests drive `matchhost play` through it, as a
/// person at a terminal would (keys in, the screen read back).
let tmuxAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")

/// The word after `prefix` on a screen (up to a space or the line's end).
func screenWord(after prefix: String, in screen: String) -> String? {
    guard let range = screen.range(of: prefix) else { return nil }
    return screen[range.upperBound...].split(whereSeparator: { $0 == " " || $0 == "\n" }).first.map(String.init)
}

/// Whether a line of `screen` starts with `prefix` and contains each of `parts`.
func screenHasLine(in screen: String, startingWith prefix: String, containing parts: [String]) -> Bool {
    screen.split(separator: "\n").contains { line in line.hasPrefix(prefix) && parts.allSatisfy { line.contains($0) } }
}

/// One `tmux` server of its own (a private socket, in a directory of its own that goes with it,
/// so a user's sessions are never touched)
/// holding a window per program: keys are sent to it and its screen read back as text. A
/// program's window stays after it exits, so that its last screen can still be read.
final class TerminalSessions: @unchecked Sendable {
    /// The tmux server's socket, its configuration (read by the tmux server when the first
    /// window starts it; no user configuration) and the programs' exit statuses.
    private let files = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-tmux-\(UUID().uuidString)")
    private var configuration: URL { self.files.appendingPathComponent("tmux.conf") }
    private var socket: URL { self.files.appendingPathComponent("tmux.socket") }

    init() {
        try? FileManager.default.createDirectory(at: self.files, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: self.configuration.path, contents: Data("set -g remain-on-exit on\n".utf8))
    }

    deinit {
        try? FileManager.default.removeItem(at: self.files)
    }

    /// Runs `arguments` (the matchhost binary's) in a new detached window `name`, `columns` ×
    /// `rows`. Its exit status goes to a file of its own (``waitForExit(_:seconds:)``).
    func start(_ name: String, matchhost arguments: [String], columns: Int = 100, rows: Int = 30) async throws {
        let command = ([MatchHostBinary.url.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        try await self.tmux(
            ["new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)", "\(command); echo $? > '\(self.statusPath(name))'"])
    }

    /// Types `keys` (each a key name or text, as `tmux send-keys` takes them) into `name`.
    func send(_ keys: String..., to name: String) async throws {
        try await self.tmux(["send-keys", "-t", name] + keys)
    }

    /// The screen of `name` as it is now, one string per row.
    func screen(_ name: String) async throws -> String {
        try await self.tmux(["capture-pane", "-p", "-t", name])
    }

    /// Reads the screen of `name` until `condition` holds for it (for at most `seconds`);
    /// returns that screen, or throws with the last one seen.
    @discardableResult
    func waitForScreen(
        _ name: String, _ what: String, seconds: Double = 15, until condition: (String) -> Bool
    ) async throws -> String {
        var last = ""
        let screen = try await Self.poll(seconds: seconds) { () async throws -> String? in
            last = try await self.screen(name)
            return condition(last) ? last : nil
        }
        guard let screen else { throw TimedOut(what: "\(what) on \(name)'s screen; it shows:\n\(last)") }
        return screen
    }

    /// ``waitForScreen(_:_:seconds:until:)`` for a screen that contains `text`.
    @discardableResult
    func waitForScreen(_ name: String, containing text: String, seconds: Double = 15) async throws -> String {
        try await self.waitForScreen(name, "\"\(text)\"", seconds: seconds) { $0.contains(text) }
    }

    /// Waits until the program in `name` has exited (for at most `seconds`); returns its exit
    /// status. From a file, not from tmux: tmux may mark a window dead before it has its
    /// program's status or the last of its output.
    func waitForExit(_ name: String, seconds: Double = 15) async throws -> Int32 {
        let status = try await Self.poll(seconds: seconds) { () async throws -> Int32? in
            let written = (try? String(contentsOfFile: self.statusPath(name), encoding: .utf8)) ?? ""
            return written.hasSuffix("\n") ? Int32(written.dropLast()) : nil
        }
        guard let status else {
            throw TimedOut(what: "the end of \(name)'s program; its screen shows:\n\((try? await self.screen(name)) ?? "")")
        }
        return status
    }

    /// Asks `check` every 50 ms until it has an answer, for at most `seconds`; nil if none came.
    private static func poll<Answer>(seconds: Double, _ check: () async throws -> Answer?) async throws -> Answer? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if let answer = try await check() { return answer }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    private func statusPath(_ name: String) -> String {
        self.files.appendingPathComponent("\(name).status").path
    }

    /// Ends every window and the tmux server. Harmless when already closed.
    func close() async {
        _ = try? await self.tmux(["kill-server"])
    }

    /// Runs `body` with a new set of sessions, and closes them however `body` ends.
    static func using<Value>(_ body: (TerminalSessions) async throws -> Value) async throws -> Value {
        let terminals = TerminalSessions()
        do {
            let value = try await body(terminals)
            await terminals.close()
            return value
        } catch {
            await terminals.close()
            throw error
        }
    }

    @discardableResult
    private func tmux(_ arguments: [String]) async throws -> String {
        let prefix = ["/usr/bin/tmux", "-S", self.socket.path, "-f", self.configuration.path]
        let finished = await onOwnThread { Result { try Self.run(prefix + arguments) } }
        let (status, printed, complaint) = try finished.get()
        guard status == 0 else { throw TerminalFailure(command: arguments.joined(separator: " "), status: status, message: complaint) }
        return printed
    }

    /// Runs `argv` to its exit with its output in files. Not through pipes: the tmux server
    /// that the first command starts stays behind holding what it inherited, and a pipe it
    /// holds would never end; ``ChildProcess`` gives it nothing else of this process.
    private static func run(_ argv: [String]) throws -> (Int32, String, String) {
        let directory = FileManager.default.temporaryDirectory.path
        let outputPath = "\(directory)/matchhost-tmux-\(UUID().uuidString).out"
        let errorsPath = "\(directory)/matchhost-tmux-\(UUID().uuidString).err"
        defer {
            unlink(outputPath)
            unlink(errorsPath)
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                argv[0], Array(argv.dropFirst()), environment: ["TMUX": nil, "TERM": "xterm-256color"],
                standardOutput: .file(outputPath), standardError: .file(errorsPath))
        } catch {
            throw TerminalFailure(command: argv.joined(separator: " "), status: -1, message: "\(error)")
        }
        child.waitUntilExit()
        let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let complaint = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        // A signal shows as its number + 128, as a shell says it.
        let exitStatus = child.terminationReason == .exit ? child.terminationStatus : 128 + child.terminationStatus
        return (exitStatus, printed, complaint)
    }
}

/// A `tmux` command that failed.
struct TerminalFailure: Error, CustomStringConvertible {
    var command: String
    var status: Int32
    var message: String

    var description: String { "tmux \(self.command) exited with \(self.status): \(self.message)" }
}
