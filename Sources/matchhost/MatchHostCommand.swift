import ArgumentParser
import MatchHostSQLite
import MatchHostWire

/// `matchhost`: the MatchHost server and its tools.
@main
struct MatchHostCommand: AsyncParsableCommand {
    /// This build's release; `--version` prints it with what it speaks and stores.
    static let release = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "matchhost",
        abstract: "A self-hosted multiplayer game server.",
        version: "matchhost \(release) (native protocol \(NativeFrame.protocolVersion), database schema \(SQLiteGameStore.schemaVersion))",
        subcommands: [
            ServeCommand.self, BenchCommand.self, PlayCommand.self, BotCommand.self, LobbyCommand.self, LeaderboardCommand.self,
            PlayerCommand.self, BanCommand.self, UnbanCommand.self, BansCommand.self, LinkCodeCommand.self, UnlinkDeviceCommand.self,
            RecoverCommand.self, RenameCommand.self, BackupCommand.self, RestoreCommand.self,
        ],
        defaultSubcommand: ServeCommand.self)
}
