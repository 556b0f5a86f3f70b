import Foundation
import MatchHostCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The device credentials `matchhost play catrace --native` authenticates with, kept in a
/// small file (`~/.matchhost/device` unless `--device-file` says otherwise):
///
/// ```
/// # matchhost device credentials: keep this file private
/// id=device-3f0c...
/// secret=9a41...
/// ```
///
/// The device id and its secret are both chosen here, and the file is written before the
/// device's first contact (which sends that secret): a first contact whose answer is lost is
/// made again with the same credentials and gets the same player. The file has mode 0600 (its
/// directory 0700 when created) and is replaced atomically. A device being linked to an existing
/// player (`--link-code`) also has a `link=CODE` line until the server has linked it: until then
/// it signs in with that code, never as a plain device (which would make it a new player).
struct DeviceFile {
    /// The stored credentials.
    struct Credentials: Equatable {
        var id: String
        var secret: String
        /// The link code this device is being linked with (`--link-code`), until the server
        /// has linked it: a run whose answer was lost, or that never reached the server, tries
        /// the same code again with the same id and secret, which the server lets in.
        var linkCode: String? = nil
    }

    let path: String

    /// `~/.matchhost/device`.
    static var defaultPath: String {
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/.matchhost/device"
    }

    /// A new device id: `matchhost-cli-` and 32 random hexadecimal digits.
    static func newDeviceID() -> String {
        "matchhost-cli-" + (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }

    /// A new device secret: 64 random hexadecimal digits (32 bytes of the system's generator;
    /// the server takes a chosen secret of 32 bytes or more).
    static func newSecret() -> String {
        var random = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &random)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }

    /// The stored credentials, or `nil` when there is no file yet.
    /// - Throws: ``PlayError`` when the file cannot be read or holds no device id and secret.
    func load() throws -> Credentials? {
        guard FileManager.default.fileExists(atPath: self.path) else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: self.path, encoding: .utf8)
        } catch {
            throw PlayError("cannot read the device file \(self.path): \(error.localizedDescription)")
        }
        guard let credentials = Self.parse(text) else {
            throw PlayError(
                "the device file \(self.path) holds no device id and secret (lines id=... and secret=...); "
                    + "remove it to play as a new player")
        }
        return credentials
    }

    /// Reads `id=`, `secret=` and `link=` lines; `#` lines are comments.
    static func parse(_ text: String) -> Credentials? {
        var id: String?
        var secret: String?
        var linkCode: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "id": id = value
            case "secret": secret = value
            case "link": linkCode = value.isEmpty ? nil : value
            default: break
            }
        }
        guard let id, !id.isEmpty, let secret, !secret.isEmpty else { return nil }
        return Credentials(id: id, secret: secret, linkCode: linkCode)
    }

    /// Writes `credentials`, mode 0600, replacing the file atomically.
    /// - Throws: ``PlayError`` when the directory or the file cannot be written.
    func save(_ credentials: Credentials) throws {
        let directory = FilePaths.parent(of: self.path)
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw PlayError("cannot create \(directory) for the device file: \(error.localizedDescription)")
            }
        }
        var text = "# matchhost device credentials: keep this file private\nid=\(credentials.id)\nsecret=\(credentials.secret)\n"
        if let code = credentials.linkCode {
            text += "# being linked to a player with this code; removed once linked\nlink=\(code)\n"
        }
        let temporary = self.path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw PlayError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        var offset = 0
        var failure: Int32?
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += written
        }
        if failure == nil, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == nil, rename(temporary, self.path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw PlayError("cannot write the device file \(self.path): \(String(cString: strerror(failure)))")
        }
    }
}
