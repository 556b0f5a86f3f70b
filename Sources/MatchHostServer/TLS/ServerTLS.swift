import Foundation
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

/// What a loaded certificate says, for the log: whom it names and until when it is valid.
public struct TLSCertificateSummary: Sendable, Hashable, CustomStringConvertible {
    /// The certificate's subject common name, if it has one.
    public var commonName: String?
    /// When it stops being valid, in seconds since 1970.
    public var notValidAfter: Int

    /// Whole days from `now` (seconds since 1970) until it expires; negative once it has.
    public func daysLeft(now: Int) -> Int {
        let seconds = self.notValidAfter - now
        return seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
    }

    /// `CN=…, valid until <ISO 8601>`.
    public var description: String {
        let until = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(self.notValidAfter)))
        return "\(self.commonName.map { "CN=\($0)" } ?? "no common name"), valid until \(until)"
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
    /// certificate served so far stays. Blocking disk I/O: not on an event loop.
    @discardableResult
    public func reload() throws -> TLSCertificateSummary {
        let fresh = try Self.load(self.files)
        self.loaded.withLockedValue { $0 = fresh }
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
        return (context, TLSCertificateSummary(commonName: commonName, notValidAfter: Int(leaf.notValidAfter)))
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
