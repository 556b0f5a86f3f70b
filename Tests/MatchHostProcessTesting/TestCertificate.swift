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
    public func publicKeySHA256() throws -> String {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c",
            "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | openssl base64 -A",
            "sh", self.certificatePath,
        ]
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        let digest = output.fileHandleForReading.readDataToEndOfFile()
        shell.waitUntilExit()
        guard shell.terminationStatus == 0, !digest.isEmpty else {
            throw TestCertificateError(detail: "cannot hash the public key of \(self.certificatePath)")
        }
        return String(decoding: digest, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Makes a P-256 certificate for `names` (`DNS:localhost`, `IP:127.0.0.1`, ...), valid
    /// for `days`, with common name `commonName`, in `directory` (created if missing) as
    /// `<fileStem>.crt` and `<fileStem>.key`.
    public static func make(
        in directory: URL, fileStem: String = "server", commonName: String = "localhost",
        names: [String] = ["DNS:localhost", "IP:127.0.0.1"], days: Int = 2
    ) throws -> TestCertificate {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("\(fileStem).crt").path
        let key = directory.appendingPathComponent("\(fileStem).key").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "\(days)", "-subj", "/CN=\(commonName)",
            "-addext", "subjectAltName=\(names.joined(separator: ","))",
        ]
        let errors = Pipe()
        openssl.standardError = errors
        openssl.standardOutput = FileHandle.nullDevice
        try openssl.run()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else {
            throw TestCertificateError(detail: String(decoding: said, as: UTF8.self))
        }
        return TestCertificate(certificatePath: certificate, keyPath: key)
    }
}

/// `openssl` could not make the certificate.
public struct TestCertificateError: Error, CustomStringConvertible {
    /// What it said.
    public let detail: String
    /// The line a test reports.
    public var description: String { "openssl req failed: \(self.detail)" }
}
