import ArgumentParser

/// `matchhost bench`: load generators that measure a running server.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Measure a running server.",
        subcommands: [
            BenchCatRaceCommand.self, BenchConnectionsCommand.self, BenchNativeCommand.self, BenchResumeCommand.self,
            BenchLobbyCommand.self, BenchDisksCommand.self, BenchMatchmakerCommand.self, BenchFourInARowCommand.self,
        ])
}
