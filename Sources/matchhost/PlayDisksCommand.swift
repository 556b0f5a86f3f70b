import ArgumentParser
import MatchHostClient
import MatchHostWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `play disks` and `bot disks` play: the server's native port, and the match to join.
struct DisksServerOptions: ParsableArguments {
    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "The server's native port.")
    var port = 7355

    @Option(name: .customLong("match"), help: "The id of the disks match to join (default: create one).")
    var matchID: UInt64?

    @OptionGroup(title: "TLS") var tls: ClientTLSOptions

    /// `--port P` when not the default, and the TLS flags, to repeat in the commands shown to
    /// other players.
    var portFlag: String { (self.port == 7355 ? "" : " --port \(self.port)") + self.tls.flags }

    func validate() throws {
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0-65535") }
    }
}

/// `matchhost play disks`: Disks in a terminal. Each disk shows a letter; typing it taps the
/// disk. Q quits.
struct PlayDisksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disks",
        abstract: "Hit disks in the terminal, against other players or bots.",
        discussion: """
            Plays a disks match on the native port as the player of the device stored in \
            --device-file (created on first contact). The server spawns disks on the board; \
            each shows a letter (a-z, no q): type it to tap that disk. The first tap to reach \
            the server scores; a hit disk spins away showing the hitter's seat number. The \
            first to the score limit wins, or the best score when time is up. Q or Ctrl-C quits.

            Without --match you create a match for --players players and its id is shown, for \
            others to join with --match ID (`matchhost play disks --match ID`, or a bot: \
            `matchhost bot disks --match ID --bots 1`). Play starts once two players are here.
            """)

    @OptionGroup var server: DisksServerOptions

    @Option(help: "Without --match: players in the match you create (2-16; default 2).")
    var players: Int?

    @Option(help: "Without --match: a label for the match you create.")
    var label = ""

    @Option(
        name: .customLong("device-file"),
        help: "The file holding your device id and secret (default: ~/.matchhost/device).")
    var deviceFile: String?

    @OptionGroup var alias: PlayerAliasOption

    @OptionGroup var link: DeviceLinkOption

    func validate() throws {
        if let players = self.players {
            guard self.server.matchID == nil else { throw ValidationError("--players is for a match you create, not with --match") }
            guard (2...16).contains(players) else { throw ValidationError("--players must be 2-16") }
        }
        guard self.label.utf8.count <= 255 else { throw ValidationError("--label must be at most 255 bytes") }
        if let deviceFile = self.deviceFile, deviceFile.isEmpty { throw ValidationError("--device-file must not be empty") }
    }

    func run() async throws {
        let disks: DisksClient
        do {
            disks = try await self.enterMatch()
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        let session = PlayDisksSession(
            playerID: disks.playerID, server: "\(self.server.host):\(self.server.port)", matchID: disks.matchID,
            capacity: disks.capacity, portFlag: self.server.portFlag)
        try await playDisksInTerminal(disks, session: session)
    }

    /// Authenticates as the stored device (storing the secret on first contact), then creates
    /// a disks match or joins --match; prints how others join.
    private func enterMatch() async throws -> DisksClient {
        // Nothing may write to the terminal while it shows the game; errors are thrown.
        let (client, _) = try await nativeLogin(
            host: self.server.host, port: self.server.port, tls: self.server.tls.clientTLS, deviceFile: self.deviceFile ?? DeviceFile.defaultPath,
            linkCode: self.link.linkCode, alias: self.alias.alias, logger: silentLogger)
        let disks: DisksClient
        do {
            if let matchID = self.server.matchID {
                disks = try await DisksClient.joinMatch(matchID, on: client)
            } else {
                disks = try await DisksClient.createMatch(on: client, players: self.players ?? 2, label: self.label)
            }
        } catch {
            await client.close()
            if let matchID = self.server.matchID {
                throw PlayError("cannot join match \(matchID): \(error)")
            }
            throw PlayError("cannot create a disks match: \(error)")
        }
        if self.server.matchID == nil {
            benchPrint("Created disks match \(disks.matchID) for \(disks.capacity) players.")
        } else {
            benchPrint("Joined disks match \(disks.matchID) (\(disks.match.players.count) of \(disks.capacity) players).")
        }
        if disks.match.players.count < disks.capacity {
            benchPrint("Others join with:")
            benchPrint("  matchhost play disks\(self.server.portFlag) --match \(disks.matchID)")
            benchPrint("  matchhost bot disks\(self.server.portFlag) --match \(disks.matchID) --bots 1")
        }
        return disks
    }
}

/// The game in the terminal (``runInTerminal(startFeeds:draw:handle:close:)``): keys and
/// server events into `session`, the screen redrawn after each; exits with 128 + the signal
/// after a signal.
func playDisksInTerminal(_ disks: DisksClient, session: PlayDisksSession) async throws {
    var session = session
    let aliases = TerminalAliasRequests()
    let exitSignal = try await runInTerminal(
        startFeeds: { yield in
            [
                terminalFeed(
                    { try await disks.nextEvent(timeout: nil) }, endReason: "the connection is closed",
                    event: PlayDisksEvent.server, ended: PlayDisksEvent.disconnected, into: yield),
                aliases.feed(from: disks.client, as: PlayDisksEvent.alias, into: yield),
            ]
        },
        draw: { terminal in
            let size = terminal.size
            terminal.write(renderScreen(session.screen(columns: size.columns, rows: size.rows), rows: size.rows))
        },
        handle: { input in
            switch input {
            case .key(let key):
                guard let tap = session.pressed(key) else { return }
                do {
                    try await disks.tap(x: tap.x, y: tap.y)
                } catch {
                    session.disconnected("\(error)")
                }
            case .game(.server(let event)):
                session.received(event)
                aliases.ask(session.aliasesToAsk())
            case .game(.alias(let alias, let playerID)):
                session.aliasKnown(alias, of: playerID)
            case .game(.disconnected(let reason)):
                session.disconnected(reason)
            case .resize:
                break
            }
        },
        close: {
            aliases.finish()
            await disks.close()
        })
    if let summary = session.summary {
        print(summary)
    }
    if let exitSignal {
        throw ExitCode(128 + exitSignal)
    }
}

/// What the Disks game reacts to besides the terminal.
enum PlayDisksEvent: Sendable {
    case server(DisksEvent)
    case disconnected(String)
    /// The server told a player's alias.
    case alias(String, of: String)
}
