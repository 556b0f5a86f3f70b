import ArgumentParser

/// Where `play fourinarow` and `bot fourinarow` play: the server's native port, and the
/// match to join (by id or invite code) instead of creating one.
struct FourInARowServerOptions: ParsableArguments {
    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "The server's native port.")
    var port = 7355

    @Option(name: .customLong("match"), help: "The id of the fourinarow match to join (default: create one).")
    var matchID: UInt64?

    @Option(help: "The invite code of the private fourinarow match to join.")
    var code: String?

    @OptionGroup(title: "TLS") var tls: ClientTLSOptions

    /// Whether a match is given to join.
    var joinsGivenMatch: Bool { self.matchID != nil || self.code != nil }

    /// The port and TLS flags to repeat in commands printed for others: empty for the default
    /// port in plaintext.
    var portFlag: String { (self.port == 7355 ? "" : " --port \(self.port)") + self.tls.flags }

    /// The host flag to repeat in commands printed for others: empty for the default host.
    var hostFlag: String { self.host == "127.0.0.1" ? "" : " --host \(self.host)" }

    func validate() throws {
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0-65535") }
        guard self.matchID == nil || self.code == nil else { throw ValidationError("give --match or --code, not both") }
        if let code = self.code {
            guard !code.isEmpty, code.utf8.count <= 255 else { throw ValidationError("--code must be 1-255 bytes") }
        }
    }
}
