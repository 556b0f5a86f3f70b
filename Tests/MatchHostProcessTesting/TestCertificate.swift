import Foundation

/// A self-signed certificate and its key, made for a test by the system's `openssl` (real
/// PEM files, as a certificate authority would issue them), in a directory of its own.
public struct TestCertificate: Sendable {
    /// The certificate, PEM (its own certificate authority: trust this file to trust it).
    public let certificatePath: String
    /// Its private key, PEM, unencrypted.
    public let keyPath: String

    /// The certificate's text, PEM.
    public var certificatePEM: String {
        get throws { try String(contentsOfFile: self.certificatePath, encoding: .utf8) }
    }

    /// The SHA-256 of its public key (SubjectPublicKeyInfo, DER), base64: what Chromium's
    /// `--ignore-certificate-errors-spki-list` trusts, so a browser trusts this one certificate.
    public func publicKeySHA256() async throws -> String {
        let digest = self.certificatePath + ".spki-sha256"
        try await Self.run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | openssl base64 -A > \"$2\"",
                "sh", self.certificatePath, digest,
            ],
            errorsTo: digest + ".err")
        return try String(contentsOfFile: digest, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Makes a P-256 certificate for `names` (`DNS:localhost`, `IP:127.0.0.1`, ...), valid
    /// for `days`, with common name `commonName`, in `directory` (created if missing) as
    /// `<fileStem>.crt` and `<fileStem>.key`.
    public static func make(
        in directory: URL, fileStem: String = "server", commonName: String = "localhost",
        names: [String] = ["DNS:localhost", "IP:127.0.0.1"], days: Int = 2
    ) async throws -> TestCertificate {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("\(fileStem).crt").path
        let key = directory.appendingPathComponent("\(fileStem).key").path
        try await Self.run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "\(days)", "-subj", "/CN=\(commonName)",
                "-addext", "subjectAltName=\(names.joined(separator: ","))",
            ],
            errorsTo: directory.appendingPathComponent("\(fileStem).openssl.err").path)
        return TestCertificate(certificatePath: certificate, keyPath: key)
    }

    /// Makes a P-256 certificate like ``make(in:fileStem:commonName:names:days:)``, valid from
    /// `start` to `end` (whole seconds, UTC), which may both be past: an expired certificate.
    /// `openssl req` cannot date one back; `openssl ca -selfsign` can, with a throwaway
    /// authority database in `directory`.
    public static func make(
        in directory: URL, fileStem: String = "server", commonName: String = "localhost",
        names: [String] = ["DNS:localhost", "IP:127.0.0.1"], validFrom start: Date, until end: Date
    ) async throws -> TestCertificate {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("\(fileStem).crt").path
        let key = directory.appendingPathComponent("\(fileStem).key").path
        let request = directory.appendingPathComponent("\(fileStem).csr").path
        let database = directory.appendingPathComponent("\(fileStem).ca-index").path
        let serial = directory.appendingPathComponent("\(fileStem).ca-serial").path
        let configuration = directory.appendingPathComponent("\(fileStem).ca.cnf").path
        try Data().write(to: URL(fileURLWithPath: database))
        try Data("01\n".utf8).write(to: URL(fileURLWithPath: serial))
        try Data(
            """
            [ca]
            default_ca = dated
            [dated]
            database = \(database)
            new_certs_dir = \(directory.path)
            serial = \(serial)
            default_md = sha256
            policy = any
            copy_extensions = copy
            unique_subject = no
            [any]
            commonName = supplied

            """.utf8
        ).write(to: URL(fileURLWithPath: configuration))
        let errors = directory.appendingPathComponent("\(fileStem).openssl.err").path
        try await Self.run(
            "/usr/bin/env",
            [
                "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", request, "-subj", "/CN=\(commonName)",
                "-addext", "subjectAltName=\(names.joined(separator: ","))",
            ],
            errorsTo: errors)
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "yyyyMMddHHmmss'Z'"
        try await Self.run(
            "/usr/bin/env",
            [
                "openssl", "ca", "-batch", "-config", configuration, "-selfsign", "-keyfile", key, "-in", request,
                "-out", certificate, "-notext", "-startdate", format.string(from: start), "-enddate", format.string(from: end),
            ],
            errorsTo: errors)
        return TestCertificate(certificatePath: certificate, keyPath: key)
    }

    /// Runs `command` to its end, its standard error into the file `errorsTo`, and throws with
    /// what it said there unless it exits 0. A ``ChildProcess`` (no pipe another test's child
    /// could inherit and hold open), waited for on a thread of its own (not the concurrency
    /// pool, which the other tests need meanwhile).
    private static func run(_ command: String, _ arguments: [String], errorsTo errors: String) async throws {
        let process = try ChildProcess(command, arguments, standardOutput: .discard, standardError: .file(errors))
        await onOwnThread { process.waitUntilExit() }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw TestCertificateError(detail: "\(arguments.joined(separator: " ")): \(said)")
        }
    }
}

/// `openssl` could not make the certificate.
public struct TestCertificateError: Error, CustomStringConvertible {
    /// What it said.
    public let detail: String
    /// The line a test reports.
    public var description: String { "openssl req failed: \(self.detail)" }
}
