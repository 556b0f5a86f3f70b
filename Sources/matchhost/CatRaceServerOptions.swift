import ArgumentParser

/// Where `play catrace` and `bot catrace` race: the server, and which of its two doors.
struct CatRaceServerOptions: ParsableArguments {
    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "Server port (default: 1955, the Cat Race port; with --native 7355, the native port).")
    var port: Int?

    @Flag(help: "Race in a catrace match of the native protocol instead of on the Cat Race port.")
    var native = false

    @Option(name: .customLong("match"), help: "With --native: the id of the catrace match to join (default: create one).")
    var matchID: UInt64?

    @OptionGroup(title: "TLS (with --native)") var tls: ClientTLSOptions

    /// The port given, or the default of the chosen protocol.
    var resolvedPort: Int { self.port ?? (self.native ? 7355 : 1955) }

    func validate() throws {
        if let port = self.port {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0-65535") }
        }
        guard self.native || self.tls.clientTLS == nil else {
            throw ValidationError("--tls and --tls-ca are for the native port (--native): the Cat Race port speaks no TLS")
        }
    }
}

/// Player ids given as comma-separated lists, or by repeating an option.
func playerIDList(_ values: [String]) -> [String] {
    values.flatMap { $0.split(separator: ",").map { String($0) } }.filter { !$0.isEmpty }
}
