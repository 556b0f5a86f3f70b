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

    /// Runs `arguments` (the matchhost binary's) in a new detached window `name`, 100 × 30.
    /// Its exit status goes to a file of its own (``waitForExit(_:seconds:)``).
    func start(_ name: String, matchhost arguments: [String]) async throws {
        let command = ([MatchHostBinary.url.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        try await self.tmux(["new-session", "-d", "-s", name, "-x", "100", "-y", "30", "\(command); echo $? > '\(self.statusPath(name))'"])
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

    /// Runs `argv` to its exit with its output in files. Not `Process`: the tmux server that
    /// the first command starts stays behind holding what it inherited, and `Process` then
    /// never reports the command's own exit; `posix_spawn` and `waitpid` see only the command.
    private static func run(_ argv: [String]) throws -> (Int32, String, String) {
        let directory = FileManager.default.temporaryDirectory.path
        let outputPath = "\(directory)/matchhost-tmux-\(UUID().uuidString).out"
        let errorsPath = "\(directory)/matchhost-tmux-\(UUID().uuidString).err"
        defer {
            unlink(outputPath)
            unlink(errorsPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Nothing else of this process: the tmux server stays behind holding whatever it
        // inherited, so a test's socket held there would not close when its test closes it.
        closeInheritedDescriptors(&actions)
        var environment = ProcessInfo.processInfo.environment
        environment["TMUX"] = nil
        environment["TERM"] = "xterm-256color"
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments + cEnvironment { free(pointer) }
        }
        // The calling thread blocks signals (as the threads of Swift's runtimes do), and a
        // spawned program inherits its mask: tmux would never see SIGCHLD (its programs would
        // stay zombies and their windows would never show their exit) nor SIGTERM. Cleared.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        guard spawned == 0 else { throw TerminalFailure(command: argv.joined(separator: " "), status: spawned, message: "cannot start it") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let complaint = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        // The exit status, from waitpid's encoding (WEXITSTATUS; a signal shows as its number + 128).
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, printed, complaint)
    }
}

/// Adds to `actions` the closing of every descriptor above standard error:
/// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later, looked up at run time
/// since Swift's Glibc module does not declare it), else each descriptor open now.
private func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        return
    }
    // A descriptor closed meanwhile is no error: glibc ignores EBADF for a close action.
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
        posix_spawn_file_actions_addclose(&actions, descriptor)
    }
}

/// A `tmux` command that failed.
struct TerminalFailure: Error, CustomStringConvertible {
    var command: String
    var status: Int32
    var message: String

    var description: String { "tmux \(self.command) exited with \(self.status): \(self.message)" }
}
