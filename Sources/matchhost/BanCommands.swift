import ArgumentParser
import Foundation
import MatchHostAdmin
import MatchHostCore
import MatchHostServer
import NIOCore
import NIOHTTP1
import NIOPosix

/// `matchhost ban PLAYER`: the running server bans a player.
struct BanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ban",
        abstract: "Ban a player from the running server: its session ends, and it can no longer sign in.",
        discussion: """
            Asks the server running on --data, through its admin endpoints, authorized by the \
            admin.key in --data. The ban is stored before the command returns and lasts across \
            restarts, for --for (from now, on the server's clock) or until `matchhost unban`. \
            Banning a banned player replaces its ban. The player's connection gets ERROR \
            PLAYER_BANNED with the reason (and the ban's end), its matches see it leave, and its \
            device and token sign-ins are refused with the same error. A Cat Race port client \
            cannot be banned: that port has no authentication. `matchhost bans` lists the bans.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @Option(help: "Why, in at most 200 bytes: the player is told it.")
    var reason = ""

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("How long the ban lasts: a number and a unit, s, m, h, d or w (90m, 7d); at most ten years. Without it: until unbanned.", valueName: "duration"))
    var duration: BanDuration?

    @OptionGroup var admin: AdminActionOptions

    /// Why a Cat Race port player cannot be banned.
    static let tutorialRefusal = "a ban cannot keep its client out"

    func validate() throws {
        guard self.reason.utf8.count <= PlayerBanEndpoints.maximumReasonBytes else {
            throw ValidationError("--reason must be at most \(PlayerBanEndpoints.maximumReasonBytes) bytes")
        }
    }

    func run() async throws {
        let state: PlayerBanEndpoints.BanState = try await self.admin.act(
            .POST, "ban", on: self.player, body: PlayerBanEndpoints.BanRequest(reason: self.reason, seconds: self.duration?.seconds),
            tutorialRefusal: Self.tutorialRefusal)
        let until = state.until.map { " until \(formatted(UnixMillis(milliseconds: $0)))" } ?? ""
        print("banned \(state.player)\(until)" + (state.reason.map { $0.isEmpty ? "" : ": \($0)" } ?? ""))
    }
}

/// A ban's length as `--for` takes it: a whole number and one unit (`90m`, `12h`, `7d`).
struct BanDuration: ExpressibleByArgument, Hashable {
    /// The length in seconds: 1 to ``PlayerBanEndpoints/maximumBanSeconds``.
    var seconds: Int64

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400]

    init?(argument: String) {
        guard let unit = argument.last, let scale = Self.units[unit], let count = Int64(argument.dropLast()), count > 0 else { return nil }
        let (seconds, overflowed) = count.multipliedReportingOverflow(by: scale)
        guard !overflowed, seconds <= PlayerBanEndpoints.maximumBanSeconds else { return nil }
        self.seconds = seconds
    }
}

/// `matchhost bans`: the banned players, from the server's database.
struct BansCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bans",
        abstract: "List the banned players from the server's database.",
        discussion: """
            Reads the database in --data (the server may be running): one line per ban in force, \
            newest first, with the player's id and alias, when it was banned, until when, and why. \
            With --all, every ban ever made, also those that ran out, were lifted (`unban`) or \
            were replaced by a later ban of the same player, each saying how and when it ended.
            """)

    @Flag(help: "Also list the bans that have ended: ran out, lifted or replaced.")
    var all = false

    @Option(help: "The server's data directory.")
    var data = "data"

    func run() async throws {
        try await withStoredData(self.data) { store in
            let now = UnixMillis.now()
            let records: [PlayerBanRecord]
            if self.all {
                records = try await store.banRecords(playerID: nil, limit: Int.max)
            } else {
                // The players' own columns, one row each, through the index of the banned.
                records = PlayerBanRecord.inForce(try await store.bannedPlayers(), at: now)
            }
            guard !records.isEmpty else {
                print(self.all ? "no player has been banned" : "no player is banned")
                return
            }
            var aliases: [PlayerID: String] = [:]
            for record in records {
                if aliases[record.playerID] == nil { aliases[record.playerID] = try await store.player(id: record.playerID)?.alias ?? "" }
                let end: String
                switch record.endedEarly {
                case .lifted(let at): end = "lifted \(formatted(at))"
                case .replaced(let at): end = "replaced \(formatted(at))"
                case nil:
                    guard let until = record.ban.until else {
                        end = "until lifted"
                        break
                    }
                    end = (record.ban.isInForce(at: now) ? "until " : "ended ") + formatted(until)
                }
                print(
                    "\(record.playerID)  \(aliases[record.playerID] ?? "")  since \(formatted(record.ban.since)), \(end)"
                        + (record.ban.reason.isEmpty ? "" : ": \(record.ban.reason)"))
            }
        }
    }
}

/// `matchhost unban PLAYER`: the running server lifts a player's ban.
struct UnbanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unban",
        abstract: "Lift a player's ban on the running server: it can sign in again.",
        discussion: "Asks the server running on --data, as `matchhost ban` does.")

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @OptionGroup var admin: AdminActionOptions

    func run() async throws {
        let state: PlayerBanEndpoints.BanState = try await self.admin.act(
            .DELETE, "ban", on: self.player, tutorialRefusal: BanCommand.tutorialRefusal)
        print(state.lifted == false ? "\(state.player) was not banned: nothing to lift" : "lifted the ban of \(state.player)")
    }
}
