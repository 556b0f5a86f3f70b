import Foundation
import MatchHostProcessTesting

/// How a test makes a database read-only for the user it runs as.
///
/// Permission bits stop an ordinary user, but root writes through them. For root the test
/// marks the file and its directory immutable (`chattr +i`), which stops root too; where
/// that is not possible (no chattr, a file system without the flag, no CAP_LINUX_IMMUTABLE)
/// there is no read-only condition, and the test is skipped with that reason.
enum ReadOnlyCondition {
    case permissionBits
    case immutableFlag

    /// The condition this process can create, or nil.
    static let available: ReadOnlyCondition? = {
        if getuid() != 0 { return .permissionBits }
        return Self.immutableFlagWorks() ? .immutableFlag : nil
    }()

    /// Makes `file` and `directory` read-only.
    func apply(file: String, directory: String) throws {
        switch self {
        case .permissionBits:
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
        case .immutableFlag:
            guard Self.chattr("+i", file), Self.chattr("+i", directory) else {
                throw CocoaError(.fileWriteNoPermission)
            }
        }
    }

    /// Makes everything under `directory` writable again, so that it can be removed.
    static func undo(directory: String) {
        guard FileManager.default.fileExists(atPath: directory) else { return }
        if Self.available == .immutableFlag {
            _ = Self.chattr("-R", "-i", directory)
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? [] {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
    }

    private static func immutableFlagWorks() -> Bool {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-chattr-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: probe, contents: Data([1])) else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard Self.chattr("+i", probe) else { return false }
        let stopped = !FileManager.default.isWritableFile(atPath: probe)
        _ = Self.chattr("-i", probe)
        return stopped
    }

    @discardableResult
    private static func chattr(_ arguments: String...) -> Bool {
        let path = ["/usr/bin/chattr", "/bin/chattr"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { return false }
        guard let process = try? ChildProcess(path, arguments) else { return false }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }
}
