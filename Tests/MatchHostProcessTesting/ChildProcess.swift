import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program the tests run (`matchhost`, `tmux`, `chattr`, `prlimit`), started with
/// `posix_spawn` and reaped with `waitpid`.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` with a 256-byte copy
/// of each directory entry, which now and then reads past the end of the buffer and crashes
/// the test process (swift-corelibs-foundation #5472, fixed after the Swift 6.3.1 used here).
/// The tests start hundreds of processes while hundreds of descriptors are open, and CI saw it.
/// A child gets nothing of the test process but what is named here: its standard input is
/// `/dev/null`, its output goes where ``Output`` says (never to the test's own output, which a
/// server left behind by a crashed test would hold open, and `swift test` would wait for).
public final class ChildProcess: @unchecked Sendable {
    /// Where a child's standard output or standard error goes.
    public enum Output: Sendable {
        /// Nowhere (`/dev/null`).
        case discard
        /// Into a pipe the test reads (``standardOutput``, ``standardError``).
        case pipe
        /// Into a file, created or truncated.
        case file(String)
        /// Standard error only: wherever standard output goes.
        case standardOutput
    }

    /// How the child ended.
    public enum TerminationReason: Sendable, Equatable {
        /// It exited (``terminationStatus`` is its exit status).
        case exit
        /// A signal ended it (``terminationStatus`` is the signal's number).
        case uncaughtSignal
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    /// The reading end of its standard output, when it goes into a pipe.
    public let standardOutput: FileHandle?
    /// The reading end of its standard error, when it goes into a pipe of its own.
    public let standardError: FileHandle?

    private let lock = NSLock()
    /// `waitpid`'s status once the child has been reaped.
    private var waitStatus: Int32?

    /// Starts `executable` with `arguments` (not including the program's name) and the test
    /// process's environment changed by `environment` (a nil value removes a variable).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], standardOutput: Output = .discard,
        standardError: Output = .discard
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var parentEnds: [Int32: Int32] = [:]
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        for (target, output) in [(Int32(1), standardOutput), (Int32(2), standardError)] {
            switch output {
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw ChildProcessError(program: executable, errno: errno) }
                // Every spawn here closes what it does not name; close-on-exec covers the rest.
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                parentEnds[target] = ends[0]
                childEnds.append(ends[1])
                // dup2 clears close-on-exec on the copy the child keeps.
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
            }
        }
        closeInheritedDescriptors(&actions)

        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        let cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        let cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        // The calling thread blocks signals (as the threads of Swift's runtimes do), and a
        // spawned program inherits its mask: a server would never see SIGTERM, tmux never
        // SIGCHLD. Cleared, and every signal's handling back to its default.
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
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, cArguments, cEnvironment)
        guard spawned == 0 else {
            for descriptor in parentEnds.values { close(descriptor) }
            throw ChildProcessError(program: executable, errno: spawned)
        }
        self.processIdentifier = pid
        self.standardOutput = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.standardError = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    /// Whether the child has not ended yet (reaping it if it has).
    public var isRunning: Bool {
        self.lock.withLock {
            guard self.waitStatus == nil else { return false }
            var status: Int32 = 0
            guard waitpid(self.processIdentifier, &status, WNOHANG) == self.processIdentifier else { return true }
            self.waitStatus = status
            return false
        }
    }

    /// Sends `signal`, unless the child has been reaped already (its id may be another's now).
    public func send(_ signal: Int32) {
        self.lock.withLock {
            guard self.waitStatus == nil else { return }
            kill(self.processIdentifier, signal)
        }
    }

    /// Sends SIGTERM.
    public func terminate() {
        self.send(SIGTERM)
    }

    /// Blocks until the child has ended (see ``onOwnThread(_:)`` for calling it from a test).
    public func waitUntilExit() {
        while self.lock.withLock({ self.waitStatus == nil }) {
            var status: Int32 = 0
            let reaped = waitpid(self.processIdentifier, &status, 0)
            if reaped == self.processIdentifier {
                self.lock.withLock { self.waitStatus = status }
            } else if reaped < 0, errno == ECHILD {
                // Reaped by ``isRunning`` on another thread, which sets the status under the
                // lock this loop takes again.
                usleep(1_000)
            }
        }
    }

    /// How it ended; call once it has (``waitUntilExit()``, or ``isRunning`` false).
    public var terminationReason: TerminationReason {
        let status = self.lock.withLock { self.waitStatus } ?? 0
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Its exit status, or the number of the signal that ended it (``terminationReason``).
    public var terminationStatus: Int32 {
        let status = self.lock.withLock { self.waitStatus } ?? 0
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Runs `executable` to its end (on a thread of its own) and returns its exit status, or
    /// 128 plus the signal that ended it.
    public static func run(_ executable: String, _ arguments: [String]) async throws -> Int32 {
        let child = try ChildProcess(executable, arguments)
        await onOwnThread { child.waitUntilExit() }
        return child.terminationReason == .exit ? child.terminationStatus : 128 + child.terminationStatus
    }
}

/// A program the tests run could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// The program.
    public var program: String
    /// Why, as `errno`.
    public var errno: Int32
    /// For the test's failure.
    public var description: String { "cannot start \(self.program): \(String(cString: strerror(self.errno)))" }
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
    // (FileManager lists a directory through its own, fixed, reading of entries.)
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
        posix_spawn_file_actions_addclose(&actions, descriptor)
    }
}
