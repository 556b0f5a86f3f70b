import ArgumentParser

/// `matchhost`: the MatchHost server and its tools.
@main
struct MatchHostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matchhost",
        abstract: "A self-hosted multiplayer game server.",
        subcommands: [
            ServeCommand.self, BenchCommand.self, PlayCommand.self, BotCommand.self, LobbyCommand.self, LeaderboardCommand.self,
            PlayerCommand.self, BanCommand.self, UnbanCommand.self, BansCommand.self, LinkCodeCommand.self, UnlinkDeviceCommand.self,
            RecoverCommand.self, RenameCommand.self, BackupCommand.self, RestoreCommand.self,
        ],
        defaultSubcommand: ServeCommand.self)
}
