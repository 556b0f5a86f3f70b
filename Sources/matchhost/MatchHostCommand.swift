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

    /// Refuses a first word that names no command before parsing: `serve` is the default and
    /// takes no words, so ArgumentParser would call a mistyped command "unexpected arguments"
    /// and print serve's usage, which hides the typo.
    static func main() async {
        if let word = CommandLine.arguments.dropFirst().first, let problem = Self.unknownCommand(word) {
            Self.exit(withError: ValidationError(problem))
        }
        await Self.main(nil)
    }

    /// What is wrong with `word` as the first argument, or nil when it is an option or a
    /// command. Names the closest command when one is near (a typo), otherwise them all.
    static func unknownCommand(_ word: String) -> String? {
        let names = Self.configuration.subcommands.map { $0._commandName }
        guard !word.hasPrefix("-"), word != "help", !names.contains(word) else { return nil }
        let nearest = names.map { (name: $0, distance: Self.editDistance(word.lowercased(), $0)) }.min { $0.distance < $1.distance }
        if let nearest, nearest.distance <= max(1, nearest.name.count / 3) {
            return "'\(word)' is not a matchhost command; did you mean '\(nearest.name)'?"
        }
        return "'\(word)' is not a matchhost command; the commands are \(names.joined(separator: ", "))"
    }

    /// Levenshtein distance: insertions, deletions and substitutions, one each.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
