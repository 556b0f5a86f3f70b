import ArgumentParser
import MatchHostClient
import Foundation
import MatchHostWire

/// `matchhost lobby GAME`: a game's open matches, live.
struct LobbyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lobby",
        abstract: "Show a game's open matches on a running server, and every change as it happens.",
        discussion: """
            Subscribes to the lobby of GAME (a game mode: relay, catrace, disks, fourinarow) on \
            the native port. Prints the open matches, then one line per change: + opened, \
            ~ changed, - closed, each followed by the number of open matches. Ctrl-C stops. \
            With --once, prints the list (every page) and exits.
            """)

    @Argument(help: "The game mode whose lobby to show.")
    var game: String

    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "The server's native port.")
    var port = 7355

    @Flag(help: "Only matches a player could join now.")
    var joinable = false

    @Flag(help: "Print the list once and exit instead of following it.")
    var once = false

    @OptionGroup(title: "TLS") var tls: ClientTLSOptions

    func run() async throws {
        let (client, _) = try await nativeLogin(
            host: self.host, port: self.port, tls: self.tls.clientTLS, deviceFile: nil, logger: silentLogger)
        defer { Task { await client.close() } }
        if self.once {
            var query = NativeLobbyQuery(mode: self.game, joinableOnly: self.joinable, limit: 100)
            var count = 0
            repeat {
                let page = try await self.lobbyRequest { try await client.listMatches(query) }
                for entry in page.entries { benchPrint("  " + Self.line(entry)) }
                count += page.entries.count
                query.after = page.next
            } while query.after != 0
            benchPrint("\(count) open \(self.game) match\(count == 1 ? "" : "es")\(self.joinable ? " that can be joined" : "")")
            await client.close()
            return
        }

        let events = client.events
        let expected = try await self.lobbyRequest { try await client.subscribeLobby(mode: self.game) }
        benchPrint("\(self.game) lobby on \(self.host):\(self.port): \(expected) open")
        var open: [MatchIdentifier: NativeLobbyEntry] = [:]
        var snapshot = expected
        for try await event in events {
            guard case .lobbyUpdate(let mode, let changes) = event, mode == self.game else { continue }
            for change in changes {
                switch change.kind {
                case .added: open[change.entry.matchID] = change.entry
                case .changed: open[change.entry.matchID] = change.entry
                case .removed: open[change.entry.matchID] = nil
                }
                // The snapshot's pages can be interleaved with changes to matches already sent
                // (and with matches opened since, which print as open too).
                if snapshot > 0, change.kind == .added {
                    snapshot -= 1
                    if !self.joinable || change.entry.joinable { benchPrint("  " + Self.line(change.entry)) }
                    continue
                }
                guard !self.joinable || change.entry.joinable || change.kind == .removed else { continue }
                let mark = change.kind == .added ? "+" : change.kind == .changed ? "~" : "-"
                benchPrint("\(mark) \(Self.line(change.entry))   (\(open.count) open)")
            }
        }
        benchPrintError("the connection closed: \(await client.state)")
        throw ExitCode.failure
    }

    private func lobbyRequest<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as NativeError where error.code == .unknownMode {
            throw PlayError(error.message)
        }
    }

    /// `4242  1/4  joinable  friday night`.
    static func line(_ entry: NativeLobbyEntry) -> String {
        let id = String(entry.matchID)
        let seats = "\(entry.players)/\(entry.capacity)"
        return id.padding(toLength: max(id.count, 8), withPad: " ", startingAt: 0)
            + seats.padding(toLength: 6, withPad: " ", startingAt: 0)
            + (entry.joinable ? "joinable  " : "full      ") + entry.label
    }
}
