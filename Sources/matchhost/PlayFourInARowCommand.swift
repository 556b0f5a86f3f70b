import ArgumentParser
import MatchHostClient
import MatchHostWire

/// `matchhost play fourinarow`: Four in a Row in a terminal, in a `fourinarow` match on the
/// native port. Digits 1-7 drop a disc, Q quits.
struct PlayFourInARowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fourinarow",
        abstract: "Play Four in a Row in the terminal against another player or a bot.",
        discussion: """
            Draws the 7 x 6 board (X is the first seat, O the second). Press 1-7 to drop a disc \
            into that column; Q or Ctrl-C quits (quitting a game in play loses it). The server \
            referees: a move out of turn or into a full column is refused and the reason shown. \
            Each turn has a time limit (30 s on a default server), counted down on screen; it \
            keeps running while the player to move is disconnected.

            You play as the player of the device stored in --device-file (created on first \
            contact), or with --guest as a new throwaway player. Without --match or --code you \
            create a private match and its invite code is shown, for others to join with \
            `matchhost play fourinarow --code CODE` or `matchhost bot fourinarow --code CODE`. \
            To play yourself from a second terminal on the same machine, add --guest there \
            (the same device file would be the same player).

            After a server restart, a game you were playing is saved: start this again with \
            the same --device-file (with or without --match ID) and you are back in it.
            """)

    @OptionGroup var server: FourInARowServerOptions

    @Option(
        name: .customLong("device-file"),
        help: "The file holding your device id and secret (default: ~/.matchhost/device).")
    var deviceFile: String?

    @Flag(help: "Play as a new throwaway player instead of the stored device.")
    var guest = false

    @OptionGroup var alias: PlayerAliasOption

    @OptionGroup var link: DeviceLinkOption

    func validate() throws {
        if let deviceFile = self.deviceFile {
            guard !deviceFile.isEmpty else { throw ValidationError("--device-file must not be empty") }
            guard !self.guest else { throw ValidationError("give --device-file or --guest, not both") }
        }
        guard self.link.linkCode == nil || !self.guest else { throw ValidationError("--link-code links a device kept in --device-file, not a --guest") }
    }

    func run() async throws {
        let game: FourInARowClient
        let session: FourInARowPlaySession
        do {
            (game, session) = try await self.enterMatch()
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        try await playFourInARowInTerminal(game, session: session)
    }

    /// Authenticates, then takes back the saved game the server seated this player in again
    /// (after a restart), or else creates a private match or joins the given one; prints what
    /// others need to join.
    private func enterMatch() async throws -> (FourInARowClient, FourInARowPlaySession) {
        let server = "\(self.server.host):\(self.server.port)"
        // Nothing may write to the terminal while it shows the game; errors are thrown.
        let (client, _) = try await nativeLogin(
            host: self.server.host, port: self.server.port, tls: self.server.tls.clientTLS,
            deviceFile: self.guest ? nil : (self.deviceFile ?? DeviceFile.defaultPath), linkCode: self.link.linkCode, alias: self.alias.alias,
            logger: silentLogger)
        let game: FourInARowClient
        var resumed = false
        do {
            // After a server restart, a saved game of this player's is taken back, not replaced
            // by a new one (nor refused as ALREADY_IN_MATCH when asked for by id).
            if self.server.code == nil, let back = try await FourInARowClient.resumedMatch(self.server.matchID, on: client) {
                game = back
                resumed = true
            } else if let matchID = self.server.matchID {
                game = try await FourInARowClient.joinMatch(matchID, on: client)
            } else if let code = self.server.code {
                game = try await FourInARowClient.joinMatch(code: code, on: client)
            } else {
                game = try await FourInARowClient.createMatch(on: client, isPrivate: true)
            }
        } catch {
            await client.close()
            if let matchID = self.server.matchID { throw PlayError("cannot join match \(matchID): \(error)") }
            if let code = self.server.code { throw PlayError("cannot join the match with code \(code): \(error)") }
            throw PlayError("cannot create a fourinarow match: \(error)")
        }
        var commands: [String] = []
        if resumed {
            benchPrint("Back in fourinarow match \(game.matchID), saved by the server.")
        } else if self.server.joinsGivenMatch {
            benchPrint("Joined fourinarow match \(game.matchID).")
        } else {
            let flags = self.server.hostFlag + self.server.portFlag
            let join = game.inviteCode.map { "--code \($0)" } ?? "--match \(game.matchID)"
            commands = ["matchhost play fourinarow\(flags) \(join)", "matchhost bot fourinarow\(flags) \(join)"]
            benchPrint("Created private fourinarow match \(game.matchID), invite code \(game.inviteCode ?? "(none)").")
            benchPrint("Others join with:")
            for command in commands { benchPrint("  " + command) }
            benchPrint("(From this machine, add --guest to play as another player.)")
        }
        let session = FourInARowPlaySession(
            playerID: game.playerID, server: server, matchID: game.matchID, inviteCode: game.inviteCode, joinCommands: commands)
        return (game, session)
    }
}
