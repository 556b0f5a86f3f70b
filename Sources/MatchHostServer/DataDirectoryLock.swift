import Foundation
import MatchHostCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes a data directory one process's: an exclusive `flock(2)` on `<data>/matchhost.lock`,
/// held until ``release()`` or the process's end.
///
/// Two servers on one database would each take the other's running games for their own: the
/// second would record the first's real-time matches as abandoned and run a second copy of
/// every turn-based game. `matchhost serve` and `matchhost restore` take this lock first, so
/// the second process stops with an error naming the first instead. The kernel drops the lock
/// with the process, `kill -9` included, so a crash leaves nothing to clean up; the file itself
/// stays, holding the last holder's process id for the error message. (``MatchHostService``
/// does not take it: a program embedding the server takes it itself.) `flock` is dependable on
/// local file systems only, as SQLite's write-ahead log is: `--data` belongs on a local disk.
public final class DataDirectoryLock {
    /// The lock file's name in the data directory.
    public static let fileName = "matchhost.lock"

    /// The lock file.
    public let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Creates `directory` and its missing parents, its owner's alone (the database in it holds
    /// hashed device secrets). `mkdir(2)` rather than Foundation, whose error on Linux says
    /// only "the operation could not be completed": the one that fails is named with its reason.
    private static func makeDirectory(_ directory: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw DataDirectoryLockError(path: directory, problem: "is a file, not a directory", holder: nil)
            }
            return
        }
        let parent = FilePaths.parent(of: directory)
        if !parent.isEmpty, parent != directory { try Self.makeDirectory(parent) }
        guard mkdir(directory, 0o700) != 0 else { return }
        let failure = errno
        guard failure == EEXIST else {
            throw DataDirectoryLockError(path: directory, problem: "cannot be created: \(String(cString: strerror(failure)))", holder: nil)
        }
    }

    /// Takes the lock of `directory`, creating the directory if it is missing.
    /// - Throws: ``DataDirectoryLockError``: another process holds the lock, or the directory
    ///   or the file cannot be created or opened.
    public static func acquire(directory: String) throws -> DataDirectoryLock {
        try Self.makeDirectory(directory)
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        // Close-on-exec: a child process (a shell the server runs, a test's tmux) must not keep
        // the lock alive after the server has gone.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DataDirectoryLockError(path: path, problem: "cannot be opened: \(String(cString: strerror(errno)))", holder: nil)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.processID(in: descriptor)
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw DataDirectoryLockError(path: path, problem: "cannot be locked: \(String(cString: strerror(reason)))", holder: nil)
            }
            throw DataDirectoryLockError(
                path: path, problem: "is held by another matchhost process: only one server may use a data directory", holder: holder,
                isHeldByAnotherProcess: true)
        }
        let lock = DataDirectoryLock(path: path, descriptor: descriptor)
        lock.recordProcessID()
        return lock
    }

    /// Lets another process take the directory. Only the first call does anything.
    public func release() {
        // Closing the descriptor releases the flock; a second close would hit a reused number.
        guard self.descriptor >= 0 else { return }
        close(self.descriptor)
        self.descriptor = -1
    }

    /// Written before the file is cut to its length, so that a process refused meanwhile reads
    /// a whole id (never an empty file).
    private func recordProcessID() {
        let text = Array("\(getpid())\n".utf8)
        let written = text.withUnsafeBytes { pwrite(self.descriptor, $0.baseAddress, $0.count, 0) }
        if written == text.count { _ = ftruncate(self.descriptor, off_t(text.count)) }
    }

    private static func processID(in descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    deinit {
        self.release()
    }
}

/// The data directory's lock could not be taken.
public struct DataDirectoryLockError: Error, CustomStringConvertible {
    /// The lock file, or the directory that could not be created.
    public let path: String
    /// What is wrong.
    public let problem: String
    /// The process id the lock file names when another process holds it.
    public let holder: Int32?
    /// Whether another process holds the lock (rather than the file being unusable).
    public let isHeldByAnotherProcess: Bool

    init(path: String, problem: String, holder: Int32?, isHeldByAnotherProcess: Bool = false) {
        self.path = path
        self.problem = problem
        self.holder = holder
        self.isHeldByAnotherProcess = isHeldByAnotherProcess
    }

    /// The path, the problem, and the holder's process id when known.
    public var description: String {
        "\(self.path) \(self.problem)" + (self.holder.map { " (process \($0))" } ?? "")
    }
}
