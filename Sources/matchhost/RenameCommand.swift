import ArgumentParser
import MatchHostAdmin

/// `matchhost rename PLAYER ALIAS`: the running server gives a player another alias.
struct RenameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Replace a player's alias on the running server (one that must not be shown).",
        discussion: """
            Asks the server running on --data, through its admin endpoints, authorized by the \
            admin.key in --data, as `matchhost ban` does. The alias must pass the rules SET_ALIAS \
            applies (at most --max-alias-length characters, no blank start or end, no invisible \
            characters); with --reset the player gets its first alias back, the first 8 \
            characters of its id. It is stored before the command returns; profiles and \
            leaderboards show it from then on. The player may set another with SET_ALIAS: ban \
            one who keeps choosing what must not be shown. A Cat Race port client cannot be \
            renamed: its client sends its own alias each time it connects.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @Argument(help: "The new alias.")
    var alias: String?

    @Flag(help: "Give the player its first alias back (the first 8 characters of its id) instead.")
    var reset = false

    @OptionGroup var admin: AdminActionOptions

    func validate() throws {
        switch (self.alias, self.reset) {
        case (nil, false): throw ValidationError("name the new alias, or give --reset")
        case (.some, true): throw ValidationError("give either a new alias or --reset, not both")
        default: break
        }
    }

    func run() async throws {
        let tutorialRefusal = "its client sends its own alias each time it connects"
        let state: PlayerAliasEndpoints.AliasState
        if let alias = self.alias {
            state = try await self.admin.act(
                .PUT, "alias", on: self.player, body: PlayerAliasEndpoints.AliasRequest(alias: alias), tutorialRefusal: tutorialRefusal)
        } else {
            state = try await self.admin.act(.DELETE, "alias", on: self.player, tutorialRefusal: tutorialRefusal)
        }
        print("renamed \(state.player): \(state.alias)")
    }
}
