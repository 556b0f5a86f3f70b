import Foundation
import MatchHostCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that signs session tokens, kept in `<data>/token-signing.key` (64 hex digits,
/// mode 0600) so that tokens stay valid across restarts. Created on first start.
public struct TokenKeyFile: Sendable {
    /// The key file's path.
    public let path: String

    /// The key file inside the data directory `directory`.
    public init(directory: String) {
        self.path = (directory as NSString).appendingPathComponent("token-signing.key")
    }

    /// Reads the key, or creates the directory and a new random key if there is none.
    /// - Throws: ``TokenKeyFileError`` naming the file and what is wrong with it.
    public func loadOrCreate() throws -> [UInt8] {
        let files = FileManager.default
        if files.fileExists(atPath: self.path) {
            guard let data = files.contents(atPath: self.path) else {
                throw TokenKeyFileError(path: self.path, problem: "cannot be read")
            }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let key = Self.bytes(fromHex: text), key.count == 32 else {
                throw TokenKeyFileError(path: self.path, problem: "does not hold a key (64 hexadecimal digits); delete it to make a new one, which ends every issued token")
            }
            return key
        }
        let directory = FilePaths.directory(of: self.path)
        do {
            try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw TokenKeyFileError(path: directory, problem: "cannot be created: \(error.localizedDescription)")
        }
        var random = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
        try self.store(Array((hexEncoded(key) + "\n").utf8))
        return key
    }

    /// Writes the key whole or not at all, and durably before any token is signed with it: a
    /// crash while it is written must not leave a part of a key that stops the next start, and
    /// a power loss must not take the key of tokens already handed out.
    private func store(_ contents: [UInt8]) throws {
        let temporary = self.path + ".partial"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw TokenKeyFileError(path: temporary, problem: "cannot be created: \(String(cString: strerror(errno)))")
        }
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == contents.count, synced, rename(temporary, self.path) == 0 else {
            unlink(temporary)
            throw TokenKeyFileError(path: self.path, problem: "cannot be written")
        }
        let directory = open(FilePaths.directory(of: self.path), O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The token key file is unusable.
public struct TokenKeyFileError: Error, CustomStringConvertible {
    /// The file or directory at fault.
    public let path: String
    /// What is wrong.
    public let problem: String

    /// The path and the problem.
    public var description: String { "\(self.path) \(self.problem)" }
}
