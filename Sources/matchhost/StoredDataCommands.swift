import ArgumentParser
import Foundation
import MatchHostCore
import MatchHostGames
import MatchHostSQLite
import MatchHostServer

/// The built-in games whose results the server stores, by the name stored with each match.
let storedGames = [CatRaceGame.mode, DisksGame.mode, FourInARowGame.mode].sorted()

/// Runs `body` with the server's database in `data` opened read-only, then closes it; a
/// database that cannot be opened stops the command with one line saying why. SQLite's
/// write-ahead log lets this run while the server writes; read-only, it never migrates the
/// schema under a running server of another version.
func withStoredData(_ data: String, _ body: (SQLiteGameStore) async throws -> Void) async throws {
    let store: SQLiteGameStore
    do {
        store = try await SQLiteGameStore.open(directory: data, options: SQLiteStoreOptions(readOnly: true), logger: silentLogger)
    } catch {
        FileHandle.standardError.write(Data("matchhost: \(error)\n".utf8))
        throw ExitCode(2)
    }
    do {
        try await body(store)
    } catch let error as GameStoreError {
        // A database that opened but fails a read (damage found where it is read): one line.
        try? await store.close()
        FileHandle.standardError.write(Data("matchhost: cannot read \(data): \(error)\n".utf8))
        throw ExitCode(2)
    } catch {
        try? await store.close()
        throw error
    }
    try? await store.close()
}

/// How the command-line readers find the player a user named: a stored player id, the
/// playerId a Cat Race tutorial client sent (the key to the player created for it), or the
/// first characters of a stored id (at least ``shortestPrefix``, and only one id may start
/// with them: a player's alias is the first 8 until a game sets another).
enum StoredPlayerLookup {
    /// The fewest characters taken as the start of an id.
    static let shortestPrefix = 4

    /// The stored id `given` names, with the tutorial playerId when that is what it was.
    /// - Throws: `ExitCode(1)`, after a line on standard error, when `given` names nobody or
    ///   is the start of several ids.
    static func find(_ given: String, in store: SQLiteGameStore) async throws -> (id: PlayerID, tutorialID: String?) {
        // A Cat Race port player may have a history without an account of its own.
        if try await store.player(id: given) != nil { return (given, nil) }
        if try await !store.matchHistory(playerID: given, limit: 1).isEmpty { return (given, nil) }
        // A stored id wins; the tutorial's playerId is only a key to the player it created.
        if let tutorialPlayer = try await store.player(externalIdentity: ExternalIdentity(kind: .catRaceTutorial, externalID: given)) {
            return (tutorialPlayer.id, given)
        }
        if given.count >= Self.shortestPrefix {
            let candidates = try await store.playerIDs(startingWith: given, limit: 6)
            if candidates.count > 1 {
                let shown = candidates.prefix(5).joined(separator: ", ") + (candidates.count > 5 ? ", ..." : "")
                FileHandle.standardError.write(Data("matchhost: \(given) is the start of several player ids (\(shown)): give more of it\n".utf8))
                throw ExitCode(1)
            }
            if let only = candidates.first { return (only, nil) }
        }
        let tooShort = given.count < Self.shortestPrefix ? " (too short for the start of an id: \(Self.shortestPrefix) characters or more)" : ""
        FileHandle.standardError.write(
            Data("matchhost: no player with id, start of an id or Cat Race playerId \(given) in \(store.path)\(tooShort)\n".utf8))
        throw ExitCode(1)
    }
}

/// A wall-clock time as `2026-01-01 12:00:00 UTC`.
func formatted(_ time: UnixMillis) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
    return formatter.string(from: Date(timeIntervalSince1970: Double(time.milliseconds) / 1000))
}

/// `matchhost leaderboard GAME`: a game's leaderboard, from the server's database.
struct LeaderboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leaderboard",
        abstract: "Print a game's leaderboard from the server's database.",
        discussion: """
            Reads the database in --data (the server may be running). Players are ranked by \
            rating, then wins, then id. With --around, prints the entries around that player.
            """)

    @Argument(help: "The game (fourinarow, disks, catrace).")
    var game: String

    @Option(help: "A player to centre the list on: as `matchhost player` takes it (an id, its first characters, or a Cat Race playerId).")
    var around: String?

    @Option(help: "How many entries (1-1000).")
    var limit = 10

    @Option(help: "The server's data directory.")
    var data = "data"

    func validate() throws {
        guard (1...1000).contains(self.limit) else { throw ValidationError("--limit must be 1-1000") }
    }

    func run() async throws {
        try await withStoredData(self.data) { store in try await self.show(from: store) }
    }

    private func show(from store: SQLiteGameStore) async throws {
        let entries =
            if let around = self.around {
                try await store.leaderboard(game: self.game, around: StoredPlayerLookup.find(around, in: store).id, count: self.limit)
            } else {
                try await store.leaderboard(game: self.game, limit: self.limit)
            }
        guard !entries.isEmpty else {
            guard storedGames.contains(self.game) else {
                // Most likely a typo: say which games there are, and fail, so a script notices.
                FileHandle.standardError.write(
                    Data("matchhost: no results in \(self.game): the built-in games are \(storedGames.joined(separator: ", "))\n".utf8))
                throw ExitCode(1)
            }
            print(self.around == nil ? "no results in \(self.game) yet" : "\(self.around ?? "") has no results in \(self.game)")
            return
        }
        print("rank  rating   won  played  player                            alias")
        for entry in entries {
            let rank = String(entry.rank).padding(toLength: 4, withPad: " ", startingAt: 0)
            let rating = String(format: "%7.1f", entry.rating)
            let won = String(format: "%5d", entry.won)
            let played = String(format: "%7d", entry.played)
            print("\(rank)  \(rating) \(won) \(played)  \(entry.playerID.padding(toLength: 32, withPad: " ", startingAt: 0))  \(entry.alias ?? "-")")
        }
    }
}

/// `matchhost player ID`: a player's account, stats and recent matches, from the server's database.
struct PlayerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "player",
        abstract: "Print a player's account, stats and recent matches from the server's database.",
        discussion: """
            Reads the database in --data (the server may be running). ID is a stored player id, \
            the playerId a Cat Race tutorial client sent on the Cat Race port (its Game Center id), \
            or the first characters of a stored id (at least 4, and only one id may start with \
            them): a player's alias is the first 8 until a game sets another.
            """)

    @Argument(help: "The player id (or its first characters), or a Cat Race tutorial playerId.")
    var id: String

    @Option(help: "How many recent matches (0-1000).")
    var matches = 10

    /// The most bans shown: `matchhost bans --all` lists every one.
    static let maximumBansShown = 100

    @Option(help: "The server's data directory.")
    var data = "data"

    func validate() throws {
        guard (0...1000).contains(self.matches) else { throw ValidationError("--matches must be 0-1000") }
    }

    func run() async throws {
        try await withStoredData(self.data) { store in try await self.show(from: store) }
    }

    private func show(from store: SQLiteGameStore) async throws {
        let (id, tutorialID) = try await StoredPlayerLookup.find(self.id, in: store)
        let player = try await store.player(id: id)
        let history = try await store.matchHistory(playerID: id, limit: self.matches)
        print("player     \(id)")
        if let tutorialID { print("catrace id \(tutorialID) (the Cat Race tutorial's playerId)") }
        if let player {
            print("alias      \(player.alias)" + (player.aliasLocked ? " (locked by the operator: matchhost rename --unlock)" : ""))
            print("created    \(formatted(player.createdAt))")
            print("last seen  \(formatted(player.lastSeenAt))")
            // Every ban, newest first: one lifted or replaced stays in the player's record.
            let records = try await store.banRecords(playerID: id, limit: Self.maximumBansShown + 1)
            for record in records.prefix(Self.maximumBansShown) {
                let ban = record.ban
                let reason = ban.reason.isEmpty ? "" : ": \(ban.reason)"
                switch record.endedEarly {
                case .lifted(let at):
                    print("ban lifted \(formatted(at)) (banned since \(formatted(ban.since)))" + reason)
                case .replaced(let at):
                    print("ban ended  \(formatted(at)), replaced by a later ban (banned since \(formatted(ban.since)))" + reason)
                case nil:
                    if ban.isInForce(at: .now()) {
                        print("banned     since \(formatted(ban.since))" + (ban.until.map { ", until \(formatted($0))" } ?? "") + reason)
                    } else if let until = ban.until {
                        print("ban ended  \(formatted(until)) (banned since \(formatted(ban.since)))" + reason)
                    }
                }
            }
            if records.count > Self.maximumBansShown {
                print("(older bans not shown: matchhost bans --all)")
            }
            for device in try await store.devices(playerID: id) {
                print("device     \(device.deviceID)  linked \(formatted(device.linkedAt))")
            }
        } else {
            print("(no account: a Cat Race port player)")
        }
        for game in storedGames {
            guard let stats = try await store.stats(game: game, playerID: id) else { continue }
            print(
                "\(game.padding(toLength: 10, withPad: " ", startingAt: 0)) played \(stats.played), won \(stats.won), "
                    + "lost \(stats.lost), drawn \(stats.drawn), rating \(String(format: "%.1f", stats.rating))")
        }
        guard !history.isEmpty else { return }
        print("recent matches:")
        for match in history {
            let privacy = match.isPrivate ? "  (private)" : ""
            print("  \(match.id)  \(match.game)  \(formatted(match.startedAt))  \(Self.describe(match.state, for: id))\(privacy)")
        }
    }

    private static func describe(_ state: MatchState, for player: PlayerID) -> String {
        switch state {
        case .running: return "running"
        case .abandoned(let reason): return "abandoned (\(reason))"
        case .finished(let result):
            guard let line = result.players.first(where: { $0.playerID == player }) else { return "finished" }
            return line.outcome.rawValue + (line.summary.map { " (\($0))" } ?? "")
        }
    }
}
