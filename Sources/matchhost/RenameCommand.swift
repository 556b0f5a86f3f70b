import ArgumentParser
import MatchHostAdmin

/// `matchhost rename PLAYER ALIAS`: the running server gives a player another alias, and may
/// lock it.
struct RenameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Replace a player's alias on the running server (one that must not be shown), and lock it.",
        discussion: """
            Asks the server running on --data, through its admin endpoints, authorized by the \
            admin.key in --data, as `matchhost ban` does. The alias must pass the rules SET_ALIAS \
            applies (at most --max-alias-length characters, no blank start or end, no invisible \
            characters); with --reset the player gets its first alias back, the first 8 \
            characters of its id. It is stored before the command returns; profiles and \
            leaderboards show it from then on. The player may set another with SET_ALIAS unless \
            the alias is locked (--lock, which may come alone or with a rename): its SET_ALIAS is \
            then refused with ALIAS_LOCKED until --unlock. A Cat Race port client is not \
            renamed by its tutorial playerId: its client sends its own alias each time it \
            connects; by its stored id, a rename lasts only with --lock.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @Argument(help: "The new alias.")
    var alias: String?

    @Flag(help: "Give the player its first alias back (the first 8 characters of its id) instead.")
    var reset = false

    @Flag(help: "Refuse the player's own alias changes from now on (with or without a rename).")
    var lock = false

    @Flag(help: "Let the player change its alias again.")
    var unlock = false

    @OptionGroup var admin: AdminActionOptions

    func validate() throws {
        if self.alias != nil && self.reset { throw ValidationError("give either a new alias or --reset, not both") }
        if self.lock && self.unlock { throw ValidationError("give either --lock or --unlock, not both") }
        if self.alias == nil && !self.reset && !self.lock && !self.unlock {
            throw ValidationError("name the new alias, or give --reset, --lock or --unlock")
        }
    }

    func run() async throws {
        let request = PlayerAliasEndpoints.AliasRequest(
            alias: self.alias, reset: self.reset ? true : nil, locked: self.lock ? true : self.unlock ? false : nil)
        let state: PlayerAliasEndpoints.AliasState = try await self.admin.act(
            .PUT, "alias", on: self.player, body: request, tutorialRefusal: "its client sends its own alias each time it connects")
        if self.alias != nil || self.reset {
            print("renamed \(state.player): \(state.alias)")
        }
        if self.lock || self.unlock {
            print("the alias of \(state.player), \(state.alias), is " + (state.locked ? "locked: the player cannot change it" : "unlocked: the player may change it"))
        }
    }
}
