import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOSSL

/// The files a server's TLS comes from (`--tls-certificate`, `--tls-key`): PEM, as a
/// certificate authority such as Let's Encrypt issues them.
public struct TLSFiles: Sendable, Hashable {
    /// The certificate chain: the server's certificate first, then the intermediates
    /// (`fullchain.pem`).
    public var certificateChain: String
    /// The certificate's private key, unencrypted (`privkey.pem`).
    public var privateKey: String

    /// Names the two files.
    public init(certificateChain: String, privateKey: String) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}

/// The TLS files could not be used; `serve` prints the description and does not start (a
/// reload keeps the certificate it has).
public struct TLSFilesError: Error, Hashable, CustomStringConvertible {
    /// The file at fault.
    public var path: String
    /// What is wrong with it.
    public var reason: String

    /// The one line the server prints.
    public var description: String { "TLS: \(self.path): \(self.reason)" }
}

/// What a loaded certificate says, for the log: whom it names and when it is valid.
public struct TLSCertificateSummary: Sendable, Hashable, CustomStringConvertible {
    /// How many days before its end the log starts warning that a certificate expires.
    public static let warningDays = 14

    /// The certificate's subject common name, if it has one.
    public var commonName: String?
    /// When it starts being valid, in seconds since 1970.
    public var notValidBefore: Int
    /// When it stops being valid, in seconds since 1970.
    public var notValidAfter: Int

    /// Names the certificate and its validity.
    public init(commonName: String?, notValidBefore: Int, notValidAfter: Int) {
        self.commonName = commonName
        self.notValidBefore = notValidBefore
        self.notValidAfter = notValidAfter
    }

    /// Whole days from `now` (seconds since 1970) until it expires; negative once it has.
    public func daysLeft(now: Int) -> Int {
        let seconds = self.notValidAfter - now
        return seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
    }

    /// Why clients refuse it at `now` (seconds since 1970), if they do: it has expired, or it
    /// is not valid yet (a clock behind, or a certificate dated ahead).
    public func refusal(now: Int) -> String? {
        if now > self.notValidAfter { return "has expired (\(Self.iso8601(self.notValidAfter)))" }
        if now < self.notValidBefore { return "is not valid until \(Self.iso8601(self.notValidBefore))" }
        return nil
    }

    /// Logs that this certificate is served from now on (`event`, such as "TLS certificate
    /// reloaded"), with its name and days left: an error if clients refuse it, a warning
    /// within ``warningDays`` of its end, a notice otherwise.
    public func logServed(_ event: String, to logger: Logger, now: Int = Int(Date().timeIntervalSince1970)) {
        let daysLeft = self.daysLeft(now: now)
        let metadata: Logger.Metadata = ["certificate": "\(self)", "days-left": "\(daysLeft)"]
        if let refusal = self.refusal(now: now) {
            logger.error("\(event), but the TLS certificate \(refusal): clients will refuse it; renew it, then send SIGHUP", metadata: metadata)
        } else if daysLeft < Self.warningDays {
            logger.warning("\(event); the TLS certificate expires soon: renew it, then send SIGHUP", metadata: metadata)
        } else {
            logger.notice("\(event)", metadata: metadata)
        }
    }

    private static func iso8601(_ seconds: Int) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(seconds)))
    }

    /// `CN=…, valid until <ISO 8601>`.
    public var description: String {
        "\(self.commonName.map { "CN=\($0)" } ?? "no common name"), valid until \(Self.iso8601(self.notValidAfter))"
    }
}

/// The TLS context the native and web ports serve new connections with.
///
/// Loaded from ``TLSFiles`` at start; ``reload()`` (on SIGHUP in `matchhost serve`) reads the
/// files again, so that a renewed certificate is served without a restart. Connections
/// already open keep the context they began with; a reload that fails keeps the old one.
public final class ServerTLS: Sendable, Hashable {
    /// Where the certificate and key are read from.
    public let files: TLSFiles
    private let loaded: NIOLockedValueBox<(context: NIOSSLContext, summary: TLSCertificateSummary)>

    /// Reads and checks the files (blocking disk I/O: not on an event loop).
    public init(files: TLSFiles) throws {
        self.files = files
        self.loaded = NIOLockedValueBox(try Self.load(files))
    }

    /// The same object.
    public static func == (lhs: ServerTLS, rhs: ServerTLS) -> Bool { lhs === rhs }

    /// The object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The context for a connection being accepted now.
    var context: NIOSSLContext { self.loaded.withLockedValue { $0.context } }

    /// The certificate being served.
    public var certificate: TLSCertificateSummary { self.loaded.withLockedValue { $0.summary } }

    /// Reads the files again and serves new connections with them; on an error the
    /// certificate served so far stays. So does one clients accept, if clients would refuse the
    /// files' at `now` (seconds since 1970): an old certificate copied back by mistake, or a
    /// renewal not valid yet, must not lock every client out. Blocking disk I/O: not on an event loop.
    @discardableResult
    public func reload(now: Int = Int(Date().timeIntervalSince1970)) throws -> TLSCertificateSummary {
        let fresh = try Self.load(self.files)
        try self.loaded.withLockedValue { served in
            if let refusal = fresh.summary.refusal(now: now), served.summary.refusal(now: now) == nil {
                throw TLSFilesError(
                    path: self.files.certificateChain,
                    reason: "its certificate (\(fresh.summary)) \(refusal): clients would refuse it, and accept the one served")
            }
            served = fresh
        }
        return fresh.summary
    }

    private static func load(_ files: TLSFiles) throws -> (context: NIOSSLContext, summary: TLSCertificateSummary) {
        try Self.checkReadable(files.certificateChain)
        try Self.checkReadable(files.privateKey)
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateChain)
        } catch {
            throw TLSFilesError(path: files.certificateChain, reason: "not a PEM certificate chain (\(error))")
        }
        guard let leaf = chain.first else {
            throw TLSFilesError(path: files.certificateChain, reason: "holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.privateKey, format: .pem)
        } catch {
            throw TLSFilesError(path: files.privateKey, reason: "not an unencrypted PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        // How long a close waits for the client's close_notify: a client that never sends it
        // (one that stopped reading) must not hold a shutdown for swift-nio-ssl's 5 s each.
        configuration.shutdownTimeout = .seconds(1)
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSFilesError(
                path: files.privateKey, reason: "is not the key of the certificate in \(files.certificateChain) (\(error))")
        }
        let commonName = leaf.subjectName.first { $0.type == .commonName }?.value
        return (
            context,
            TLSCertificateSummary(commonName: commonName, notValidBefore: Int(leaf.notValidBefore), notValidAfter: Int(leaf.notValidAfter))
        )
    }

    /// A clear error for a missing or unreadable file, before BoringSSL's less clear one.
    private static func checkReadable(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TLSFilesError(path: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw TLSFilesError(path: path, reason: "is a directory, not a PEM file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw TLSFilesError(path: path, reason: "cannot be read by this user")
        }
    }
}
