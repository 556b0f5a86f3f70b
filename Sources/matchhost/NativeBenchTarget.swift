import ArgumentParser

/// The flags every native-protocol load generator shares: where the server is, how the load
/// connects, and how the report is printed.
struct NativeBenchTarget: ParsableArguments {
    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "Server native port.")
    var port = 7355

    @Option(name: .customLong("game-id"), help: "Game id sent in HELLO.")
    var gameID = "matchhost"

    @Option(name: .customLong("server-pid"), help: "Server process id, to report its CPU use and RSS (Linux /proc).")
    var serverPID: Int32?

    @Option(help: "Client event loop threads.")
    var threads = 1

    @Option(name: .customLong("connect-batch"), help: "Connections opened in parallel during setup.")
    var connectBatch = 200

    @Flag(help: "Also print one JSON line with all numbers.")
    var json = false

    func validate() throws {
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0-65535") }
        guard !self.gameID.isEmpty, self.gameID.utf8.count <= 255 else { throw ValidationError("--game-id must be 1-255 bytes") }
        guard self.threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard self.connectBatch >= 1 else { throw ValidationError("--connect-batch must be at least 1") }
    }
}
