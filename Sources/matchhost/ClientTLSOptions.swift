import ArgumentParser
import MatchHostClient

/// `--tls` and `--tls-ca`: how a command's native connections speak TLS to a server started
/// with `--tls-certificate`.
struct ClientTLSOptions: ParsableArguments {
    @Flag(
        name: .customLong("tls"),
        help: "Speak TLS to the native port (a server started with --tls-certificate), trusting the system's certificate authorities.")
    var enabled = false

    @Option(
        name: .customLong("tls-ca"),
        help: "Speak TLS, trusting only the PEM certificates in this file: your own certificate authority, or the server's self-signed certificate.")
    var certificateAuthority: String?

    /// What the client library is told; nil for plaintext.
    var clientTLS: MatchHostClient.TLS? { Self.settings(enabled: self.enabled, certificateAuthority: self.certificateAuthority) }

    /// The settings a TLS flag and a trusted-certificates file make (these, and the admin
    /// commands' `--admin-tls` and `--admin-tls-ca`): nil, plaintext, with neither.
    static func settings(enabled: Bool, certificateAuthority: String?) -> MatchHostClient.TLS? {
        if let file = certificateAuthority { return .init(trust: .pemFile(file)) }
        return enabled ? .init() : nil
    }

    /// The flags to repeat in a command printed for another player: empty for plaintext.
    var flags: String {
        if let file = self.certificateAuthority { return " --tls-ca \(file)" }
        return self.enabled ? " --tls" : ""
    }
}
