import Foundation
import MatchHostCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A secret key of 32 random bytes kept in the data directory (64 hex digits, mode 0600),
/// created on first start: the key that signs session tokens and keys the stored link codes'
/// digests (``tokenSigning(directory:)``; `serve --store sqlite` only, once its database
/// exists), so that both stay valid across restarts, and the key of the admin endpoints'
/// actions (``admin(directory:)``).
public struct SecretKeyFile: Sendable {
    /// The key file's path.
    public let path: String
    /// What making a new key does to what the old one signed or opened, for the error that
    /// tells the operator to delete a damaged file.
    private let replacing: String

    /// `<directory>/token-signing.key`.
    public static func tokenSigning(directory: String) -> SecretKeyFile {
        SecretKeyFile(directory: directory, name: "token-signing.key", replacing: ", which ends every issued token")
    }

    /// `<directory>/admin.key`: the bearer token of the admin endpoints' actions (banning a
    /// player), which `matchhost ban` reads from the same directory.
    public static func admin(directory: String) -> SecretKeyFile {
        SecretKeyFile(directory: directory, name: "admin.key", replacing: "")
    }

    private init(directory: String, name: String, replacing: String) {
        self.path = (directory as NSString).appendingPathComponent(name)
        self.replacing = replacing
    }

    /// Reads the key a server made, for a client that sends it (`matchhost ban`).
    /// - Throws: ``SecretKeyFileError`` when it cannot be read or holds no key.
    public func read() throws -> [UInt8] {
        try self.readExisting(advice: "")
    }

    /// Reads the key, or creates the directory and a new random key if there is none.
    /// - Throws: ``SecretKeyFileError`` naming the file and what is wrong with it.
    public func loadOrCreate() throws -> [UInt8] {
        let files = FileManager.default
        if files.fileExists(atPath: self.path) {
            // Only the server makes keys, so only it says how to replace a damaged one.
            return try self.readExisting(advice: "; delete it to make a new one\(self.replacing)")
        }
        let directory = FilePaths.directory(of: self.path)
        do {
            try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SecretKeyFileError(path: directory, problem: "cannot be created: \(error.localizedDescription)")
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
            throw SecretKeyFileError(path: temporary, problem: "cannot be created: \(String(cString: strerror(errno)))")
        }
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == contents.count, synced, rename(temporary, self.path) == 0 else {
            unlink(temporary)
            throw SecretKeyFileError(path: self.path, problem: "cannot be written")
        }
        let directory = open(FilePaths.directory(of: self.path), O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private func readExisting(advice: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: self.path) else {
            throw SecretKeyFileError(path: self.path, problem: "cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let key = Self.bytes(fromHex: text), key.count == 32 else {
            throw SecretKeyFileError(path: self.path, problem: "does not hold a key (64 hexadecimal digits)\(advice)")
        }
        return key
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

/// A key file is unusable.
public struct SecretKeyFileError: Error, CustomStringConvertible {
    /// The file or directory at fault.
    public let path: String
    /// What is wrong.
    public let problem: String

    /// The path and the problem.
    public var description: String { "\(self.path) \(self.problem)" }
}
